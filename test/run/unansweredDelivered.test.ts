import { readFile, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { itemMaxCost } from '../../lib/run/planCampaign.js';
import { runCampaign } from '../../lib/run/runCampaign.js';
import { loadContext, rootItems, smallestDesign, type CampaignDoc } from '../helpers/campaigns.js';
import { closedPort } from '../helpers/localServer.js';
import { ledgerSnapshot, storedReplies } from '../helpers/runData.js';
import { wireCampaign, type WireCampaign } from '../helpers/wireCampaign.js';
import { anthropicMessage, chatCompletion, chatRefusal, type RecordedRequest, type WireReply } from '../providers/helpers/wireServer.js';

// A request delivered and not usably answered (a gateway's 504, a connection the server closed
// after reading the request) may have been run and billed upstream: each such attempt keeps its
// reservation charged, as possibly billed, against the cap, exactly as a timed-out one does
// (unansweredAttempts.test.ts); its retry reserves again. A request that never left (nothing
// listens on the port) is not counted.

const PRICE = { input_per_mtok: 1, output_per_mtok: 2 };
const FAST = { maxAttempts: 3, baseDelayMs: 1, maxDelayMs: 2, timeoutMs: 20_000 };

let wire: WireCampaign | undefined;
afterEach(async () => wire?.close());

interface Usage {
  readonly prompt_tokens: number;
  readonly completion_tokens: number;
}

/** A reply in each adapter's wire format. */
const SUCCESS: Record<string, (req: RecordedRequest, usage: Usage) => { json: unknown }> = {
  'openai-compatible': (req, usage) => chatCompletion(req, 'Yes.', usage),
  anthropic: (_req, usage) => anthropicMessage('Yes.', { input_tokens: usage.prompt_tokens, output_tokens: usage.completion_tokens }),
};

/** A 200 in which the model refused, in each adapter's wire format, with the usage it was billed for. */
const REFUSAL: Record<string, (req: RecordedRequest, usage: Usage) => { json: unknown }> = {
  'openai-compatible': (req, usage) => chatRefusal(req, usage),
  anthropic: (_req, usage) => anthropicMessage('I cannot help with that.', { input_tokens: usage.prompt_tokens, output_tokens: usage.completion_tokens }, 'refusal'),
};

/**
 * One story in English, plain yes/no, one generation each, through the `name` adapter: each prompt
 * answered by a 504 or a dropped connection (`first`) the first time it arrives, by a reply after
 * that; or sent to a port where nothing listens (`refused`).
 */
async function run(name: string, first: 'gateway_timeout' | 'drop' | 'refused' | 'refusal', opts: { usage?: Usage; capOverMaxCost?: number } = {}) {
  const usage = opts.usage ?? { prompt_tokens: 40, completion_tokens: 2 };
  const seen = new Set<string>();
  const reply: WireReply = {
    from: (req) => {
      const key = JSON.stringify((req.body as { messages?: unknown }).messages);
      if (seen.has(key)) return SUCCESS[name]!(req, usage);
      seen.add(key);
      if (first === 'refusal') return REFUSAL[name]!(req, usage);
      return first === 'drop' ? { drop: true } : { status: 504, headers: { 'content-type': 'text/html' }, raw: '<html><body><h1>504 Gateway Time-out</h1></body></html>' };
    },
  };
  const refusingPort = await closedPort();
  wire = await wireCampaign([reply], { rpm: 100_000, price: PRICE }, (doc: CampaignDoc) => {
    smallestDesign(doc);
    const entry = doc.models[0]!;
    const origin = first === 'refused' ? `http://127.0.0.1:${refusingPort}` : String(entry['base_url']).replace(/\/v1$/, '');
    // Anthropic's SDK adds /v1 itself; the OpenAI one expects it in the base URL.
    Object.assign(entry, name === 'anthropic' ? { provider: 'anthropic', model: 'claude-haiku-4-5', base_url: origin } : { base_url: `${origin}/v1` });
  });
  let ctx = await loadContext(wire.file);
  expect(ctx.campaign.models[0]!.provider).toBe(name);
  const items = rootItems(ctx, ctx.campaign.models[0]!, 'en');
  if (opts.capOverMaxCost !== undefined) {
    // The cap as a multiple of what the items may cost at most: their first attempts fit, not all their retries.
    const cap = opts.capOverMaxCost * items.reduce((s, i) => s + itemMaxCost(i, PRICE), 0);
    await writeFile(wire.file, (await readFile(wire.file, 'utf8')).replace(/^budget_usd: .*$/m, `budget_usd: ${cap}`));
    ctx = await loadContext(wire.file);
    expect(ctx.campaign.budget_usd).toBeCloseTo(cap, 12);
  }
  const dataDir = path.join(wire.dir, 'data');
  const summary = await runCampaign(ctx, { dataDir, allowPartial: true, skipAnalysis: true, retry: FAST });
  return { ctx, items, dataDir, summary };
}

describe.each(Object.keys(SUCCESS))('%s: attempts delivered and not usably answered are possibly billed', (name) => {
  it.each(['gateway_timeout', 'drop'] as const)('%s, then a reply: each failed attempt keeps its reservation charged; spend + possibly billed stays within the cap', async (first) => {
    const { ctx, items, dataDir, summary } = await run(name, first);

    const { budget, generate } = await ledgerSnapshot(dataDir, ctx.campaign.name);
    expect(generate.done).toBe(items.length);
    const rows = await storedReplies(dataDir, ctx.campaign.name, 'generate');
    const failed = rows.filter((r) => r.status === 'error');
    // One failed attempt an item (its first), each then answered.
    expect(failed.map((r) => r.item_id).sort()).toEqual(items.map((i) => i.item_id).sort());
    expect(failed.every((r) => r.error_class === (first === 'drop' ? 'connection' : 'server_error'))).toBe(true);
    const reserved = new Map(items.map((i) => [i.item_id, itemMaxCost(i, PRICE)]));
    const expected = failed.reduce((s, r) => s + reserved.get(r.item_id)!, 0);
    expect(expected).toBeGreaterThan(0);
    expect(budget.possibly_billed_usd).toBeCloseTo(expected, 12);
    expect(summary.possiblyBilledUsd).toBeCloseTo(expected, 12);
    expect(budget.reserved_usd).toBe(0);
    expect(budget.spent_usd).toBeGreaterThan(0);
    expect(budget.spent_usd + budget.possibly_billed_usd).toBeLessThanOrEqual(budget.cap_usd);
  });

  it('a cap that holds the first attempts and not all their retries: what the provider may bill (spend, and each 504 attempt at its reservation) stays within it', async () => {
    // Each reply costs about 90 % of an item's reservation; the cap is 1.3 times all the reservations.
    const { ctx, items, dataDir } = await run(name, 'gateway_timeout', { usage: { prompt_tokens: 200, completion_tokens: 100 }, capOverMaxCost: 1.3 });

    const { budget, generate } = await ledgerSnapshot(dataDir, ctx.campaign.name);
    const rows = await storedReplies(dataDir, ctx.campaign.name, 'generate');
    // Every request the server saw is a stored attempt: the ledger below accounts for all of them.
    expect(wire!.server.requests).toHaveLength(rows.length);
    const reserved = new Map(items.map((i) => [i.item_id, itemMaxCost(i, PRICE)]));
    const unanswered = rows.filter((r) => r.status === 'error').reduce((s, r) => s + reserved.get(r.item_id)!, 0);
    expect(budget.possibly_billed_usd).toBeCloseTo(unanswered, 12);
    // The most the provider may bill: what the replies cost, and every 504 attempt at its reservation.
    expect(budget.spent_usd + unanswered).toBeLessThanOrEqual(budget.cap_usd + 1e-12);
    // The cap held retries back: not every item was answered.
    expect(generate.done).toBeGreaterThan(0);
    expect(generate.done).toBeLessThan(items.length);
  });

  it('a refusal (answered and billed, not a reply): its row is priced by the usage it came with, the ledger spends it, nothing is possibly billed, and it is not asked again', async () => {
    const usage = { prompt_tokens: 40, completion_tokens: 7 };
    const { ctx, items, dataDir } = await run(name, 'refusal', { usage });
    const { budget, generate } = await ledgerSnapshot(dataDir, ctx.campaign.name);
    const rows = await storedReplies(dataDir, ctx.campaign.name, 'generate');
    expect(rows).toHaveLength(items.length);
    expect(generate.failed).toBe(items.length);
    const each = (usage.prompt_tokens * PRICE.input_per_mtok + usage.completion_tokens * PRICE.output_per_mtok) / 1e6;
    for (const r of rows) expect(r).toMatchObject({ status: 'error', error_class: 'refusal', cost_usd: expect.closeTo(each, 15) });
    expect(budget.spent_usd).toBeCloseTo(each * items.length, 12);
    expect(budget.possibly_billed_usd).toBe(0);
    expect(budget.reserved_usd).toBe(0);
  });

  it('a closed port (the request never left): nothing is possibly billed', async () => {
    const { ctx, items, dataDir } = await run(name, 'refused');
    const { budget, generate } = await ledgerSnapshot(dataDir, ctx.campaign.name);
    expect(generate.failed).toBe(items.length);
    const rows = await storedReplies(dataDir, ctx.campaign.name, 'generate');
    expect(rows).toHaveLength(items.length * FAST.maxAttempts);
    expect(rows.every((r) => r.error_class === 'connection')).toBe(true);
    expect(budget.possibly_billed_usd).toBe(0);
    expect(budget.spent_usd).toBe(0);
    expect(budget.reserved_usd).toBe(0);
  });
});
