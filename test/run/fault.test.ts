import { afterEach, describe, expect, it } from 'vitest';
import { runCampaign } from '../../lib/run/runCampaign.js';
import { loadContext } from '../helpers/campaigns.js';
import { expectOneOkEach, ledgerSnapshot, storedReplies } from '../helpers/runData.js';
import { wireCampaign, type WireCampaign } from '../helpers/wireCampaign.js';
import { chatCompletion, type WireReply } from '../providers/helpers/wireServer.js';

/** The faults, in the order the server cycles through them, and the error class each must be stored as. */
const FAULTS = [
  { kind: '429', errorClass: 'rate_limit' },
  { kind: '500', errorClass: 'server_error' },
  { kind: '503', errorClass: 'server_error' },
  { kind: 'drop', errorClass: 'connection' },
  { kind: 'hang', errorClass: 'timeout' },
  { kind: 'malformed', errorClass: 'malformed_response' },
] as const;
type Fault = (typeof FAULTS)[number]['kind'];

/**
 * An OpenAI-compatible chat endpoint that fails every fifth call (20 %), cycling through the
 * faults a provider meets: 429 with retry-after, 500, 503, a dropped connection, a
 * response that never comes, and a 200 whose body is not JSON. `served` counts what it did.
 */
function faultyEndpoint(served: Map<Fault | 'ok', number>): WireReply {
  let n = 0;
  return {
    from: (req) => {
      n++;
      const fault = n % 5 === 0 ? FAULTS[(n / 5 - 1) % FAULTS.length]!.kind : undefined;
      served.set(fault ?? 'ok', (served.get(fault ?? 'ok') ?? 0) + 1);
      switch (fault) {
        case '429':
          return { status: 429, headers: { 'retry-after-ms': '5' }, json: { error: { message: 'slow down', type: 'rate_limit' } } };
        case '500':
          return { status: 500, json: { error: { message: 'internal error', type: 'server_error' } } };
        case '503':
          return { status: 503, json: { error: { message: 'overloaded', type: 'server_error' } } };
        case 'drop':
          return { drop: true };
        case 'hang':
          return { hang: true };
        case 'malformed':
          return { raw: '{"id": "chatcmpl-torn", "choices": [{"index": 0, "mess' };
        default: {
          const prompt = (req.body as { messages: { content: string }[] }).messages.at(-1)?.content ?? '';
          return chatCompletion(req, /A:|B:/.test(prompt) ? 'A' : 'Yes. I think so, because it hurt someone.', { prompt_tokens: 100, completion_tokens: 10 });
        }
      }
    },
  };
}

describe('a campaign against an endpoint that fails 20 % of calls', () => {
  let wire: WireCampaign | undefined;
  afterEach(async () => wire?.close());

  it('stores one ok reply per item, records every failure with its class, and counts cost once', async () => {
    // Prepare
    const count = new Map<Fault | 'ok', number>();
    wire = await wireCampaign([faultyEndpoint(count)], { id: 'flaky', rpm: 1_000_000, price: { input_per_mtok: 1, output_per_mtok: 2 } }, (doc) => {
      doc.design['languages'] = ['en', 'de'];
      doc.design['forms'] = ['plain', 'negint'];
      doc.design['constraints'] = ['yesno', 'label'];
    });
    const ctx = await loadContext(wire.file);

    // Act: short backoff. The attempt timeout is what ends a hung call, so it must stay far above
    // what a real answer takes on a loaded machine (at 400 ms, every 429 of a run could time out
    // first and the class go unseen); a hung call costs it once, beside the other calls.
    const summary = await runCampaign(ctx, { retry: { maxAttempts: 10, baseDelayMs: 1, maxDelayMs: 10, timeoutMs: 3_000 }, skipAnalysis: true });

    // Assess: every item done exactly once.
    const generate = summary.phases.find((p) => p.phase === 'generate')!;
    expect(generate.items).toBeGreaterThan(20);
    expect(generate.done).toBe(generate.items);
    expect(generate.failed).toBe(0);
    const rows = await storedReplies(ctx.dataDir, ctx.campaign.name, 'generate');
    const ok = expectOneOkEach(rows, generate.items);
    // Every request the server saw is stored once: as the ok reply, or as an error row of the
    // fault's class. Under load a slow answer may pass the timeout first and be stored as a
    // timeout instead, so the classes other than timeout are bounds and the totals are exact.
    const served = (kinds: readonly (Fault | 'ok')[]) => kinds.reduce((s, k) => s + (count.get(k) ?? 0), 0);
    const stored = new Map<string, number>();
    for (const r of rows) if (r.status === 'error') stored.set(r.error_class ?? 'null', (stored.get(r.error_class ?? 'null') ?? 0) + 1);
    expect(rows.length).toBe(served(['ok', ...FAULTS.map((f) => f.kind)]));
    expect([...stored.keys()].sort()).toEqual([...new Set(FAULTS.map((f) => f.errorClass))].sort());
    expect(ok.size).toBeLessThanOrEqual(served(['ok']));
    for (const cls of new Set(FAULTS.map((f) => f.errorClass))) {
      const kinds = FAULTS.filter((f) => f.errorClass === cls).map((f) => f.kind);
      if (cls === 'timeout') expect(stored.get(cls)).toBeGreaterThanOrEqual(served(kinds));
      else expect(stored.get(cls), cls).toBeLessThanOrEqual(served(kinds));
    }
    for (const f of FAULTS) expect(count.get(f.kind), f.kind).toBeGreaterThan(0);
    // Errors cost nothing; ok replies 100 prompt + 10 completion tokens at $1/$2 per million.
    expect(rows.filter((r) => r.status === 'error').every((r) => r.cost_usd === 0)).toBe(true);
    const okCost = rows.filter((r) => r.status === 'ok').reduce((s, r) => s + r.cost_usd, 0);
    expect(okCost).toBeCloseTo((ok.size * (100 * 1 + 10 * 2)) / 1e6, 12);
    // The generate phase is all the spending on the real endpoint; the simulated judge adds its own.
    const ledger = await ledgerSnapshot(ctx.dataDir, ctx.campaign.name);
    const judgeRows = await storedReplies(ctx.dataDir, ctx.campaign.name, 'judge');
    const judgeCost = judgeRows.filter((r) => r.status === 'ok').reduce((s, r) => s + r.cost_usd, 0);
    expect(ledger.budget.spent_usd).toBeCloseTo(okCost + judgeCost, 12);
    expect(ledger.budget.reserved_usd).toBe(0);
    expect(ledger.generate).toEqual({ pending: 0, done: generate.items, failed: 0 });
  });
});
