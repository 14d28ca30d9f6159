import { mkdir, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { PLAN_RESERVE_MS, createHandler as createPlan } from '../../functions/plan/handler.js';
import { createHandler as createWorker } from '../../functions/worker/handler.js';
import { MAX_WORKER_TURNS } from '../../lib/config/pipeline.js';
import type { PlanOutput, Shard, WorkerEvent, WorkerOutput } from '../../lib/config/pipeline.js';
import { executionName } from '../../lib/cli/aws.js';
import { registeredKey } from '../../lib/run/shards.js';
import { jsonLineLog } from '../../functions/shared/jsonLog.js';
import { readParquet, tableGlob } from '../../lib/store/index.js';
import type { LedgerPartition, ReservationScope } from '../../lib/store/types.js';
import { sleep } from '../../lib/run/sleep.js';
import { okCounts, storedReplies } from '../helpers/runData.js';
import { tempDir, narrowDesign } from '../helpers/campaigns.js';
import type { CampaignDoc } from '../helpers/campaigns.js';
import { startOpenAIBatchServer } from '../run/batchServers.js';
import { chatCompletion, startWireServer } from '../providers/helpers/wireServer.js';
import type { WireReply, WireServer } from '../providers/helpers/wireServer.js';
import { SECRET_ARN, lambdaContext, readShards, uploadCampaign, useHarness } from './harness.js';

const h = useHarness();

/** One language, two forms, two constraints, two stories; shards of 20 items (rpm 6: the smallest shard). */
async function upload(name: string): Promise<void> {
  await uploadCampaign(h.store, name, (doc) => {
    narrowDesign(doc, { forms: ['plain', 'negint'], constraints: ['yesno', 'label'], stories: 2 });
    doc.models = doc.models.slice(0, 1);
    doc.models[0]!['rpm'] = 6;
    doc.judge['sample_rate'] = 1;
  });
}

/**
 * The plan's first two waves (generate; then judge, planned before generate ran, as a re-started
 * execution's plan would list it): the shards of each phase.
 */
async function plan(campaign: string, execution: string): Promise<{ out: PlanOutput; generate: Shard[]; judge: Shard[] }> {
  const handler = createPlan({ ...h.deps(), glueDatabase: 'db' });
  const read = async (key: string) => await readShards(h.store, key);
  const out = await handler({ campaign, execution }, lambdaContext());
  const next = await handler({ campaign, execution, phasesRun: out.phasesRun }, lambdaContext());
  return { out, generate: await read(out.wave.lambda.manifestKey), judge: await read(next.wave.lambda.manifestKey) };
}

/** What Distributed Map with ItemBatcher sends: `{ Items, BatchInput }`; the shards name their phase. */
const event = (campaign: string, _phase: 'generate' | 'judge', execution: string, items: readonly Shard[]): WorkerEvent => ({
  Items: items,
  BatchInput: { campaign, execution },
});

/** The bucket's Parquet for one campaign, copied to a local folder laid out like it, for DuckDB. */
async function localCopy(campaign: string): Promise<string> {
  const { dir } = await tempDir('worker-read');
  for (const key of await h.store.list(`campaigns/${campaign}/`)) {
    if (!key.endsWith('.parquet')) continue;
    await mkdir(path.dirname(path.join(dir, key)), { recursive: true });
    await writeFile(path.join(dir, key), (await h.store.get(key))!);
  }
  return dir;
}

/** Handler dependencies whose ledgers count the items registered through them, by phase. */
function countingRegistrations() {
  const registered = { generate: 0, judge: 0 };
  const deps = h.deps();
  const ledgerFor = (runId: string) =>
    new Proxy(deps.ledgerFor(runId), {
      get: (t, prop) =>
        prop === 'registerItems'
          ? (c: string, partition: LedgerPartition, ids: readonly string[]) => ((registered[partition.phase as 'generate' | 'judge'] += ids.length), t.registerItems(c, partition, ids))
          : (Reflect.get(t, prop, t) as unknown),
    });
  return { deps: { ...deps, ledgerFor }, registered };
}

/** Sums worker outputs as the Map's results would be read. */
function sum(outs: readonly WorkerOutput[]) {
  return outs.reduce((a, o) => ({ done: a.done + o.done, failed: a.failed + o.failed, pending: a.pending + o.pending, costUsd: a.costUsd + o.costUsd }), { done: 0, failed: 0, pending: 0, costUsd: 0 });
}

/**
 * An OpenAI-compatible endpoint scripted as `script`, and the campaign of one model on it (one form,
 * one constraint, two stories; its key in `keyEnv` while `use` runs): `use` gets the server and an
 * upload of that campaign (`model` overlays the entry, `edit` the rest of it). The server stops and
 * the key leaves the environment after `use`, pass or fail.
 */
async function withWireModel(
  keyEnv: string,
  script: readonly WireReply[],
  use: (server: WireServer, upload: (name: string, model?: Record<string, unknown>, edit?: (doc: CampaignDoc) => void) => Promise<void>) => Promise<void>,
): Promise<void> {
  const server = await startWireServer(script);
  process.env[keyEnv] = 'sk-test-local-0000000000000000';
  const uploadOne = (name: string, model: Record<string, unknown> = {}, edit: (doc: CampaignDoc) => void = () => {}) =>
    uploadCampaign(h.store, name, (doc) => {
      narrowDesign(doc, { forms: ['plain'], constraints: ['yesno'], stories: 2 });
      edit(doc);
      doc.models = [{ id: 'local', provider: 'openai-compatible', model: 'qwen3-8b', base_url: `${server.url}/v1`, api_key_env: keyEnv, rpm: 100_000, price: { input_per_mtok: 1, output_per_mtok: 2 }, ...model }];
    });
  try {
    await use(server, uploadOne);
  } finally {
    delete process.env[keyEnv];
    await server.close();
  }
}

describe('worker handler', () => {
  it('answers every shard of the generate manifest, then the judge manifest, into Parquet on S3 and the DynamoDB ledger; a second delivery asks nothing twice', async () => {
    // prepare
    await upload('w-full');
    const { generate, judge } = await plan('w-full', 'exec-1');
    expect(generate.length).toBeGreaterThan(1);
    const { deps, registered } = countingRegistrations();
    const worker = createWorker(deps);
    const total = (await h.ledger.counts('w-full', 'generate')).pending;
    h.dynamo.calls.clear();
    // act: the ItemBatcher's batches of up to four shards
    const outs: WorkerOutput[] = [];
    for (let i = 0; i < generate.length; i += 4) outs.push(await worker(event('w-full', 'generate', 'exec-1', generate.slice(i, i + 4)), lambdaContext()));
    // assess: the plan registered the generate items; the worker does not register them again
    expect(registered.generate).toBe(0);
    expect(h.dynamo.calls.get('BatchWriteItem') ?? 0).toBe(0);
    // assess: every item done once, in the ledger and in the Parquet
    const got = sum(outs);
    expect(outs.every((o) => o.again === false && o.openBatches === 0 && o.stopped === undefined)).toBe(true);
    expect(got.done).toBe(total);
    expect(got.pending).toBe(0);
    expect(await h.ledger.counts('w-full', 'generate')).toEqual({ pending: 0, done: total, failed: 0 });
    const budget = await h.ledger.budget('w-full');
    expect(budget.reserved_usd).toBeCloseTo(0, 12);
    expect(budget.spent_usd).toBeCloseTo(got.costUsd, 12);
    let local = await localCopy('w-full');
    const replies = await storedReplies(local, 'w-full', 'generate');
    expect(okCounts(replies).size).toBe(total);
    expect([...okCounts(replies).values()].every((n) => n === 1)).toBe(true);
    const rules = await readParquet<{ n: bigint }>(tableGlob(local, 'w-full', 'generate', 'readings'), "SELECT count(*) AS n FROM parts WHERE reader = 'rule'");
    expect(Number(rules[0]!.n)).toBeGreaterThan(0);

    // act: the judge phase over the replies just stored
    h.dynamo.calls.clear();
    const judged = sum(await Promise.all([worker(event('w-full', 'judge', 'exec-1', judge), lambdaContext(undefined, 0, 'req-judge'))]));
    // the worker registers the judge items (they exist only once the replies do)
    expect(registered.judge).toBeGreaterThan(0);
    expect(h.dynamo.calls.get('BatchWriteItem')).toBeGreaterThan(0);
    // assess: the judge read the chosen replies; its readings sit beside the rule readings
    const judgeCounts = await h.ledger.counts('w-full', 'judge');
    expect(judged.done).toBeGreaterThan(0);
    expect(judgeCounts).toEqual({ pending: 0, done: judged.done, failed: 0 });
    local = await localCopy('w-full');
    const judgeReadings = await readParquet<{ n: bigint }>(tableGlob(local, 'w-full', 'generate', 'readings'), "SELECT count(*) AS n FROM parts WHERE reader = 'judge:judge'");
    expect(Number(judgeReadings[0]!.n)).toBe(judged.done);
    expect((await h.store.list('campaigns/w-full/judge/prompts/')).length).toBe(judge.length);

    // act: the same batches delivered again (a retried Lambda invocation, or a re-run Map)
    const partsBefore = (await h.store.list('campaigns/w-full/')).length;
    h.dynamo.calls.clear();
    const again = [
      await worker(event('w-full', 'generate', 'exec-1', generate), lambdaContext(undefined, 0, 'req-2')),
      await worker(event('w-full', 'judge', 'exec-1', judge), lambdaContext(undefined, 0, 'req-3')),
    ];
    // assess: nothing asked, nothing written, nothing spent
    expect(h.dynamo.calls.get('BatchWriteItem') ?? 0).toBe(0); // judge items registered once
    expect(again.map((o) => [o.done, o.pending, o.costUsd, o.again])).toEqual([
      [0, 0, 0, false],
      [0, 0, 0, false],
    ]);
    expect((await h.store.list('campaigns/w-full/')).length).toBe(partsBefore);
    expect((await h.ledger.budget('w-full')).spent_usd).toBeCloseTo(budget.spent_usd + judged.costUsd, 12);
    // and a re-started execution plans nothing left to do
    const replan = await plan('w-full', 'exec-2');
    expect([replan.generate.length, replan.judge.length]).toEqual([0, 0]);
  });

  it('stops before the Lambda timeout with what it answered committed, says again, and a re-started execution lists only the unfinished shards', async () => {
    // prepare: 30 s of time left above the 60 s safety margin, one second gone per reply: the first
    // shard (20 items) ends, the second is cut short, the other two are not started
    await upload('w-short');
    const { generate } = await plan('w-short', 'exec-1');
    const total = (await h.ledger.counts('w-short', 'generate')).pending;
    const worker = createWorker(h.deps());
    // act
    const out = await worker(event('w-short', 'generate', 'exec-1', generate.slice(0, 4)), lambdaContext(90_000, 1000));
    // assess: some answered and committed (ledger and Parquet agree), the rest pending, nothing reserved
    expect(out.again).toBe(true);
    expect(out.done).toBeGreaterThan(0);
    expect(out.pending).toBeGreaterThan(0);
    const counts = await h.ledger.counts('w-short', 'generate');
    expect(counts.done).toBe(out.done);
    expect(counts.pending).toBe(total - out.done);
    expect((await h.ledger.budget('w-short')).reserved_usd).toBeCloseTo(0, 12);
    const replies = await storedReplies(await localCopy('w-short'), 'w-short', 'generate');
    expect(okCounts(replies).size).toBe(out.done);

    // act: the execution died here; a new one plans from the ledger
    const replan = await plan('w-short', 'exec-2');
    // assess: only shards with pending items, and finishing them completes the campaign exactly once
    expect(out.done).toBeGreaterThanOrEqual(20);
    expect(replan.generate.map((s) => s.start)).toEqual(generate.filter((s) => s.start > 0).map((s) => s.start));
    const rest = await worker(event('w-short', 'generate', 'exec-2', replan.generate), lambdaContext(undefined, 0, 'req-2'));
    expect(rest.again).toBe(false);
    expect(out.done + rest.done).toBe(total);
    expect(await h.ledger.counts('w-short', 'generate')).toEqual({ pending: 0, done: total, failed: 0 });
    expect(okCounts(await storedReplies(await localCopy('w-short'), 'w-short', 'generate')).size).toBe(total);
  });

  it("returns stopped 'budget' without again when the cap cannot cover one more call", async () => {
    // prepare: the plan accepts the campaign; then the cap is lowered below one call's reservation
    await upload('w-poor');
    const { generate } = await plan('w-poor', 'exec-1');
    await h.ledger.initCampaign('w-poor', 1e-7, 'exec-1');
    const worker = createWorker(h.deps());
    // act
    const out = await worker(event('w-poor', 'generate', 'exec-1', generate.slice(0, 2)), lambdaContext());
    // assess
    expect(out.stopped).toBe('budget');
    expect(out.again).toBe(false);
    expect(out.done).toBe(0);
    expect(out.pending).toBe(generate.slice(0, 2).reduce((s, sh) => s + sh.end - sh.start, 0));
    expect(await h.ledger.budget('w-poor')).toMatchObject({ spent_usd: 0, reserved_usd: 0 });
  });

  it('a worker of a stopped execution\'s later wave registers nothing and asks nothing: the fence names another run', async () => {
    // prepare: exec-1 answered its generate wave; then `sondage stop --aws` moved the fence, and
    // exec-1's judge wave (planned before, or by a state machine StopExecution has not reached) starts
    await upload('w-fenced');
    const { generate, judge } = await plan('w-fenced', 'exec-1');
    await createWorker(h.deps())(event('w-fenced', 'generate', 'exec-1', generate), lambdaContext());
    expect(await h.ledger.fence('w-fenced', 'stop-token')).toBe(true);
    const { deps, registered } = countingRegistrations();
    h.dynamo.calls.clear();
    // act
    const out = await createWorker(deps)(event('w-fenced', 'judge', 'exec-1', judge), lambdaContext(undefined, 0, 'req-old-judge'));
    // assess: nothing registered (a newer execution's judge workers may be registering the same items:
    // two registrations of one item at once count it twice), nothing asked, the judge items left to do
    expect(registered.judge).toBe(0);
    expect(h.dynamo.calls.get('BatchWriteItem') ?? 0).toBe(0);
    expect(out).toMatchObject({ done: 0, costUsd: 0, stopped: 'budget', again: false });
    expect(out.pending).toBeGreaterThan(0);
    // and the next execution judges every item once
    const next = await plan('w-fenced', 'exec-2');
    const judged = await createWorker(h.deps())(event('w-fenced', 'judge', 'exec-2', next.judge), lambdaContext(undefined, 0, 'req-new-judge'));
    expect(judged.done).toBe(out.pending);
    expect(await h.ledger.counts('w-fenced', 'judge')).toEqual({ pending: 0, done: judged.done, failed: 0 });
  });

  it('the give-up step of a fenced-out execution names its shards and marks none of their items failed', async () => {
    // prepare: exec-1 planned; then a newer execution took the fence (its workers now ask these items)
    await upload('w-fenced-giveup');
    const { generate } = await plan('w-fenced-giveup', 'exec-1');
    const before = await h.ledger.counts('w-fenced-giveup', 'generate');
    expect(await h.ledger.fence('w-fenced-giveup', 'exec-2')).toBe(true);
    const { deps, registered } = countingRegistrations();
    // act: exec-1's batch failed after its retries; its give-up step runs
    const input = event('w-fenced-giveup', 'generate', 'exec-1', generate.slice(0, 2));
    const gaveUp = await createWorker(deps)({ ...input, failure: { Error: 'Error', Cause: 'Lambda timed out' } }, lambdaContext(undefined, 0, 'req-old-giveup'));
    // assess: the shards are named, nothing registered or marked, and the failure says why
    expect(gaveUp).toMatchObject({ failed: 0 });
    expect(gaveUp.gaveUp).toHaveLength(2);
    expect(registered.generate).toBe(0);
    expect(await h.ledger.counts('w-fenced-giveup', 'generate')).toEqual(before);
    const failures = await h.ledger.failures('w-fenced-giveup');
    expect(failures.map((f) => f.cause)).toEqual([expect.stringMatching(/no longer holds the campaign's fence \(exec-2\), so its items are left as they are/)]);
  });

  it('submits a provider batch and returns again with it open; the next invocation polls, collects and commits it', async () => {
    // prepare: the respondent runs with mode: batch on a local OpenAI batch server; its key only in the secret
    const key = 'sk-test-worker-batch-0123456789';
    const server = await startOpenAIBatchServer({ runningPolls: 2 });
    h.secrets.secrets.set(SECRET_ARN, JSON.stringify({ SONDAGE_TEST_BATCH_KEY: key }));
    try {
      await uploadCampaign(h.store, 'w-batch', (doc) => {
        narrowDesign(doc, { forms: ['plain'], constraints: ['yesno', 'label'], stories: 2 });
        doc.models = [
          { id: 'batched', provider: 'openai', model: 'gpt-4.1-mini', base_url: `${server.url}/v1`, api_key_env: 'SONDAGE_TEST_BATCH_KEY', mode: 'batch', price: { input_per_mtok: 1, output_per_mtok: 2, batch_discount: 0.5 } },
        ];
      });
      const { out: planned, generate } = await plan('w-batch', 'exec-1');
      const total = (await h.ledger.counts('w-batch', 'generate')).pending;
      const deps = h.deps();
      const worker = createWorker(deps);
      // act: the Map's first invocation
      expect(generate).toEqual([{ phase: 'generate', model: 'batched', language: 'en', start: 0, end: total, mode: 'batch' }]);
      const input = event('w-batch', 'generate', 'exec-1', generate);
      const first = await worker({ ...input, BatchInput: { ...input.BatchInput, pollSeconds: planned.wave.lambda.pollSeconds } }, lambdaContext());
      // assess: one batch submitted, its reservation held between invocations
      expect(planned.wave.lambda.pollSeconds).toBe(300);
      expect(first).toMatchObject({ done: 0, openBatches: 1, pending: total, again: true });
      expect((await h.ledger.budget('w-batch')).reserved_usd).toBeGreaterThan(0);
      expect(server.created).toHaveLength(1);
      expect(deps.logs.some((l) => l.includes('"nextInvocationSeconds":300'))).toBe(true);
      // act: the invocation after the Wait, with the previous output at `result`
      const second = await worker({ ...event('w-batch', 'generate', 'exec-1', generate), result: first }, lambdaContext(undefined, 0, 'req-2'));
      // assess: polled, collected and committed once, not submitted again
      expect(server.created).toHaveLength(1);
      expect(second).toMatchObject({ done: total, openBatches: 0, pending: 0, again: false });
      expect(await h.ledger.counts('w-batch', 'generate')).toEqual({ pending: 0, done: total, failed: 0 });
      expect((await h.ledger.budget('w-batch')).reserved_usd).toBeCloseTo(0, 12);
      expect(okCounts(await storedReplies(await localCopy('w-batch'), 'w-batch', 'generate')).size).toBe(total);
      for (const line of deps.logs) expect(line).not.toContain(key);
    } finally {
      h.secrets.secrets.set(SECRET_ARN, JSON.stringify({}));
      delete process.env['SONDAGE_TEST_BATCH_KEY'];
      await server.close();
    }
  });

  it('commits what it journaled before it propagates an S3 error mid-shard, so nothing paid for is asked again', async () => {
    // prepare: parts of 10 replies; the bucket refuses the first replies part (one S3 error)
    await upload('w-s3');
    const { generate } = await plan('w-s3', 'exec-1');
    const shard = generate[0]!;
    const size = shard.end - shard.start;
    const base = h.deps();
    let refused = 0;
    const store = new Proxy(h.store, {
      get: (t, prop) =>
        prop === 'put'
          ? async (key: string, body: Uint8Array | string) => {
              if (key.includes('/generate/replies/') && refused++ === 0) throw Object.assign(new Error('We encountered an internal error. Please try again.'), { name: 'InternalError' });
              return t.put(key, body);
            }
          : (Reflect.get(t, prop, t) as unknown),
    });
    const worker = createWorker({ ...base, store, chunkSize: 5, partRows: 10 });
    // act
    await expect(worker(event('w-s3', 'generate', 'exec-1', [shard]), lambdaContext())).rejects.toThrow(/internal error/);
    // assess: every item answered is done in the ledger and stored once, its cost counted once,
    // nothing left reserved. Calls still unanswered when the error stopped the shard (how many
    // depends on timing) were cut short: their items stay pending.
    expect(refused).toBeGreaterThan(1);
    const replies = await storedReplies(await localCopy('w-s3'), 'w-s3', 'generate');
    const answered = okCounts(replies).size;
    expect(answered).toBeGreaterThan(0);
    expect((await h.ledger.counts('w-s3', 'generate')).done).toBe(answered);
    expect([...okCounts(replies).values()].every((n) => n === 1)).toBe(true);
    const budget = await h.ledger.budget('w-s3');
    expect(budget.reserved_usd).toBeCloseTo(0, 12);
    expect(budget.spent_usd).toBeCloseTo(replies.reduce((sum, r) => sum + r.cost_usd, 0), 12);
    expect(base.logs.some((l) => l.includes('what it had journaled is committed'))).toBe(true);
    // act: the retried invocation
    const again = await createWorker(h.deps())(event('w-s3', 'generate', 'exec-1', [shard]), lambdaContext(undefined, 0, 'req-2'));
    // assess: it asks only the rest; nothing is asked twice
    expect([again.done, again.pending]).toEqual([size - answered, 0]);
    const after = okCounts(await storedReplies(await localCopy('w-s3'), 'w-s3', 'generate'));
    expect(after.size).toBe(size);
    expect([...after.values()].every((n) => n === 1)).toBe(true);
  });

  it('commits the replies in flight when the ledger fails mid-shard, and hands back their reservations', async () => {
    // prepare: the third reservation of the shard fails as DynamoDB would after the SDK's retries
    await upload('w-ddb');
    const { generate } = await plan('w-ddb', 'exec-1');
    const shard = generate[0]!;
    const base = h.deps();
    let reservations = 0;
    const ledgerFor = (runId: string) => {
      const inner = base.ledgerFor(runId);
      return new Proxy(inner, {
        get: (t, prop) =>
          prop === 'reserve'
            ? async (c: string, id: string, amount: number) => {
                if (++reservations === 3) throw Object.assign(new Error('Throughput exceeds the current capacity of your table'), { name: 'ThrottlingException' });
                return t.reserve(c, id, amount);
              }
            : (Reflect.get(t, prop, t) as unknown),
      });
    };
    const worker = createWorker({ ...base, ledgerFor, chunkSize: 5, partRows: 100 });
    // act
    await expect(worker(event('w-ddb', 'generate', 'exec-1', [shard]), lambdaContext())).rejects.toThrow(/Throughput exceeds/);
    // assess: what the two chunks reserved before the error answered is committed; the rest pending
    const counts = await h.ledger.counts('w-ddb', 'generate');
    expect(counts.done).toBeGreaterThan(0);
    expect(counts.done).toBeLessThanOrEqual(10);
    const replies = await storedReplies(await localCopy('w-ddb'), 'w-ddb', 'generate');
    expect(okCounts(replies).size).toBe(counts.done);
    const budget = await h.ledger.budget('w-ddb');
    expect(budget.reserved_usd).toBeCloseTo(0, 12);
    expect(budget.spent_usd).toBeCloseTo(replies.reduce((sum, r) => sum + r.cost_usd, 0), 12);
    // act: the retried invocation finishes the shard without asking the first ten again
    const again = await createWorker(h.deps())(event('w-ddb', 'generate', 'exec-1', [shard]), lambdaContext(undefined, 0, 'req-2'));
    expect(again.done).toBe(shard.end - shard.start - counts.done);
    expect(okCounts(await storedReplies(await localCopy('w-ddb'), 'w-ddb', 'generate')).size).toBe(shard.end - shard.start);
  });

  it('counts the calls a failed shard cut off as possibly billed at their reservations, in the salvage, never released at $0', async () => {
    // prepare: an endpoint that answers the first 4 requests and never the rest; one item per
    // reservation; the 11th reservation fails as DynamoDB would after the SDK's retries, once 10
    // calls are on the wire (4 answered, 6 waiting for a reply)
    const answer = { from: (req: Parameters<typeof chatCompletion>[0]) => chatCompletion(req, 'Yes.') };
    const server = await startWireServer([answer, answer, answer, answer, { hang: true }]);
    process.env['SONDAGE_TEST_SALVAGE_KEY'] = 'sk-test-local-0000000000000000';
    try {
      await uploadCampaign(h.store, 'w-salvage', (doc) => {
        narrowDesign(doc, { forms: ['plain', 'negint'], constraints: ['yesno', 'label'], stories: 2 });
        doc.concurrency = 64;
        doc.models = [
          { id: 'local', provider: 'openai-compatible', model: 'qwen3-8b', base_url: `${server.url}/v1`, api_key_env: 'SONDAGE_TEST_SALVAGE_KEY', rpm: 100_000, price: { input_per_mtok: 1, output_per_mtok: 2 } },
        ];
      });
      const { generate } = await plan('w-salvage', 'exec-1');
      const shard = generate[0]!;
      expect(shard.end - shard.start).toBeGreaterThan(10);
      const base = h.deps();
      const reservedFor = new Map<string, number>();
      let reservations = 0;
      let inFlightAtFailure: Map<string, number> | undefined;
      const ledgerFor = (runId: string) => {
        const inner = base.ledgerFor(runId);
        return new Proxy(inner, {
          get: (t, prop) =>
            prop === 'reserve'
              ? async (c: string, id: string, amount: number, scope?: ReservationScope) => {
                  if (++reservations === 11) {
                    while (server.requests.length < 10) await sleep(5);
                    inFlightAtFailure = await t.inFlight(c);
                    throw Object.assign(new Error('Throughput exceeds the current capacity of your table'), { name: 'ThrottlingException' });
                  }
                  for (const item of scope?.itemIds ?? []) reservedFor.set(item, amount);
                  return t.reserve(c, id, amount, scope);
                }
              : (Reflect.get(t, prop, t) as unknown),
        });
      };
      const worker = createWorker({ ...base, ledgerFor, chunkSize: 1 });
      // act
      await expect(worker(event('w-salvage', 'generate', 'exec-1', [shard]), lambdaContext())).rejects.toThrow(/Throughput exceeds/);
      // assess: the salvage ran; the worker's reservations carried their items, so the ledger saw
      // the 10 calls in flight
      expect(base.logs.some((l) => l.includes('what it had journaled is committed'))).toBe(true);
      expect(inFlightAtFailure?.get('generate')).toBe(10);
      expect(reservedFor.size).toBe(10);
      // assess: the 4 answered are done and paid; the 6 cut off are stored as unanswered attempts,
      // pending, and possibly billed at exactly what each reserved; nothing is left reserved
      const replies = await storedReplies(await localCopy('w-salvage'), 'w-salvage', 'generate');
      const cutOff = replies.filter((r) => r.status !== 'ok').map((r) => r.item_id);
      expect(okCounts(replies).size).toBe(4);
      expect(cutOff).toHaveLength(6);
      const counts = await h.ledger.counts('w-salvage', 'generate');
      expect(counts.done).toBe(4);
      const budget = await h.ledger.budget('w-salvage');
      expect(budget.reserved_usd).toBeCloseTo(0, 12);
      expect(budget.spent_usd).toBeCloseTo(replies.reduce((sum, r) => sum + r.cost_usd, 0), 12);
      expect(budget.possibly_billed_usd).toBeGreaterThan(0);
      expect(budget.possibly_billed_usd).toBeCloseTo(cutOff.reduce((sum, id) => sum + reservedFor.get(id)!, 0), 12);
    } finally {
      delete process.env['SONDAGE_TEST_SALVAGE_KEY'];
      await server.close();
    }
  });

  it('registers the shards of partitions a plan short of time left unregistered, and a later plan skips what they finished', async () => {
    // prepare: the plan starts with less than its reserve left, so it registers nothing
    await upload('w-late');
    const late = await createPlan({ ...h.deps(), glueDatabase: 'db' })({ campaign: 'w-late', execution: 'exec-1' }, lambdaContext(PLAN_RESERVE_MS - 1));
    const generate = await readShards(h.store, late.wave.lambda.manifestKey);
    expect(await h.ledger.counts('w-late', 'generate')).toEqual({ pending: 0, done: 0, failed: 0 });
    expect(await h.store.list('campaigns/w-late/generate/_registered/')).toEqual([]);
    const total = generate.reduce((n, sh) => n + sh.end - sh.start, 0);
    // act: the first shard's worker
    const { deps, registered } = countingRegistrations();
    const out = await createWorker(deps)(event('w-late', 'generate', 'exec-1', generate.slice(0, 1)), lambdaContext());
    // assess: it registered its own items and answered them
    expect(out.done).toBe(generate[0]!.end - generate[0]!.start);
    expect(registered.generate).toBe(out.done);
    expect(await h.ledger.counts('w-late', 'generate')).toEqual({ pending: 0, done: out.done, failed: 0 });
    // act: a re-started execution's plan with its time
    const { generate: rest } = await plan('w-late', 'exec-2');
    // assess: everything registered now (done items kept), partitions marked, the finished shard not listed
    expect(await h.ledger.counts('w-late', 'generate')).toEqual({ pending: total - out.done, done: out.done, failed: 0 });
    expect(await h.store.list('campaigns/w-late/generate/_registered/')).toEqual([registeredKey('w-late', 'generate', generate[0]!)]);
    expect(rest).toEqual(generate.slice(1));
    // act: the marker names other ids (the design changed since the plan), then as the plan left it
    const marker = registeredKey('w-late', 'generate', generate[0]!);
    const digest = Buffer.from((await h.store.get(marker))!).toString('utf8');
    await h.store.put(marker, 'sha256:of-another-design');
    const stale = countingRegistrations();
    await createWorker(stale.deps)(event('w-late', 'generate', 'exec-2', rest.slice(0, 1)), lambdaContext());
    await h.store.put(marker, digest);
    const fresh = countingRegistrations();
    await createWorker(fresh.deps)(event('w-late', 'generate', 'exec-2', rest.slice(1, 2)), lambdaContext());
    // assess: the worker registers its shard only where the marker does not match its items
    expect([stale.registered.generate, fresh.registered.generate]).toEqual([rest[0]!.end - rest[0]!.start, 0]);
  });

  it('records a rejected key as a failure sondage status --aws shows, names the variable (never the key) and does not ask to be invoked again', async () => {
    // prepare: an OpenAI-compatible endpoint that answers 401, its key only in the secret
    const key = 'sk-test-worker-badkey-0123456789';
    const server = await startWireServer([{ from: () => ({ status: 401, json: { error: { message: `Incorrect API key provided: ${key}`, type: 'invalid_request_error', code: 'invalid_api_key' } } }) }]);
    h.secrets.secrets.set(SECRET_ARN, JSON.stringify({ SONDAGE_TEST_WORKER_KEY: key }));
    try {
      await uploadCampaign(h.store, 'w-key', (doc) => {
        narrowDesign(doc, { forms: ['plain'], constraints: ['yesno', 'label'], stories: 2 });
        doc.models = [
          { id: 'local', provider: 'openai-compatible', model: 'qwen3-8b', base_url: `${server.url}/v1`, api_key_env: 'SONDAGE_TEST_WORKER_KEY', rpm: 100_000, price: { input_per_mtok: 1, output_per_mtok: 2 } },
        ];
      });
      const { generate } = await plan('w-key', 'exec-1');
      const total = (await h.ledger.counts('w-key', 'generate')).pending;
      const deps = h.deps();
      // act
      const out = await createWorker(deps)(event('w-key', 'generate', 'exec-1', generate), lambdaContext());
      // assess: every item still pending in the ledger, none counted as pending for another invocation
      expect(out).toMatchObject({ done: 0, failed: 0, pending: 0, keyBlocked: total, again: false });
      expect(await h.ledger.counts('w-key', 'generate')).toEqual({ pending: total, done: 0, failed: 0 });
      const failures = await h.ledger.failures('w-key');
      expect(failures).toHaveLength(1);
      expect(failures[0]).toMatchObject({ execution: 'exec-1', error: 'ProviderKeyRejected' });
      expect(failures[0]!.cause).toMatch(/^generate: openai-compatible\/qwen3-8b: the provider rejected the API key \(auth.*SONDAGE_TEST_WORKER_KEY/);
      expect(deps.logs.some((l) => l.includes('"message":"provider rejected the API key"') && l.includes('SONDAGE_TEST_WORKER_KEY'))).toBe(true);
      expect(deps.logs.some((l) => l.includes('reserved key'))).toBe(false);
      for (const text of [...deps.logs, failures[0]!.cause]) expect(text).not.toContain(key);
    } finally {
      h.secrets.secrets.set(SECRET_ARN, JSON.stringify({}));
      delete process.env['SONDAGE_TEST_WORKER_KEY'];
      await server.close();
    }
  });

  it.each([
    { when: 'in the same execution, at its next invocation (the rejection makes it read the secret again)', execution: 'exec-1' },
    { when: 'in the next execution, whatever the minute since the last read', execution: 'exec-2' },
  ])('a key fixed in Secrets Manager after a rejection is used by the same warm container $when', async ({ execution }) => {
    // prepare: an endpoint that takes only the fixed key; the secret holds the rejected one
    const campaign = `w-fix-${execution}`;
    const bad = 'sk-test-worker-rejected-0123456789';
    const good = 'sk-test-worker-fixed-9876543210';
    const server = await startWireServer([
      {
        from: (req) =>
          req.headers['authorization'] === `Bearer ${good}`
            ? chatCompletion(req, 'Yes.')
            : { status: 401, json: { error: { message: 'Incorrect API key provided', type: 'invalid_request_error', code: 'invalid_api_key' } } },
      },
    ]);
    h.secrets.secrets.set(SECRET_ARN, JSON.stringify({ SONDAGE_TEST_FIX_KEY: bad }));
    try {
      await uploadCampaign(h.store, campaign, (doc) => {
        narrowDesign(doc, { forms: ['plain'], constraints: ['yesno'], stories: 1 });
        doc.models = [
          { id: 'local', provider: 'openai-compatible', model: 'qwen3-8b', base_url: `${server.url}/v1`, api_key_env: 'SONDAGE_TEST_FIX_KEY', rpm: 100_000, price: { input_per_mtok: 1, output_per_mtok: 2 } },
        ];
      });
      const { generate } = await plan(campaign, 'exec-1');
      const total = (await h.ledger.counts(campaign, 'generate')).pending;
      const deps = h.deps();
      const worker = createWorker(deps);
      const stalled = () => deps.logs.flatMap((l) => /"InvocationStalled":(\d)/.exec(l)?.[1] ?? []);
      const first = await worker(event(campaign, 'generate', 'exec-1', generate), lambdaContext());
      expect(first).toMatchObject({ done: 0, keyBlocked: total });
      // nothing settled, no batch open, not the cap: the stalled-progress alarm's metric says 1
      expect(stalled()).toEqual(['1']);
      // act: the key is fixed (and, for a new execution, `sondage start --aws` plans again); the same container is invoked again within the minute
      h.secrets.secrets.set(SECRET_ARN, JSON.stringify({ SONDAGE_TEST_FIX_KEY: good }));
      const shards = execution === 'exec-1' ? generate : (await plan(campaign, execution)).generate;
      const second = await worker(event(campaign, 'generate', execution, shards), lambdaContext(undefined, 0, 'req-2'));
      // assess: every item answered with the fixed key
      expect(second).toMatchObject({ done: total, failed: 0, pending: 0 });
      expect(second.keyBlocked).toBeUndefined();
      expect(stalled()).toEqual(['1', '0']);
      expect(await h.ledger.counts(campaign, 'generate')).toEqual({ pending: 0, done: total, failed: 0 });
    } finally {
      h.secrets.secrets.set(SECRET_ARN, JSON.stringify({}));
      delete process.env['SONDAGE_TEST_FIX_KEY'];
      await server.close();
    }
  });

  it('starts no call that its attempt timeout (models[].timeout_s) would carry past the deadline: the items stay pending, unpaid, for the next invocation', async () => {
    // prepare: an endpoint that answers at once; 100 s left before the deadline (60 s safety)
    await withWireModel('SONDAGE_TEST_DEADLINE_KEY', [{ from: (req) => chatCompletion(req, 'Yes.') }], async (server, uploadOne) => {
      await uploadOne('w-deadline');
      const lateShards = await plan('w-deadline', 'exec-1');
      const total = (await h.ledger.counts('w-deadline', 'generate')).pending;
      // act: neither the default attempt timeout (660 s) nor the call window (aws.min_call_seconds, 120 s) fits in the 100 s left
      const out = await createWorker(h.deps())(event('w-deadline', 'generate', 'exec-1', lateShards.generate), lambdaContext(160_000));
      // assess: nothing sent, nothing reserved, spent or possibly billed, every item pending, and the worker asks to run again
      expect(server.requests).toHaveLength(0);
      expect(out).toMatchObject({ done: 0, failed: 0, pending: total, again: true });
      expect(await h.ledger.budget('w-deadline')).toMatchObject({ spent_usd: 0, reserved_usd: 0, possibly_billed_usd: 0 });

      // act: a model whose attempts end within 30 s fits, with the same time left
      await uploadOne('w-deadline-fits', { timeout_s: 30 });
      const fits = await plan('w-deadline-fits', 'exec-1');
      const out2 = await createWorker(h.deps())(event('w-deadline-fits', 'generate', 'exec-1', fits.generate), lambdaContext(160_000));
      expect(out2).toMatchObject({ done: total, failed: 0, pending: 0 });
      expect(server.requests).toHaveLength(total);
    });
  });

  it('sends no retry whose attempt could not end before the deadline once its backoff is over: the items stay pending for the next invocation', async () => {
    // prepare: an endpoint that answers 503 with Retry-After: 8 s; attempts of 5 s; 12 s left
    // before the deadline (60 s safety), in real time: every first attempt fits (sent within 4 s),
    // no retry does (before, the retry was sent after the backoff, to be aborted by the deadline)
    await withWireModel('SONDAGE_TEST_BACKOFF_KEY', [{ status: 503, headers: { 'retry-after': '8' }, json: { error: { message: 'overloaded', type: 'server_error' } } }], async (server, uploadOne) => {
      await uploadOne('w-backoff', { timeout_s: 5 }, (doc) => void (doc.concurrency = 64));
      const shard = (await plan('w-backoff', 'exec-1')).generate[0]!;
      const total = shard.end - shard.start;
      const started = Date.now();
      const context = { ...lambdaContext(), getRemainingTimeInMillis: () => 72_000 - (Date.now() - started) } as ReturnType<typeof lambdaContext>;
      // act
      const input = event('w-backoff', 'generate', 'exec-1', [shard]);
      // One copy of the worker: all of the campaign's concurrency, every first attempt at once.
      const out = await createWorker(h.deps())({ ...input, BatchInput: { ...input.BatchInput, copies: 1 } }, context);
      // assess: one request an item, none after the backoff; every item pending (not failed), and the worker asks to run again
      expect(server.requests).toHaveLength(total);
      expect(out).toMatchObject({ done: 0, failed: 0, pending: total, again: true });
      expect(await h.ledger.counts('w-backoff', 'generate')).toMatchObject({ done: 0, failed: 0 });
      expect((await h.ledger.budget('w-backoff')).reserved_usd).toBeCloseTo(0, 12);
    });
  });

  it('stops the calls of a model whose provider asks to wait a day (Retry-After), records when to resume, and does not ask to be invoked again', async () => {
    // prepare: an endpoint that answers 429 with Retry-After: 86400; 10 s before the deadline
    await withWireModel('SONDAGE_TEST_LONGWAIT_KEY', [{ status: 429, headers: { 'retry-after': '86400' }, json: { error: { message: 'rate limited', type: 'rate_limit_error' } } }], async (server, uploadOne) => {
      await uploadOne('w-longwait', { timeout_s: 5 });
      const shard = (await plan('w-longwait', 'exec-1')).generate[0]!;
      const total = shard.end - shard.start;
      const before = Date.now();
      // act
      const out = await createWorker(h.deps())(event('w-longwait', 'generate', 'exec-1', [shard]), lambdaContext(70_000));
      // assess: no retry waited for; the items are pending in the ledger but blocked, so the batch
      // loop ends; the failure status --aws shows says when to resume and how
      expect(Date.now() - before).toBeLessThan(8_000);
      expect(server.requests.length).toBeLessThanOrEqual(total);
      expect(out).toMatchObject({ done: 0, failed: 0, pending: 0, waitBlocked: total, again: false });
      expect(await h.ledger.counts('w-longwait', 'generate')).toMatchObject({ done: 0, failed: 0, pending: total });
      const failures = (await h.ledger.failures('w-longwait')).filter((f) => f.error === 'ProviderWaitTooLong');
      expect(failures).toHaveLength(1);
      expect(failures[0]!.cause).toMatch(/asked to wait 24h00m .*\(Retry-After\).*Run `sondage start --aws` again after \d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ to resume/);
      expect((await h.ledger.budget('w-longwait')).reserved_usd).toBeCloseTo(0, 12);
    });
  });

  it('asks an item that failed for good again only when BatchInput.retryFailed is set', async () => {
    // prepare: every item of the first shard settled, its first item failed for good
    await upload('w-retry');
    const { generate } = await plan('w-retry', 'exec-1');
    const shard = generate[0]!;
    const ids = [...(await h.ledger.pendingItems('w-retry', 'generate'))].slice(shard.start, shard.end);
    await h.ledger.commitPart({ campaign: 'w-retry', phase: 'generate', model: shard.model, language: shard.language, partKey: 'part-settled', done: ids.slice(1), failed: [], failedPermanently: ids.slice(0, 1), costUsd: 0 });
    const worker = createWorker(h.deps());
    // The execution that planned: the budget's fence admits its workers only.
    const input = event('w-retry', 'generate', 'exec-1', [shard]);
    // act
    const plain = await worker({ ...input, BatchInput: { ...input.BatchInput, retryFailed: false } }, lambdaContext(undefined, 0, 'req-1'));
    const retry = await worker({ ...input, BatchInput: { ...input.BatchInput, retryFailed: true } }, lambdaContext(undefined, 0, 'req-2'));
    // assess
    expect(plain).toMatchObject({ done: 0, failed: 0, pending: 0, again: false });
    expect(retry).toMatchObject({ done: 1, failed: 0, pending: 0, again: false });
    expect(await h.ledger.pendingAmong('w-retry', { phase: 'generate', model: shard.model, language: shard.language }, ids, { retryFailed: true })).toEqual(new Set());
    await expect(worker({ ...input, BatchInput: { ...input.BatchInput, retryFailed: 'yes' } }, lambdaContext())).rejects.toThrow(/BatchInput\.retryFailed: expected true or false/);
  });

  it('runs a campaign whose name holds dots, under the execution name the CLI gives it and under any name Step Functions accepts', async () => {
    // prepare: `sondage start --aws` names the execution; someone may also start one by hand in the console
    await upload('w.dots.v2');
    const byCli = executionName('w.dots.v2');
    expect(byCli).toMatch(/^[A-Za-z0-9_-]{1,80}$/);
    for (const execution of [byCli, 'w.dots.v2 by hand'.replaceAll(' ', '.'), '..']) {
      // act: the plan and the worker over every shard the plan listed
      const { generate } = await plan('w.dots.v2', execution);
      const out = sum(await Promise.all([createWorker(h.deps())(event('w.dots.v2', 'generate', execution, generate), lambdaContext(undefined, 0, `req-${execution}`))]));
      // assess: the first execution answers everything; the others find nothing left
      expect(out.pending).toBe(0);
    }
    const counts = await h.ledger.counts('w.dots.v2', 'generate');
    expect(counts.pending).toBe(0);
    expect(counts.done).toBeGreaterThan(0);
    // a name Step Functions itself would refuse is refused, naming why
    await expect(createPlan({ ...h.deps(), glueDatabase: 'db' })({ campaign: 'w.dots.v2', execution: 'a/b' }, lambdaContext())).rejects.toThrow(/plan event: execution: "a\/b" holds a character Step Functions refuses/);
    await expect(createPlan({ ...h.deps(), glueDatabase: 'db' })({ campaign: 'w.dots.v2', execution: 'x'.repeat(81) }, lambdaContext())).rejects.toThrow(/execution: expected at most 80 characters/);
  });

  it('counts its turns in the batch loop and, past MAX_WORKER_TURNS, fails the batch naming its shards and what to do', async () => {
    // prepare
    await upload('w-turns');
    const { generate } = await plan('w-turns', 'exec-1');
    const worker = createWorker(h.deps());
    const shards = generate.slice(0, 1);
    // act: the first turn, then the turn after an earlier `again` (the loop hands the previous answer at $.result)
    const first = await worker(event('w-turns', 'generate', 'exec-1', shards), lambdaContext(undefined, 0, 'req-t1'));
    const later = await worker({ ...event('w-turns', 'generate', 'exec-1', shards), result: { ...first, again: true, turns: 41 } }, lambdaContext(undefined, 0, 'req-t2'));
    // assess
    expect(first.turns).toBe(1);
    expect(later.turns).toBe(42);
    // act: the turn past the cap, as the state machine would send it
    const last = { done: 0, failed: 0, pending: 7, openBatches: 1, costUsd: 0, again: true, turns: MAX_WORKER_TURNS };
    const s = shards[0]!;
    await expect(worker({ ...event('w-turns', 'generate', 'exec-1', shards), result: last }, lambdaContext(undefined, 0, 'req-t3'))).rejects.toThrow(
      new RegExp(
        `worker: the batch of shards generate ${s.model}/en \\[${s.start}, ${s.end}\\) was invoked ${MAX_WORKER_TURNS} times and still answered again ` +
          '\\(last answer: 7 pending, 1 provider batch\\(es\\) open\\).*`sondage status --aws`.*`sondage start --aws` again',
      ),
    );
    await expect(worker({ ...event('w-turns', 'generate', 'exec-1', shards), result: { ...last, turns: 0 } }, lambdaContext())).rejects.toThrow(/result\.turns: expected the invocations so far/);
  });

  it('never writes a provider key to a log line, an error or the ledger: a failing shard, its give-up step, the GPU job\'s log', async () => {
    // prepare: a key in the secret, and a store whose part upload fails quoting it (an SDK echoing a header)
    const key = 'sk-test-worker-secret-0123456789';
    h.secrets.secrets.set(SECRET_ARN, JSON.stringify({ SONDAGE_TEST_WORKER_KEY: key }));
    try {
      await upload('w-redact');
      const { generate } = await plan('w-redact', 'exec-1');
      const deps = h.deps();
      const store = new Proxy(deps.store, {
        get: (t, prop) =>
          prop === 'put'
            ? async (k: string, body: Uint8Array | string) => {
                if (k.includes('/replies/')) throw new Error(`PutObject refused: Authorization: Bearer ${key}`);
                return t.put(k, body);
              }
            : (Reflect.get(t, prop, t) as unknown),
      });
      const worker = createWorker({ ...deps, store });
      const input = event('w-redact', 'generate', 'exec-1', generate.slice(0, 1));
      // act: the batch fails; then the give-up step, handed a Cause that quotes the key
      const err = await worker(input, lambdaContext(undefined, 0, 'req-r1')).then(
        () => new Error('expected the worker to fail'),
        (e: unknown) => e as Error,
      );
      const gaveUp = await createWorker(deps)({ ...input, failure: { Error: 'Error', Cause: `PutObject refused: Authorization: Bearer ${key}` } }, lambdaContext(undefined, 0, 'req-r2'));
      // the GPU job's log: probeJob logs String(err) as a field
      const lines: string[] = [];
      const gpuLog = jsonLineLog('sondage-gpu', (l) => void lines.push(l));
      gpuLog.error('the worker failed; Batch retries the job', { error: String(new Error(`401 from ${key}`)), nested: [{ cause: new Error(key) }] });
      // assess
      expect(err.message).toMatch(/PutObject refused: Authorization: Bearer \[redacted\]/);
      expect(gaveUp.gaveUp).toHaveLength(1);
      const failures = await h.ledger.failures('w-redact');
      expect(failures.map((f) => f.error)).toEqual(['ShardFailed']);
      expect(deps.logs.some((l) => l.includes('[redacted]'))).toBe(true);
      expect(lines[0]).toContain('401 from [redacted]');
      for (const text of [...deps.logs, ...lines, err.message, err.stack ?? '', ...failures.map((f) => f.cause)]) expect(text).not.toContain(key);
    } finally {
      h.secrets.secrets.set(SECRET_ARN, JSON.stringify({}));
      delete process.env['SONDAGE_TEST_WORKER_KEY'];
    }
  });

  it('refuses a malformed event and names what is wrong', async () => {
    const worker = createWorker(h.deps());
    await expect(worker({ Items: [{ model: 'alpha', start: 5, end: 2 }], BatchInput: { campaign: 'w-full', pollSeconds: 'soon', copies: 0 } }, lambdaContext())).rejects.toThrow(
      /worker event: BatchInput\.execution: expected the execution name \(\$\$\.Execution\.Name\), a non-empty string; BatchInput\.pollSeconds: expected the seconds the Wait state waits \(a number ≥ 0\); BatchInput\.copies: expected the wave's worker copies \(an integer ≥ 1\); Items\[0\]: expected \{ phase, model, language, start, end, mode: sync\|batch \}/,
    );
    // A phase the campaign's battery does not run here is refused by name, before anything is asked.
    await upload('w-phase');
    await expect(worker({ Items: [{ phase: 'analyse', model: 'alpha', language: 'en', start: 0, end: 1, mode: 'sync' }], BatchInput: { campaign: 'w-phase', execution: 'exec-1' } }, lambdaContext())).rejects.toThrow(
      /worker: shard names phase "analyse", which battery far6 does not run here \(phases: generate, judge\)/,
    );
  });
});
