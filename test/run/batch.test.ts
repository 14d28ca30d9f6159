import { afterEach, describe, expect, it } from 'vitest';
import { runCampaign, type RunOptions } from '../../lib/run/runCampaign.js';
import { batchClientsFor, stopCampaign } from '../../lib/run/stopCampaign.js';
import { EmbeddedLedger, readParquet, tableGlob } from '../../lib/store/index.js';
import type { BatchIntent, BatchRecord } from '../../lib/store/types.js';
import { loadContext, tempDir, writeCampaign } from '../helpers/campaigns.js';
import { expectOneOkEach, ledgerSnapshot, storedReplies } from '../helpers/runData.js';
import { USAGE, startAnthropicBatchServer, startOpenAIBatchServer, type BatchServer, type BatchServerOptions } from './batchServers.js';

const KEY = 'sk-test-batch-run-0000000000000000';
const PRICE = { input_per_mtok: 1, output_per_mtok: 2, cached_input_per_mtok: 0.25, batch_discount: 0.5 };
/** What one ok reply costs at the batch price, its cached prompt tokens at the cached-input price. */
const REPLY_COST =
  (((USAGE.input - USAGE.cached) * PRICE.input_per_mtok + USAGE.cached * PRICE.cached_input_per_mtok + USAGE.output * PRICE.output_per_mtok) * PRICE.batch_discount) / 1e6;

const PROVIDERS = [
  { provider: 'openai', model: 'gpt-4.1-mini', start: startOpenAIBatchServer, baseUrl: (url: string) => `${url}/v1` },
  { provider: 'anthropic', model: 'claude-haiku-4-5', start: startAnthropicBatchServer, baseUrl: (url: string) => url },
] as const;
type ProviderCase = (typeof PROVIDERS)[number];

let server: BatchServer | undefined;
let cleanup: (() => Promise<void>) | undefined;
afterEach(async () => {
  await server?.close();
  server = undefined;
  await cleanup?.();
  cleanup = undefined;
  delete process.env['SONDAGE_BATCH_KEY'];
});

/** A two-language campaign whose one respondent runs with `mode: batch` on the local server. */
async function setup(p: ProviderCase, options: BatchServerOptions = {}) {
  server = await p.start(options);
  process.env['SONDAGE_BATCH_KEY'] = KEY;
  const tmp = await tempDir(`batch-${p.provider}`);
  cleanup = tmp.cleanup;
  const file = await writeCampaign(tmp.dir, 'small.yaml', (doc) => {
    doc.design['languages'] = ['en', 'de'];
    doc.design['forms'] = ['plain'];
    doc.design['constraints'] = ['yesno', 'label'];
    doc.models = [{ id: 'batched', provider: p.provider, model: p.model, base_url: p.baseUrl(server!.url), api_key_env: 'SONDAGE_BATCH_KEY', mode: 'batch', price: PRICE }];
  });
  return loadContext(file);
}

const fast = (extra: RunOptions = {}): RunOptions => ({ skipAnalysis: true, batch: { pollMs: 1, ...extra.batch }, ...extra });

async function intents(dataDir: string, campaign: string): Promise<BatchIntent[]> {
  const ledger = new EmbeddedLedger(dataDir);
  try {
    return await ledger.campaignBatchIntents(campaign);
  } finally {
    await ledger.close();
  }
}

async function openBatches(dataDir: string, campaign: string): Promise<BatchRecord[]> {
  const ledger = new EmbeddedLedger(dataDir);
  try {
    return [...(await ledger.openBatches(campaign, 'generate', 'batched', 'en')), ...(await ledger.openBatches(campaign, 'generate', 'batched', 'de'))];
  } finally {
    await ledger.close();
  }
}

/** Every item has exactly one ok reply, priced at the batch price, and the ledger agrees to the cent. */
async function expectComplete(ctx: Awaited<ReturnType<typeof loadContext>>, items: number) {
  const rows = await storedReplies(ctx.dataDir, ctx.campaign.name, 'generate');
  expectOneOkEach(rows, items);
  const okCost = rows.filter((r) => r.status === 'ok').reduce((s, r) => s + r.cost_usd, 0);
  expect(okCost).toBeCloseTo(items * REPLY_COST, 12);
  const judgeRows = await storedReplies(ctx.dataDir, ctx.campaign.name, 'judge');
  const judgeCost = judgeRows.filter((r) => r.status === 'ok').reduce((s, r) => s + r.cost_usd, 0);
  const ledger = await ledgerSnapshot(ctx.dataDir, ctx.campaign.name);
  expect(ledger.budget.spent_usd).toBeCloseTo(okCost + judgeCost, 12);
  expect(ledger.budget.reserved_usd).toBe(0);
  expect(ledger.generate).toEqual({ pending: 0, done: items, failed: 0 });
  expect(await openBatches(ctx.dataDir, ctx.campaign.name)).toEqual([]);
  expect(await intents(ctx.dataDir, ctx.campaign.name)).toEqual([]);
  return rows;
}

