import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { runCampaign } from '../../lib/run/runCampaign.js';
import { chatCompletion, type RecordedRequest } from '../providers/helpers/wireServer.js';
import { WIRE_KEY as KEY, WIRE_KEY_ENV, wireCampaign, type WireCampaign } from '../helpers/wireCampaign.js';
import { loadContext, tempDir, writeCampaign } from '../helpers/campaigns.js';
import { readParquet, tableGlob } from '../../lib/store/index.js';
import { expectOneOkEach, ledgerSnapshot, storedReplies } from '../helpers/runData.js';

/** Answers yes/no-first and letter items the way the reading map expects. */
function completion(req: RecordedRequest) {
  const prompt = (req.body as { messages: { content: string }[] }).messages.at(-1)?.content ?? '';
  return chatCompletion(req, /A:|B:/.test(prompt) ? 'A' : 'Yes. I think so, because it hurt someone.');
}

describe('a campaign on an OpenAI-compatible endpoint', () => {
  let wire: WireCampaign | undefined;
  let cleanup: (() => Promise<void>) | undefined;
  afterEach(async () => {
    await wire?.close();
    await cleanup?.();
    delete process.env[WIRE_KEY_ENV];
  });

  it('stores one ok reply per item through 503s and 429s, counts cost once, and never stores the key', async () => {
    // Prepare: every 5th request fails with 503, every 7th with 429 + retry-after 0 (about 3 in 10
    // attempts fail; 12 attempts make a run of failures that exhausts them vanishingly rare).
    let n = 0;
    wire = await wireCampaign(
      [
        {
          from: (req) => {
            n++;
            if (n % 5 === 0) return { status: 503, json: { error: { message: 'overloaded', type: 'server_error' } } };
            if (n % 7 === 0) return { status: 429, headers: { 'retry-after': '0' }, json: { error: { message: 'slow down', type: 'rate_limit' } } };
            return completion(req);
          },
        },
      ],
      { rpm: 100_000, price: { input_per_mtok: 1, output_per_mtok: 2 } },
      (doc) => {
        doc.design['languages'] = ['en'];
        doc.design['forms'] = ['plain'];
        doc.design['constraints'] = ['yesno', 'label'];
      },
    );
    const ctx = await loadContext(wire.file);

    // Act
    const summary = await runCampaign(ctx, { retry: { maxAttempts: 12, baseDelayMs: 1, maxDelayMs: 5, timeoutMs: 10_000 }, skipAnalysis: true });

    // Assess
    const generate = summary.phases.find((p) => p.phase === 'generate')!;
    const all = await readParquet<{ item_id: string; status: string; provider: string; error_class: string | null; error_message: string | null; settings_json: string }>(
      tableGlob(ctx.dataDir, ctx.campaign.name, 'generate', 'replies'),
    );
    const okIds = new Set(all.filter((r) => r.status === 'ok').map((r) => r.item_id));
    expect(all.filter((r) => !okIds.has(r.item_id))).toEqual([]);
    expect(generate.failed).toBe(0);
    expect(generate.done).toBe(generate.items);
    const rows = await storedReplies(ctx.dataDir, ctx.campaign.name, 'generate');
    const ok = expectOneOkEach(rows, generate.items);
    const errors = rows.filter((r) => r.status === 'error');
    expect(errors.length).toBeGreaterThan(0);
    expect(all.every((r) => r.provider.startsWith('openai-compatible/'))).toBe(true);
    // The settings actually sent are stored on every reply.
    expect(JSON.parse(all.find((r) => r.status === 'ok')!.settings_json)).toMatchObject({ max_tokens: 120, temperature: 1 });
    // Cost: 120 prompt + 12 completion tokens at $1/$2 per million, once per ok reply.
    const ledger = await ledgerSnapshot(ctx.dataDir, ctx.campaign.name);
    expect(generate.costUsd).toBeCloseTo((ok.size * (120 * 1 + 12 * 2)) / 1e6, 9);
    expect(ledger.budget.spent_usd).toBeCloseTo(summary.phases.reduce((sum, p) => sum + p.costUsd, 0), 9);
    expect(ledger.budget.reserved_usd).toBe(0);
    // The key went on the wire, and nowhere else.
    expect(wire.server.requests.some((r) => String(r.headers['authorization']).includes(KEY))).toBe(true);
    expect(JSON.stringify(all)).not.toContain(KEY);
  });

  it('refuses mode: batch on a provider without a batch API before anything is written, naming the file and the entry', async () => {
    process.env[WIRE_KEY_ENV] = KEY;
    const tmp = await tempDir('batch-refused');
    cleanup = tmp.cleanup;
    const file = await writeCampaign(tmp.dir, 'small.yaml', (doc) => {
      doc.models = [
        {
          id: 'local',
          provider: 'openai-compatible',
          model: 'qwen3-8b',
          base_url: 'http://127.0.0.1:9/v1',
          api_key_env: WIRE_KEY_ENV,
          mode: 'batch',
          price: { input_per_mtok: 0.4, output_per_mtok: 1.6, batch_discount: 0.5 },
        },
      ];
    });

    await expect(loadContext(file)).rejects.toThrow(/campaign\.yaml: models\[0\]\.mode: batch needs a provider with a batch API \(openai, anthropic, bedrock\); use sync for openai-compatible/);
    expect(existsSync(join(tmp.dir, 'data'))).toBe(false);
  });
});
