/**
 * P(True) through the core on a local server speaking vLLM's OpenAI-compatible wire format
 * (docs/studies/ptrue.md): generate asks with thinking switched off through
 * the chat template, verify asks one token with the candidate ids of Qwen3's label variants; a
 * server that dies mid-phase leaves the rest pending, and the next run asks exactly the rest — one
 * ok reply per item, cost counted once. (Labels outside the top-k and multi-token labels, through
 * the provider: verifyWire.test.ts.)
 */
import path from 'node:path';
import { writeFile } from 'node:fs/promises';
import { stringify } from 'yaml';
import { afterEach, describe, expect, it } from 'vitest';
import { runCampaign } from '../../../lib/run/runCampaign.js';
import { REPO_ROOT, loadContext, tempDir } from '../../helpers/campaigns.js';
import { ledgerSnapshot, okCounts, readResult, storedReplies } from '../../helpers/runData.js';
import { startWireServer, type RecordedRequest, type WireServer } from '../../providers/helpers/wireServer.js';

const QWEN = { TRUE: 2514, SPACE_TRUE: 3007, FALSE: 4049, SPACE_FALSE: 3557 };
const RETRY = { maxAttempts: 2, baseDelayMs: 1, maxDelayMs: 2, timeoutMs: 5_000 };

interface Body {
  model: string;
  max_tokens?: number;
  messages: { content: string }[];
  logprob_token_ids?: number[];
  chat_template_kwargs?: Record<string, unknown>;
}

function completion(model: string, content: string, logprobs: unknown = null, tokens = 3) {
  return {
    id: 'chatcmpl-local',
    object: 'chat.completion',
    created: 1_764_489_600,
    model,
    choices: [{ index: 0, message: { role: 'assistant', content }, logprobs, finish_reason: tokens === 1 ? 'length' : 'stop' }],
    usage: { prompt_tokens: 100, completion_tokens: tokens, total_tokens: 100 + tokens },
  };
}

/** A Qwen3 on vLLM: answers B to multiple choice; for verify, the candidate logprobs asked for (True ahead). */
function vllm(req: RecordedRequest) {
  const body = req.body as Body;
  if (body.max_tokens !== 1) return { json: completion(body.model, 'B. Explanation follows.') };
  const table: Record<number, number> = { [QWEN.TRUE]: -0.3, [QWEN.SPACE_TRUE]: -2.5, [QWEN.FALSE]: -1.5, [QWEN.SPACE_FALSE]: -3 };
  const entries = (body.logprob_token_ids ?? []).map((id) => ({ token: `token_id:${id}`, logprob: table[id] ?? -20, bytes: null }));
  return { json: completion(body.model, 'True', { content: [{ token: `token_id:${QWEN.TRUE}`, logprob: -0.3, bytes: null, top_logprobs: entries }] }, 1) };
}

let server: WireServer | undefined;
let cleanup: (() => Promise<void>) | undefined;
afterEach(async () => {
  await server?.close();
  await cleanup?.();
});

async function campaign(dir: string, url: string): Promise<string> {
  const file = path.join(dir, 'ptrue-vllm.yaml');
  await writeFile(
    file,
    stringify({
      name: 'ptrue-vllm',
      seed: 3,
      budget_usd: 1,
      data_dir: 'data',
      concurrency: 1,
      battery: 'ptrue',
      design: { items: path.join(REPO_ROOT, 'examples/ptrue/items.jsonl'), benchmarks: ['mmmlu-demo'], item_limit: 3, languages: ['en', 'fr'] },
      models: [{ id: 'qwen', provider: 'openai-compatible', model: 'Qwen/Qwen3-8B', base_url: `${url}/v1`, price: { input_per_mtok: 1, output_per_mtok: 1 } }],
    }),
  );
  return file;
}

describe('P(True) on a vLLM wire server, through the run loop', () => {
  it('sends thinking off and the candidate ids, reads P(True), and after the server dies mid-verify the next run asks only the rest', async () => {
    // 3 items × 2 question × 2 response languages = 12 generate; × 2 verifier languages = 24 verify.
    let served = 0;
    const dieAfter = 12 + 10;
    server = await startWireServer([{ from: (req) => (++served > dieAfter ? { drop: true } : vllm(req)) }]);
    const tmp = await tempDir('ptrue-vllm');
    cleanup = tmp.cleanup;
    const file = await campaign(tmp.dir, server.url);

    const first = await runCampaign(await loadContext(file), { retry: RETRY, skipAnalysis: true });
    const verify1 = first.phases.find((p) => p.phase === 'verify')!;
    expect(first.phases.find((p) => p.phase === 'generate')).toMatchObject({ items: 12, done: 12 });
    expect(verify1.done).toBe(10);
    expect(verify1.done + verify1.pending + verify1.failed).toBe(24);

    const bodies = server.requests.map((r) => r.body as Body);
    const generate = bodies.filter((b) => b.max_tokens !== 1);
    expect(generate).toHaveLength(12);
    // Disentangling Question, Response, and Verifier Languages §3.4: greedy, at most 256 new tokens, thinking disabled (Qwen3's chat-template switch).
    for (const b of generate) expect(b).toMatchObject({ temperature: 0, max_tokens: 256, chat_template_kwargs: { enable_thinking: false } });
    const verifyBodies = bodies.filter((b) => b.max_tokens === 1);
    expect(verifyBodies[0]!.logprob_token_ids!.slice(0, 2)).toEqual([QWEN.TRUE, QWEN.SPACE_TRUE]);
    expect(verifyBodies[0]!.messages.at(-1)!.content).toContain('B. Explanation follows.');
    await server.close();

    // The server is back: only the verify items without an ok reply are asked.
    server = await startWireServer([{ from: vllm }]);
    const again = await runCampaign(await loadContext(await campaign(tmp.dir, server.url)), { retry: RETRY });
    expect(server.requests.every((r) => (r.body as Body).max_tokens === 1)).toBe(true);
    expect(server.requests).toHaveLength(24 - 10);
    expect(again.phases.find((p) => p.phase === 'verify')).toMatchObject({ done: 14, pending: 0, failed: 0 });

    const ctx = await loadContext(file);
    for (const phase of ['generate', 'verify']) {
      const ok = okCounts(await storedReplies(ctx.dataDir, 'ptrue-vllm', phase));
      expect(ok.size, phase).toBe(phase === 'generate' ? 12 : 24);
      expect([...ok.values()].every((c) => c === 1), phase).toBe(true);
    }
    const all = [...(await storedReplies(ctx.dataDir, 'ptrue-vllm', 'generate')), ...(await storedReplies(ctx.dataDir, 'ptrue-vllm', 'verify'))];
    const ledger = await ledgerSnapshot(ctx.dataDir, 'ptrue-vllm');
    expect(ledger.budget.spent_usd).toBeCloseTo(all.reduce((s, r) => s + r.cost_usd, 0), 9);
    expect(ledger.budget.reserved_usd).toBe(0);

    // P(True) = max True vs max False variant: 1 / (1 + exp(-0.3 - (-1.5))) in every cell.
    const cells = (await readResult(ctx.dataDir, 'ptrue-vllm', 'cells.csv')).trim().split(/\r?\n/);
    const head = cells[0]!.split(',');
    expect(cells).toHaveLength(1 + 2 * 2 * 2);
    for (const line of cells.slice(1)) expect(Number(line.split(',')[head.indexOf('mean_confidence')])).toBeCloseTo(1 / (1 + Math.exp(-1.2)), 6);
  }, 60_000);
});
