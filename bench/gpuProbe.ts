/**
 * The sondage side of bench/gpu-probe.sh: the prompts both sides are timed on, and prompts per
 * second through sondage's own path to a vLLM server (the openai-compatible provider, candidate
 * logprobs for the probe, a semaphore of calls in flight: what the GPU worker does).
 *
 *   node --import tsx bench/gpuProbe.ts prompts --model Qwen/Qwen3-8B --n 2000 --out prompts.jsonl
 *   node --import tsx bench/gpuProbe.ts online  --model Qwen/Qwen3-8B --base-url http://127.0.0.1:8000/v1 --prompts prompts.jsonl [--in-flight 256]
 *
 * Prompts: the P(True) demo's multiple-choice questions (examples/ptrue/items.jsonl) in its six
 * languages, cycled to `--n`. Generation asks the answer (256 tokens at most, greedy, as Disentangling Question, Response, and Verifier Languages
 * §3.4); the probe asks one token with the first-token logprobs of the True/False label variants
 * (Disentangling Question, Response, and Verifier Languages §3.5), their ids from the battery's tokenizer table for the model.
 */
import { readFile, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { parseArgs } from 'node:util';
import { DEFAULT_LABELS, probeCandidates, TOKENIZER_TABLES, tokenizerFor } from '../lib/batteries/ptrue/read/labels.js';
import type { ChatMessage, GenerationSettings } from '../lib/core/types.js';
import { createProvider } from '../lib/providers/registry.js';
import { Semaphore } from '../lib/run/Semaphore.js';

const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');

export interface BenchPrompt {
  readonly kind: 'generation' | 'probe';
  readonly messages: readonly ChatMessage[];
  readonly settings: GenerationSettings;
}

interface Item {
  readonly kind: string;
  readonly question: Readonly<Record<string, string>>;
  readonly options?: Readonly<Record<string, readonly string[]>>;
}

/** `n` prompts of each kind for `model`; the probe's label ids come from the battery's table. */
export async function benchPrompts(model: string, n: number): Promise<BenchPrompt[]> {
  const family = tokenizerFor(model);
  if (!family) throw new Error(`${model}: no tokenizer table in lib/batteries/ptrue/read/labels.ts for its label ids (qwen, llama 3, gemma 3)`);
  const candidates = probeCandidates(DEFAULT_LABELS, TOKENIZER_TABLES[family]!, { file: 'bench', path: model });
  const items = (await readFile(path.join(ROOT, 'examples/ptrue/items.jsonl'), 'utf8'))
    .split('\n')
    .filter(Boolean)
    .map((l) => JSON.parse(l) as Item)
    .filter((i) => i.kind === 'multiple_choice');
  const cases = items.flatMap((item) =>
    Object.keys(item.question).map((lang) => {
      const options = (item.options?.[lang] ?? []).map((o, k) => `${'ABCD'[k]}. ${o}`).join('\n');
      return `${item.question[lang]}\n${options}`;
    }),
  );
  const out: BenchPrompt[] = [];
  for (let i = 0; i < n; i++) {
    const q = cases[i % cases.length]!;
    out.push({ kind: 'generation', messages: [{ role: 'user', content: `${q}\nAnswer with the letter of the correct option and a short explanation.` }], settings: { max_tokens: 256, temperature: 0 } });
  }
  for (let i = 0; i < n; i++) {
    const q = cases[i % cases.length]!;
    const content = `Question: ${q}\nProposed answer: ${'ABCD'[i % 4]}. It is the correct option.\nIs the proposed answer true or false? Answer with one word: True or False.`;
    out.push({ kind: 'probe', messages: [{ role: 'user', content }], settings: { max_tokens: 1, temperature: 0, candidate_logprobs: { tokens: candidates.tokens, method: 'logprob_token_ids' } } });
  }
  return out;
}

/** Prompts per second of each kind through sondage's provider, `inFlight` calls at once. */
export async function measureOnline(baseUrl: string, model: string, prompts: readonly BenchPrompt[], inFlight = 256): Promise<Record<BenchPrompt['kind'], number>> {
  const provider = await createProvider({ id: 'bench', provider: 'openai-compatible', model, base_url: baseUrl }, { seed: 1, env: {} });
  const out = { generation: 0, probe: 0 };
  for (const kind of ['generation', 'probe'] as const) {
    const these = prompts.filter((p) => p.kind === kind);
    const gate = new Semaphore(inFlight);
    const started = performance.now();
    let failed = 0;
    await Promise.all(
      these.map((p) =>
        gate.run(async () => {
          try {
            await provider.generate({ messages: p.messages, settings: p.settings });
          } catch {
            failed++;
          }
        }),
      ),
    );
    if (failed > 0) throw new Error(`${kind}: ${failed} of ${these.length} calls failed; is the server up and serving ${model}?`);
    out[kind] = these.length / ((performance.now() - started) / 1000);
  }
  return out;
}

async function main(argv: readonly string[]): Promise<void> {
  const [command, ...rest] = argv;
  const { values } = parseArgs({
    args: [...rest],
    options: { model: { type: 'string' }, n: { type: 'string' }, out: { type: 'string' }, 'base-url': { type: 'string' }, prompts: { type: 'string' }, 'in-flight': { type: 'string' } },
  });
  if (!values.model) throw new Error('--model is required (the name vLLM serves)');
  if (command === 'prompts') {
    if (!values.out) throw new Error('--out FILE is required');
    const prompts = await benchPrompts(values.model, Number(values.n ?? 1000));
    await writeFile(values.out, `${prompts.map((p) => JSON.stringify(p)).join('\n')}\n`);
    return;
  }
  if (command === 'online') {
    if (!values['base-url'] || !values.prompts) throw new Error('--base-url and --prompts are required');
    const prompts = (await readFile(values.prompts, 'utf8')).split('\n').filter(Boolean).map((l) => JSON.parse(l) as BenchPrompt);
    process.stdout.write(`${JSON.stringify(await measureOnline(values['base-url'], values.model, prompts, Number(values['in-flight'] ?? 256)))}\n`);
    return;
  }
  throw new Error('usage: gpuProbe.ts prompts|online …');
}

if (process.argv[1] && import.meta.url === new URL(`file://${process.argv[1]}`).href) {
  main(process.argv.slice(2)).catch((err: unknown) => {
    process.stderr.write(`${err instanceof Error ? err.message : String(err)}\n`);
    process.exitCode = 1;
  });
}
