/**
 * The item processor's worker (issue 4): runs the shards of one ItemBatcher batch through the same
 * runners as the local run (runPartition, or runBatchPartition for `mode: batch`), with the bucket
 * as blob store and DynamoDB as ledger. Journals live in /tmp, which does not survive the
 * invocation, so the worker stops ~60 s before its timeout and commits every journaled reply
 * before it returns; what is left pending comes back with `again`, and the state machine invokes
 * it again after a Wait. A shard whose runner throws (a provider bug, an S3 or DynamoDB error) has
 * its journals committed and its reservations handed back before the error propagates (salvage),
 * so what was paid for is neither lost nor asked again by the retry.
 *
 * Idempotency is the ledger's, not Powertools Idempotency's: an item is asked only while the
 * ledger has it pending, and a part's commit marks its items done, settles its reservations and
 * adds its cost in one transaction. A re-delivered or re-invoked batch finds its items done and
 * asks nothing twice, even when the first invocation died half-way, which a cached response (what
 * Powertools Idempotency stores) could not express.
 */
import { Logger } from '@aws-lambda-powertools/logger';
import { injectLambdaContext } from '@aws-lambda-powertools/logger/middleware';
import { Metrics, MetricUnit } from '@aws-lambda-powertools/metrics';
import { logMetrics } from '@aws-lambda-powertools/metrics/middleware';
import middy from '@middy/core';
import type { Context } from 'aws-lambda';
import { mkdir, rm, writeFile } from 'node:fs/promises';
import { dirname, join } from 'node:path';
import type { Shard, WorkerBatchInput, WorkerEvent, WorkerOutput } from '../../lib/config/pipeline.js';
import type { BatteryModel } from '../../lib/design/battery.js';
import type { ModelEntry } from '../../lib/design/campaign.js';
import type { LanguageCode, PromptItem } from '../../lib/core/types.js';
import { SondageError } from '../../lib/errors.js';
import { createBatchClient, createProvider } from '../../lib/providers/registry.js';
import { DEFAULT_RETRY } from '../../lib/run/callWithRetry.js';
import { chosenReplies, ensurePrompts, generateReader, judgeItems, judgeReader, partitionSpec, rateLimited } from '../../lib/run/partitionSpec.js';
import type { SharedPartitionFields } from '../../lib/run/partitionSpec.js';
import { RateLimiters } from '../../lib/run/RateLimiter.js';
import type { RunContext } from '../../lib/run/runCampaign.js';
import { runBatchPartition } from '../../lib/run/runBatchPartition.js';
import { adoptJournals, runPartition } from '../../lib/run/runPartition.js';
import type { PartitionOutcome, PartitionSpec } from '../../lib/run/runPartition.js';
import { callsPerCopy, copyLimits, judgeShardDoneKey, phaseCopies, registeredDigest, registeredKey } from '../../lib/run/shards.js';
import { DuckDb } from '../../lib/store/DuckDb.js';
import { layout } from '../../lib/store/index.js';
import { ParquetWriter } from '../../lib/store/ParquetWriter.js';
import type { BlobStore, Ledger } from '../../lib/store/types.js';
import { campaignCache } from '../shared/campaignInput.js';
import { storesFromEnv } from '../shared/env.js';
import { redactKeys, redactedError } from '../shared/secrets.js';
import type { HandlerDeps } from '../shared/types.js';
import { ShardWork } from './inflight.js';

/** Stop this long before the Lambda's timeout: the last chunk's calls end and their part is committed. */
export const DEFAULT_SAFETY_MS = 60_000;

export interface WorkerDeps extends HandlerDeps {
  /** Milliseconds before the timeout at which the worker stops (default DEFAULT_SAFETY_MS). */
  readonly safetyMs?: number;
  /** Items per reservation and reply rows per part (default: the local run's 64 and 20,000). */
  readonly chunkSize?: number;
  readonly partRows?: number;
}

const PHASES = ['generate', 'judge'] as const;

/** A manifest shard whose language the campaign runs. */
type RunShard = Shard & { readonly language: LanguageCode };

function runShard(ctx: RunContext, shard: Shard): RunShard {
  const languages: readonly string[] = ctx.battery.languages;
  if (!languages.includes(shard.language)) {
    throw new SondageError(`worker: shard language ${JSON.stringify(shard.language)} is not one campaign ${ctx.campaign.name} runs (${languages.join(', ')})`);
  }
  return shard as RunShard;
}

