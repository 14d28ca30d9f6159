/**
 * Each model's probe (Disentangling Question, Response, and Verifier Languages §3.5): how its verify replies are asked for and read.
 *
 * - A model served by vLLM (`openai-compatible`) whose tokenizer is in the battery's table (by its
 *   provider model name, or named in `design.probe.tokenizers`), or given its ids there: vLLM's
 *   `candidate_logprobs` with the first-token id of every label variant, exact or bounded
 *   (lib/providers/openai/OpenAIChatProvider.ts). One generated token.
 * - A simulated model: the same, with placeholder ids (the simulator answers by surface form).
 * - Any other model (an API without candidate logprobs): the first token's top-k (`top_logprobs`),
 *   read by surface form; a label outside the top-k is then missing and the reading `invalid`.
 */
import { CampaignFileError, formatIssues } from '../../api/battery.js';
import type { FileIssue, ModelRef } from '../../api/battery.js';
import type { ProbeDesign } from './design.js';
import type { ModelProbe } from './plan.js';
import { probeCandidates, TOKENIZER_TABLES, tokenizerFor } from './read/labels.js';

/** Placeholder ids for simulated models: one single-token id per surface form. */
function simulatedTable(labels: ProbeDesign['labels']): Record<string, number[]> {
  return Object.fromEntries([...labels.true, ...labels.false].map((s, i) => [s, [1_000 + i]]));
}

/**
 * The probe of every model under test.
 * @throws CampaignFileError naming `design.probe.tokenizers.<model>` for an unknown tokenizer, a
 *   label without ids, or a True and a False label that share a first token.
 */
export function buildProbes(models: readonly ModelRef[], probe: ProbeDesign, file: string): Record<string, ModelProbe> {
  const issues: FileIssue[] = [];
  const out: Record<string, ModelProbe> = {};
  const topK = (prefix: readonly string[]): ModelProbe => ({
    settings: { max_tokens: 1, temperature: 0, logprobs: true, top_logprobs: probe.top_logprobs },
    labels: { true: probe.labels.true, false: probe.labels.false, prefix },
    via: 'top-k',
  });
  for (const m of models) {
    const path = `design.probe.tokenizers.${m.id}`;
    const named = probe.tokenizers[m.id];
    let table: Readonly<Record<string, readonly number[]>> | null = null;
    if (typeof named === 'string') {
      table = TOKENIZER_TABLES[named] ?? null;
      if (!table) issues.push({ file, path, message: `unknown tokenizer "${named}"; use one of ${Object.keys(TOKENIZER_TABLES).join(', ')}, or give label → token ids` });
    } else if (named) table = named;
    else if (m.provider === 'simulated') table = simulatedTable(probe.labels);
    else if (m.provider === 'openai-compatible') {
      const family = tokenizerFor(m.model);
      table = family ? TOKENIZER_TABLES[family]! : null;
    }
    if (!table) {
      if (typeof named !== 'string') out[m.id] = topK([]);
      continue;
    }
    let candidates;
    try {
      candidates = probeCandidates(probe.labels, table, { file, path });
    } catch (err) {
      if (err instanceof CampaignFileError) issues.push(...err.issues);
      else throw err;
      continue;
    }
    const vllm = m.provider === 'openai-compatible' || m.provider === 'simulated';
    if (!vllm || probe.method === 'top_logprobs') {
      out[m.id] = topK(candidates.prefix);
      continue;
    }
    out[m.id] = {
      settings: {
        max_tokens: 1,
        temperature: 0,
        // allowed_token_ids reads the candidates from the top-k: ask for the design's k.
        ...(probe.method === 'allowed_token_ids' ? { top_logprobs: probe.top_logprobs } : {}),
        candidate_logprobs: { tokens: candidates.tokens, method: probe.method },
      },
      labels: { true: candidates.true, false: candidates.false, prefix: candidates.prefix },
      via: 'candidates',
    };
  }
  if (issues.length > 0) throw new CampaignFileError(`${file}: the probe's label tokens\n${formatIssues(issues)}`, issues);
  return out;
}