/** No request went into two batches, and every item went into one. */
function expectSentOnce(items: number) {
  const sent = server!.created.flat();
  expect(new Set(sent).size).toBe(sent.length);
  expect(sent.length).toBe(items);
}

describe.each(PROVIDERS)('mode: batch on $provider', (p) => {
  it('submits split batches, follows them to the end and stores every result at the batch price', async () => {
    const ctx = await setup(p);
    const submitted: BatchRecord[] = [];
    const summary = await runCampaign(ctx, fast({ batch: { pollMs: 1, maxRequests: 5, onSubmitted: (r) => submitted.push(r) } }));

    const generate = summary.phases.find((x) => x.phase === 'generate')!;
    expect(summary.stopped).toBeUndefined();
    expect(generate.done).toBe(generate.items);
    // The plan checked against the budget prices the batched model at the batch price.
    const line = summary.plan.lines.find((l) => l.model === 'batched')!;
    expect(line.batchCostUsd).toBeCloseTo(line.costUsd * PRICE.batch_discount, 12);
    expect(summary.plan.totals.costUsd).toBeCloseTo(summary.plan.lines.reduce((s, l) => s + (l.model === 'batched' ? l.batchCostUsd! : l.costUsd), 0), 12);
    // Split by the request limit: no batch holds more than 5, and no request went twice.
    expect(server!.created.length).toBeGreaterThanOrEqual(Math.ceil(generate.items / 5));
    expect(server!.created.every((ids) => ids.length <= 5)).toBe(true);
    const sent = server!.created.flat();
    expect(new Set(sent).size).toBe(sent.length);
    expect(sent.length).toBe(generate.items);
    expect(submitted.map((r) => r.batchId).sort()).toEqual(server!.created.map((_, i) => (p.provider === 'openai' ? `batch_${i}` : `msgbatch_${i}`)).sort());
    await expectComplete(ctx, generate.items);
    const stored = await readParquet<{ provider: string; settings_json: string; simulated: boolean; status: string; cached_input_tokens: number | null }>(
      tableGlob(ctx.dataDir, ctx.campaign.name, 'generate', 'replies'),
    );
    expect(stored.every((r) => r.provider === `${p.provider}/${p.model}` && !r.simulated)).toBe(true);
    expect(stored.every((r) => r.status === 'ok' && r.cached_input_tokens === USAGE.cached)).toBe(true);
    expect(JSON.parse(stored[0]!.settings_json)).toMatchObject({ model: p.model, temperature: 1 });
    expect(JSON.stringify(stored)).not.toContain(KEY);
  });

  it('re-attaches to the batches of a run killed after submission, and submits none twice', async () => {
    const ctx = await setup(p);
    // Kill the first run as soon as its first batch is in the ledger: before a single poll.
    const controller = new AbortController();
    const first = await runCampaign(ctx, fast({ signal: controller.signal, batch: { pollMs: 1, onSubmitted: () => controller.abort() } }));
    expect(first.stopped).toBe('aborted');
    const open = await openBatches(ctx.dataDir, ctx.campaign.name);
    expect(open.length).toBeGreaterThan(0);
    expect(open.length).toBe(server!.created.length);
    const before = await ledgerSnapshot(ctx.dataDir, ctx.campaign.name);
    // The open batches' maximum cost stays reserved, and nothing was spent yet.
    expect(before.budget.reserved_usd).toBeGreaterThan(0);
    expect(before.budget.spent_usd).toBe(0);
    // A later run's start releases a dead run's reservations, but not those of its open batches.
    const other = new EmbeddedLedger(ctx.dataDir);
    try {
      await other.orphanStale(ctx.campaign.name, 'another-run', 'hold');
      expect((await other.budget(ctx.campaign.name)).reserved_usd).toBeCloseTo(before.budget.reserved_usd, 12);
    } finally {
      await other.close();
    }
    const createdBefore = server!.created.length;
    const inFlight = new Set(server!.created.flat());

    const second = await runCampaign(ctx, fast());

    const generate = second.phases.find((x) => x.phase === 'generate')!;
    expect(second.stopped).toBeUndefined();
    // The killed run's batches were polled, not sent again: their ids are in no later batch.
    const later = server!.created.slice(createdBefore).flat();
    expect(later.filter((id) => inFlight.has(id))).toEqual([]);
    const sent = server!.created.flat();
    expect(new Set(sent).size).toBe(sent.length);
    const items = generate.items;
    expect(sent.length).toBe(items);
    await expectComplete(ctx, items);
  });

  it('re-queues the requests of a recorded batch the provider no longer knows', async () => {
    const ctx = await setup(p);
    const controller = new AbortController();
    await runCampaign(ctx, fast({ signal: controller.signal, batch: { pollMs: 1, onSubmitted: () => controller.abort() } }));
    const lost = new Set(server!.created.flat());
    expect(lost.size).toBeGreaterThan(0);
    server!.forget();

    const summary = await runCampaign(ctx, fast());

    const generate = summary.phases.find((x) => x.phase === 'generate')!;
    expect(summary.stopped).toBeUndefined();
    const rows = await expectComplete(ctx, generate.items);
    const errors = rows.filter((r) => r.status === 'error');
    expect(errors.every((r) => r.error_class === 'batch_lost')).toBe(true);
    expect(new Set(errors.map((r) => r.item_id))).toEqual(lost);
  });

  it('re-queues the requests of an expired batch and completes them in a new one', async () => {
    // The first batch expires with every other request unanswered.
    const ctx = await setup(p, { expire: (batch, position) => batch === 0 && position % 2 === 1 });
    const summary = await runCampaign(ctx, fast({ partitionConcurrency: 1 }));

    const generate = summary.phases.find((x) => x.phase === 'generate')!;
    expect(generate.done).toBe(generate.items);
    const expiredIds = server!.created[0]!.filter((_, i) => i % 2 === 1);
    expect(expiredIds.length).toBeGreaterThan(0);
    // Each expired request went into exactly one later batch.
    const later = server!.created.slice(1).flat();
    expect(expiredIds.every((id) => later.filter((x) => x === id).length === 1)).toBe(true);
    const rows = await expectComplete(ctx, generate.items);
    const expiredRows = rows.filter((r) => r.status === 'error');
    expect(expiredRows.map((r) => r.error_class)).toEqual(expiredIds.map(() => 'batch_expired'));
    expect(new Set(expiredRows.map((r) => r.item_id))).toEqual(new Set(expiredIds));
    // The retry is the item's second attempt; its ok reply is attempt 2.
    for (const id of expiredIds) expect(rows.filter((r) => r.item_id === id).map((r) => [r.attempt, r.status])).toEqual([[1, 'error'], [2, 'ok']]);
  });

  it('records a request the provider rejects for good once: a resume does not resubmit it, --retry-failed does', async () => {
    // The first batch's request 0 is an invalid request (a permanent error), every time it is sent.
    const ctx = await setup(p, { reject: (_batch, position) => position === 0 });
    const first = await runCampaign(ctx, fast({ partitionConcurrency: 1 }));
    const generate = first.phases.find((x) => x.phase === 'generate')!;
    const rejected = server!.created.map((ids) => ids[0]!);
    expect(generate.failed).toBe(rejected.length);
    expect(generate.done).toBe(generate.items - rejected.length);
    const sent = server!.created.flat().length;

    const resumed = await runCampaign(ctx, fast());
    expect(server!.created.flat().length).toBe(sent);
    expect(resumed.phases.find((x) => x.phase === 'generate')!.failed).toBe(0);

    await runCampaign(ctx, fast({ retryFailed: true }));
    const again = server!.created.flat().slice(sent);
    expect(new Set(again)).toEqual(new Set(rejected));
    const rows = await storedReplies(ctx.dataDir, ctx.campaign.name, 'generate');
    // Each rejected item: its first refusal, then the one --retry-failed asked for; OpenAI names an
    // invalid prompt a content filter, Anthropic a bad request: both permanent.
    const errors = rows.filter((r) => r.status === 'error');
    expect(errors).toHaveLength(rejected.length * 2);
    for (const e of errors) expect(['bad_request', 'content_filter']).toContain(e.error_class);
  });

  it('retries a batch creation the provider refused with a 5xx, and creates the batch once', async () => {
    const ctx = await setup(p, { createFault: (n) => (n === 0 || n === 1 ? 'fail' : undefined) });
    const summary = await runCampaign(ctx, fast({ partitionConcurrency: 1 }));

    const generate = summary.phases.find((x) => x.phase === 'generate')!;
    expect(summary.stopped).toBeUndefined();
    expect(server!.createRequests()).toBe(server!.created.length + 2);
    expectSentOnce(generate.items);
    await expectComplete(ctx, generate.items);
  });

  it('finds a batch created by a request whose answer was lost, and does not create it again', async () => {
    const ctx = await setup(p, { createFault: (n) => (n === 0 ? 'drop' : undefined) });
    const summary = await runCampaign(ctx, fast({ partitionConcurrency: 1 }));

    const generate = summary.phases.find((x) => x.phase === 'generate')!;
    expect(summary.stopped).toBeUndefined();
    expect(server!.createRequests()).toBe(server!.created.length);
    expectSentOnce(generate.items);
    await expectComplete(ctx, generate.items);
  });

  it('after a crash between creating a batch and recording it, the restarted run looks it up instead of paying twice', async () => {
    const controller = new AbortController();
    // The provider creates the first batch; the run dies before it hears back.
    const ctx = await setup(p, {
      createFault: (n) => {
        if (n !== 0) return undefined;
        controller.abort();
        return 'drop';
      },
    });
    const first = await runCampaign(ctx, fast({ signal: controller.signal, partitionConcurrency: 1 }));
    expect(first.stopped).toBe('aborted');
    expect(server!.created.length).toBe(1);
    const left = await intents(ctx.dataDir, ctx.campaign.name);
    expect(left.map((i) => i.customIds)).toEqual(server!.created);
    expect(await openBatches(ctx.dataDir, ctx.campaign.name)).toEqual([]);
    // The intent's reservation survives the next run's release of stale reservations.
    expect((await ledgerSnapshot(ctx.dataDir, ctx.campaign.name)).budget.reserved_usd).toBeGreaterThan(0);

    const second = await runCampaign(ctx, fast());

    const generate = second.phases.find((x) => x.phase === 'generate')!;
    expect(second.stopped).toBeUndefined();
    // The first batch was adopted: its requests are in no later batch.
    const later = new Set(server!.created.slice(1).flat());
    expect(server!.created[0]!.filter((id) => later.has(id))).toEqual([]);
    expectSentOnce(generate.items);
    await expectComplete(ctx, generate.items);
  });
});