function parseEvent(event: unknown): WorkerEvent {
  const e = event as Partial<WorkerEvent> | null;
  const problems: string[] = [];
  const b = e?.BatchInput as Partial<WorkerBatchInput> | undefined;
  if (typeof b?.campaign !== 'string' || b.campaign === '') problems.push('BatchInput.campaign: expected the campaign name');
  if (!PHASES.includes(b?.phase as never)) problems.push(`BatchInput.phase: expected one of ${PHASES.join(', ')}`);
  if (typeof b?.execution !== 'string' || !/^[A-Za-z0-9_-]+$/.test(b.execution)) problems.push('BatchInput.execution: expected the execution name');
  if (b?.pollSeconds !== undefined && !(typeof b.pollSeconds === 'number' && Number.isFinite(b.pollSeconds) && b.pollSeconds >= 0)) {
    problems.push('BatchInput.pollSeconds: expected the seconds the Wait state waits (a number ≥ 0)');
  }
  if (b?.retryFailed !== undefined && typeof b.retryFailed !== 'boolean') problems.push('BatchInput.retryFailed: expected true or false');
  if (!Array.isArray(e?.Items)) problems.push('Items: expected the array of shards the ItemBatcher sends');
  else {
    e.Items.forEach((s: Partial<Shard>, i) => {
      const ok =
        typeof s?.model === 'string' &&
        typeof s.language === 'string' &&
        Number.isInteger(s.start) &&
        Number.isInteger(s.end) &&
        s.start! >= 0 &&
        s.end! >= s.start! &&
        (s.mode === 'sync' || s.mode === 'batch');
      if (!ok) problems.push(`Items[${i}]: expected { model, language, start, end, mode: sync|batch } with 0 ≤ start ≤ end`);
    });
  }
  if (problems.length > 0) throw new SondageError(`worker event: ${problems.join('; ')}; got ${JSON.stringify(event).slice(0, 500)}`);
  return e as WorkerEvent;
}

/** The handler over its dependencies (tests pass stores on local servers and a context whose clock they drive). */
export function createHandler(deps: WorkerDeps) {
  const campaigns = campaignCache(deps.store, deps.tmpDir);
  const base = async (event: unknown, context: Context): Promise<WorkerOutput> => {
    const e = parseEvent(event);
    try {
      await deps.loadKeys();
      return await work(deps, await campaigns(e.BatchInput.campaign, e.BatchInput.execution), e, context);
    } catch (err) {
      throw redactedError(err);
    }
  };
  return middy(base).use(injectLambdaContext(deps.logger)).use(logMetrics(deps.metrics));
}

/**
 * An AbortSignal that fires `safetyMs` before the Lambda's timeout: a timer, and a check after
 * every reply (cheap, and what a test drives through the context's clock).
 */
function deadline(context: Context, safetyMs: number) {
  const controller = new AbortController();
  const check = () => {
    if (!controller.signal.aborted && context.getRemainingTimeInMillis() <= safetyMs) controller.abort();
  };
  const timer = setTimeout(() => controller.abort(), Math.max(0, context.getRemainingTimeInMillis() - safetyMs));
  return { signal: controller.signal, check, abort: () => controller.abort(), clear: () => clearTimeout(timer) };
}

async function work(deps: WorkerDeps, ctx: RunContext, e: WorkerEvent, context: Context): Promise<WorkerOutput> {
  const { campaign, battery } = ctx;
  const { phase, execution } = e.BatchInput;
  const { store, logger, metrics } = deps;
  const time = deadline(context, deps.safetyMs ?? DEFAULT_SAFETY_MS);
  // Reservations carry the execution as run id, so the next execution's plan releases the ones a
  // killed worker left; reservation ids and part names carry the invocation, unique per shard.
  // The plan registers the generate items (registeredKey marks each partition it did); judge
  // items are registered here, once (a later invocation's registration finds them known and
  // writes nothing).
  const inflight = new ShardWork();
  const ledger = inflight.ledger(deps.ledgerFor(execution));
  const invocation = `${execution}-${context.awsRequestId}`.replace(/[^A-Za-z0-9_-]/g, '_');
  const scratch = join(deps.tmpDir, 'sondage-worker', invocation);
  const writer = await ParquetWriter.create({ tmpDir: join(scratch, 'parquet'), threads: 1 });
  const db = phase === 'judge' ? await DuckDb.open() : undefined;

  // Each copy takes its share of the rate limits: every copy of the phase may call the same model.
  const copies = phaseCopies(campaign, phase);
  const limiters = new RateLimiters();
  const providerCtx = { seed: campaign.seed, file: campaign.file, onRateLimitHints: limiters.observe, ...(battery.simulator ? { simulator: battery.simulator } : {}) };
  const stop: { reason?: 'budget' | 'aborted' } = {};
  const shared: Omit<SharedPartitionFields, 'runId'> = {
    campaign: campaign.name,
    retry: DEFAULT_RETRY,
    ledger,
    semaphore: inflight.semaphore(callsPerCopy(campaign, phase)),
    chunkSize: deps.chunkSize ?? 64,
    partRows: deps.partRows ?? 20_000,
    signal: time.signal,
    onReply: time.check,
    stop,
    // Items failed permanently are asked again (`sondage start --aws --retry-failed`, issue 3).
    ...(e.BatchInput.retryFailed === true ? { retryFailed: true } : {}),
  };
  const total = { done: 0, failed: 0, pending: 0, openBatches: 0, costUsd: 0, keyBlocked: 0 };
  // Messages of rejected keys already recorded by this invocation (one record per provider).
  const keyRecorded = new Set<string>();
  try {
    for (const item of e.Items) {
      const shard = runShard(ctx, item);
      if (stop.reason) {
        // Not started: every item of the shard that the ledger has pending is still to do.
        total.pending += await pendingOfShard(ctx, ledger, phase, shard, e.BatchInput.retryFailed === true);
        continue;
      }
      const entry = entryFor(ctx, phase, shard);
      const judged = modelOf(ctx, shard.model);
      const partition = [...battery.expand(judged, shard.language)];
      const sources = partition.slice(shard.start, shard.end);
      const items = phase === 'generate' ? sources : await judgeShardItems(ctx, store, writer, db!, join(scratch, 'replies'), shard, sources);
      const provider = rateLimited(limiters, await createProvider(phase === 'judge' ? { ...entry, role: 'judge' } : entry, providerCtx), copyLimits(entry, copies));
      const batch = shard.mode === 'batch' ? await createBatchClient(entry, providerCtx) : undefined;
      const spec = partitionSpec(
        { ...shared, runId: `${invocation}-${shard.start}` },
        {
          phase,
          model: shard.model,
          language: shard.language,
          items,
          provider,
          price: entry.price,
          batch,
          readReply: phase === 'generate' ? generateReader(battery) : judgeReader(battery, entry.id),
          // Counted, so that a failed shard can wait for its part commits to end before it adopts.
          store: inflight.counted(store),
          writer: inflight.counted(writer),
          // One folder per shard: two shards of a partition in one container must not adopt each other's journals.
          journalDir: join(scratch, 'journal', phase, `model=${shard.model}`, `language=${shard.language}`, `shard=${shard.start}-${shard.end}`),
          // Named in the message when the provider rejects the key (the variable, never the key).
          keyEnv: entry.api_key_env,
        },
      );
      inflight.reset(phase === 'generate' && (await registered(store, campaign.name, shard, partition)));
      let out: PartitionOutcome;
      try {
        out = batch ? await runBatchPartition({ ...spec, batch, pollMs: 0, once: true }) : await runPartition(spec);
      } catch (err) {
        await salvage(err, { spec, batch: batch !== undefined, inflight, time, context, logger });
        throw err;
      }
      const open = batch ? (await ledger.openBatches(campaign.name, phase, shard.model, shard.language)).length : 0;
      total.done += out.done + out.adopted;
      total.failed += out.failed;
      total.pending += out.pending;
      total.openBatches += open;
      total.costUsd += out.costUsd;
      if (out.keyFailure !== undefined) {
        // Not in `pending`: another invocation cannot help until the key is fixed, so these items
        // do not make the Map loop; they stay pending in the ledger for the next execution.
        total.keyBlocked += out.keyBlocked ?? 0;
        if (!keyRecorded.has(out.keyFailure)) {
          keyRecorded.add(out.keyFailure);
          await keyFailed(deps, { campaign: campaign.name, phase, execution, model: shard.model, message: out.keyFailure });
        }
      }
      if (phase === 'judge' && out.pending === 0 && open === 0) await markJudged(ctx, ledger, store, shard, sources, items);
    }
  } finally {
    time.clear();
    db?.close();
    await writer.close();
    await rm(scratch, { recursive: true, force: true });
  }
  const stopped = stop.reason === 'budget' ? 'budget' : undefined;
  const { keyBlocked, ...counts } = total;
  const out: WorkerOutput = {
    ...counts,
    ...(keyBlocked > 0 ? { keyBlocked } : {}),
    ...(stopped ? { stopped } : {}),
    // Out of budget, pending items wait for a larger cap and a re-started execution, not a Wait loop.
    again: total.openBatches > 0 || (total.pending > 0 && !stopped),
  };
  // The Wait that follows `again` reads the same pollSeconds: the log says when the next invocation comes.
  const next = out.again && e.BatchInput.pollSeconds !== undefined ? { nextInvocationSeconds: e.BatchInput.pollSeconds } : {};
  logger.info('shards run', { campaign: campaign.name, phase, execution, shards: e.Items.length, ...out, ...next });
  metrics.addDimension('campaign', campaign.name);
  metrics.addDimension('phase', phase);
  metrics.addMetric('ItemsDone', MetricUnit.Count, total.done);
  metrics.addMetric('ItemsFailed', MetricUnit.Count, total.failed);
  metrics.addMetric('CostUsd', MetricUnit.NoUnit, total.costUsd);
  if (keyBlocked > 0) metrics.addMetric('ItemsKeyBlocked', MetricUnit.Count, keyBlocked);
  return out;
}