describe.each(PROVIDERS)('sondage stop on $provider', (p) => {
  /** Runs until the first batches are in the ledger, then stops the campaign. */
  async function stopAfterSubmission(options: BatchServerOptions = {}) {
    const ctx = await setup(p, { runningPolls: 5, ...options });
    const controller = new AbortController();
    await runCampaign(ctx, fast({ signal: controller.signal, batch: { pollMs: 1, onSubmitted: () => controller.abort() } }));
    const ledger = new EmbeddedLedger(ctx.dataDir);
    try {
      const clients = await batchClientsFor(ctx.campaign, { seed: ctx.campaign.seed, file: ctx.campaign.file });
      const at = new Date('2026-11-30T08:00:00.000Z');
      const result = await stopCampaign({ ledger, campaign: ctx.campaign.name, clients, now: () => at });
      return { ctx, result };
    } finally {
      await ledger.close();
    }
  }

  it('cancels the open batches, marks them, and the next run keeps their partial results and re-queues the rest', async () => {
    const { ctx, result } = await stopAfterSubmission();

    const open = await openBatches(ctx.dataDir, ctx.campaign.name);
    expect(open.length).toBeGreaterThan(0);
    expect(result.batches.map((b) => [b.batchId, b.outcome]).sort()).toEqual(open.map((b) => [b.batchId, 'cancelled']).sort());
    expect(server!.cancelled.sort()).toEqual(open.map((b) => b.batchId).sort());
    expect(open.every((b) => b.cancelledAt === '2026-11-30T08:00:00.000Z')).toBe(true);
    expect(result.missingClients).toEqual([]);
    const createdBefore = server!.created.length;
    const cancelledIds = server!.created.flatMap((ids) => ids.filter((_, i) => i % 2 === 1));
    const answeredIds = server!.created.flatMap((ids) => ids.filter((_, i) => i % 2 === 0));

    const summary = await runCampaign(ctx, fast());

    const generate = summary.phases.find((x) => x.phase === 'generate')!;
    expect(summary.stopped).toBeUndefined();
    const later = server!.created.slice(createdBefore).flat();
    // What the cancelled batches answered is kept; only what never ran is sent again, once.
    expect(later.filter((id) => answeredIds.includes(id))).toEqual([]);
    expect(cancelledIds.every((id) => later.filter((x) => x === id).length === 1)).toBe(true);
    const rows = await expectComplete(ctx, generate.items);
    const errors = rows.filter((r) => r.status === 'error');
    expect(new Set(errors.map((r) => r.error_class))).toEqual(new Set(['batch_cancelled']));
    expect(new Set(errors.map((r) => r.item_id))).toEqual(new Set(cancelledIds));
  });

  it('finds and cancels the batch of a run killed between creating and recording it (or says it cannot tell yet)', async () => {
    const controller = new AbortController();
    const ctx = await setup(p, {
      runningPolls: 5,
      createFault: (n) => {
        if (n !== 0) return undefined;
        controller.abort();
        return 'drop';
      },
    });
    await runCampaign(ctx, fast({ signal: controller.signal, partitionConcurrency: 1 }));
    expect(server!.created.length).toBe(1);
    const ledger = new EmbeddedLedger(ctx.dataDir);
    const clients = await batchClientsFor(ctx.campaign, { seed: ctx.campaign.seed, file: ctx.campaign.file });
    const result = await stopCampaign({ ledger, campaign: ctx.campaign.name, clients }).finally(() => ledger.close());

    if (p.provider === 'openai') {
      // Tagged with its submission key: found, recorded, cancelled.
      expect(result.batches.map((b) => [b.batchId, b.outcome])).toEqual([['batch_0', 'cancelled']]);
      expect(server!.cancelled).toEqual(['batch_0']);
      expect(await intents(ctx.dataDir, ctx.campaign.name)).toEqual([]);
    } else {
      // Untagged and still running: its ids cannot be read yet, so it is neither cancelled nor forgotten.
      expect(result.batches).toEqual([]);
      expect(result.undetermined).toHaveLength(1);
      expect(server!.cancelled).toEqual([]);
      expect(await intents(ctx.dataDir, ctx.campaign.name)).toHaveLength(1);
    }

    const summary = await runCampaign(ctx, fast());
    const generate = summary.phases.find((x) => x.phase === 'generate')!;
    expect(summary.stopped).toBeUndefined();
    const later = new Set(server!.created.slice(1).flat());
    const first = server!.created[0]!;
    // Only the requests the cancel stopped were sent again.
    expect(first.filter((id) => later.has(id))).toEqual(p.provider === 'openai' ? first.filter((_, i) => i % 2 === 1) : []);
    await expectComplete(ctx, generate.items);
  });

  it('a run holding a batch that is cancelled under it keeps the partial results and leaves the rest to the next run', async () => {
    const ctx = await setup(p, { runningPolls: 5 });
    const marker = new EmbeddedLedger(ctx.dataDir);
    let stopped: string | undefined;
    const first = await runCampaign(
      ctx,
      fast({
        partitionConcurrency: 1,
        batch: {
          pollMs: 1,
          onSubmitted: (record) => {
            if (stopped !== undefined) return;
            // Another process's `sondage stop`: the provider cancels, the ledger notes it (synchronous SQLite).
            stopped = record.batchId;
            server!.cancelNow(record.batchId);
            void marker.markBatchCancelled(record.campaign, record.batchId, '2026-11-30T08:00:00.000Z');
          },
        },
      }),
    ).finally(() => marker.close());

    const index = server!.created.findIndex((_, i) => (p.provider === 'openai' ? `batch_${i}` : `msgbatch_${i}`) === stopped);
    const unrun = server!.created[index]!.filter((_, i) => i % 2 === 1);
    expect(unrun.length).toBeGreaterThan(0);
    // Not sent again by the run it was cancelled under.
    expect(server!.created.flat().filter((id) => unrun.includes(id))).toEqual(unrun);
    const generate = first.phases.find((x) => x.phase === 'generate')!;
    expect(generate.pending).toBe(unrun.length);

    const second = await runCampaign(ctx, fast());
    const again = second.phases.find((x) => x.phase === 'generate')!;
    expect(second.stopped).toBeUndefined();
    expect(unrun.every((id) => server!.created.flat().filter((x) => x === id).length === 2)).toBe(true);
    await expectComplete(ctx, again.items);
  });
});