/** Whether the plan registered the partition's items: its marker holds the digest of the ids expanded here. */
async function registered(store: BlobStore, campaign: string, shard: Shard, partition: readonly PromptItem[]): Promise<boolean> {
  const body = await store.get(registeredKey(campaign, shard));
  return body !== undefined && Buffer.from(body).toString('utf8') === registeredDigest(partition.map((i) => i.item_id));
}

/**
 * A provider rejected its API key (runPartition's keyFailure, issue 3): logged, and recorded in the
 * ledger as a failure of the execution, so that `sondage status --aws` shows it although the Map
 * item succeeds (failing it would fail the whole Map, and retrying cannot help until the key is
 * fixed). The message names the model and the key's variable; keys loaded from the secret are
 * redacted once more in case a provider quoted one.
 */
async function keyFailed(
  deps: WorkerDeps,
  f: { campaign: string; phase: 'generate' | 'judge'; execution: string; model: string; message: string },
): Promise<void> {
  const message = redactKeys(f.message);
  deps.logger.error('provider rejected the API key', { campaign: f.campaign, phase: f.phase, execution: f.execution, model: f.model, detail: message });
  await deps.recordFailure({ campaign: f.campaign, execution: f.execution, at: new Date().toISOString(), error: 'ProviderKeyRejected', cause: `${f.phase}: ${message}` });
}

/** How long a failed shard waits for its calls and commits to end before it adopts its journals. */
const QUIET_MAX_MS = 30_000;

/**
 * After a shard's runner threw (a provider bug, an S3 or DynamoDB error): stops the calls still in
 * flight, waits for them and their part commits to end, then commits the journals they left in
 * /tmp, which does not outlive the invocation, and hands back the reservations of the calls that
 * commit counted. The replies paid for are kept, their items are not asked again, and the money
 * is not held until the next plan's releaseStale. A batch shard's journals are rebuilt from the
 * provider's results by the invocation that re-attaches, and its reservations stay with its open
 * batches. The runner's error is thrown by the caller either way.
 */
async function salvage(
  err: unknown,
  s: { spec: PartitionSpec; batch: boolean; inflight: ShardWork; time: { abort(): void }; context: Context; logger: Logger },
): Promise<void> {
  const { spec, inflight, logger } = s;
  const where = { campaign: spec.campaign, phase: spec.phase, model: spec.model, language: spec.language, journalDir: spec.journalDir };
  s.time.abort();
  if (s.batch) return;
  const quiet = await inflight.quiet(Math.min(QUIET_MAX_MS, Math.max(0, s.context.getRemainingTimeInMillis() - 10_000)));
  if (!quiet) {
    // Adopting while a commit of the same journal runs could store its replies twice.
    logger.error('shard failed and did not get quiet: its uncommitted replies are lost', { ...where, error: String(err) });
    return;
  }
  try {
    const adopted = await adoptJournals(spec, new Map(spec.items.map((i) => [i.item_id, i])));
    const held = inflight.reservations;
    for (const id of held) await spec.ledger.release(spec.campaign, id);
    logger.warn('shard failed; what it had journaled is committed', { ...where, adopted, released: held.length, error: String(err) });
  } catch (adoptErr) {
    logger.error('shard failed and its journals could not be committed', { ...where, error: String(err), adoptError: String(adoptErr) });
  }
}

function modelOf(ctx: RunContext, id: string): ModelEntry {
  const model = ctx.campaign.models.find((m) => m.id === id);
  if (!model) throw new SondageError(`worker: shard names model ${JSON.stringify(id)}, which campaign ${ctx.campaign.name} does not have (models: ${ctx.campaign.models.map((m) => m.id).join(', ')})`);
  return model;
}

/** The entry that answers a shard's items: the respondent in the generate phase, the judge in the judge phase. */
function entryFor(ctx: RunContext, phase: 'generate' | 'judge', shard: Shard): ModelEntry {
  if (phase === 'generate') return modelOf(ctx, shard.model);
  if (!ctx.campaign.judge) throw new SondageError(`worker: judge shard for campaign ${ctx.campaign.name}, which has no judge`);
  return ctx.campaign.judge;
}

/**
 * The judge items of a slice: the chosen replies of the judged partition (its reply parts copied
 * from the bucket and read with DuckDB, by the analysis's rule), and their prompts part, rewritten
 * each time (a later invocation may judge replies an earlier one did not have).
 */
async function judgeShardItems(
  ctx: RunContext,
  store: BlobStore,
  writer: ParquetWriter,
  db: DuckDb,
  root: string,
  shard: RunShard,
  sources: readonly PromptItem[],
): Promise<PromptItem[]> {
  const { campaign, battery } = ctx;
  const prefix = layout.partitionPrefix(campaign.name, 'generate', 'replies', shard.model, shard.language);
  for (const key of await store.list(prefix)) {
    if (!key.endsWith('.parquet')) continue;
    const body = await store.get(key);
    if (body === undefined) continue;
    await mkdir(dirname(join(root, key)), { recursive: true });
    await writeFile(join(root, key), body);
  }
  const chosen = await chosenReplies(db, root, campaign.name, shard.model, shard.language);
  const judge = campaign.judge!;
  const judgeModel: BatteryModel = { id: judge.id, settings: judge.settings };
  const items = judgeItems(battery, judgeModel, sources, chosen);
  await ensurePrompts(
    writer,
    store,
    { campaign: campaign.name, phase: 'judge', model: shard.model, language: shard.language, partName: `part-plan-${shard.start}-${shard.end}.parquet` },
    items,
    battery.prompts,
    true,
  );
  return items;
}

/**
 * Leaves the judge shard's done marker (judgeShardDoneKey) once its slice can change no more: every
 * source item settled in the generate phase, and every judge item settled.
 */
async function markJudged(ctx: RunContext, ledger: Ledger, store: BlobStore, shard: Shard, sources: readonly PromptItem[], items: readonly PromptItem[]) {
  const name = ctx.campaign.name;
  const generatePending = await ledger.pendingAmong(name, 'generate', sources.map((i) => i.item_id));
  if (generatePending.size > 0) return;
  const judgePending = await ledger.pendingAmong(name, 'judge', items.map((i) => i.item_id));
  if (judgePending.size > 0) return;
  await store.put(judgeShardDoneKey(name, shard), new Date().toISOString());
}

/**
 * Items of a shard not started (the deadline or the budget stopped the invocation first): the
 * generate items the ledger has pending, or, for a judge shard, its source items the judge reads
 * (its judge items are built from the replies only when it runs).
 */
async function pendingOfShard(ctx: RunContext, ledger: Ledger, phase: 'generate' | 'judge', shard: RunShard, retryFailed: boolean): Promise<number> {
  const sources = [...ctx.battery.expand(modelOf(ctx, shard.model), shard.language)].slice(shard.start, shard.end);
  if (phase === 'judge') return sources.filter((i) => ctx.battery.needsJudge(i)).length;
  return (await ledger.pendingAmong(ctx.campaign.name, phase, sources.map((i) => i.item_id), { retryFailed })).size;
}

let cold: ReturnType<typeof createHandler> | undefined;

/** The Lambda entry point: dependencies (and the provider keys, at the first call) once per container. */
export const handler = (event: unknown, context: Context): Promise<WorkerOutput> => {
  if (!cold) {
    const stores = storesFromEnv('worker', { withKeys: true });
    cold = createHandler({
      ...stores,
      logger: new Logger({ serviceName: 'sondage-worker' }),
      metrics: new Metrics({ namespace: 'sondage', serviceName: 'sondage-worker' }),
    });
  }
  return cold(event, context);
};
