/**
 * The local run, read top-down: plan, then the battery's phases wave by wave, each wave a set of
 * (phase, model, language) partitions (runWave.ts), then the analysis. What it opens is in
 * runStores.ts, its partition threads in waveThreads.ts, its progress line in runProgress.ts, its
 * options and summary in runTypes.ts.
 */
import { randomBytes } from 'node:crypto';
import { analyzeLocal } from '../analysis/analyzeLocal.js';
import { checkCampaignRepliesCoverLedger } from '../analysis/storedCoverage.js';
import type { Campaign } from '../design/campaign.js';
import type { EmbeddedLedger, LocalBlobStore, ParquetWriter } from '../store/index.js';
import { layout } from '../store/index.js';
import type { ReplyRow } from '../store/types.js';
import { createAnswerers, type Answerers } from './answerers.js';
import { DEFAULT_MAX_WAIT_MS, DEFAULT_RETRY, type RetryPolicy } from './callWithRetry.js';
import { CallWatch } from './CallWatch.js';
import { completedWithDesign, completeReplies, designDigest, designFingerprint, recordIfComplete } from './completeCampaign.js';
import { designDataDigest } from './designDataDigest.js';
import type { RunContext } from './context.js';
import { assertWithinBudget } from './partitionSpec.js';
import { planCampaign } from './planCampaign.js';
import { silentProgress } from './progress.js';
import { RateLimiters } from './RateLimiter.js';
import { markReadingsChecked } from './readingsChecked.js';
import { refreshCampaignReadings } from './refreshCampaignReadings.js';
import { RunProgress } from './runProgress.js';
import { RunStores, prepareLedger, recordPlan } from './runStores.js';
import type { PhaseSummary, RunOptions, RunSummary } from './runTypes.js';
import { runWaves } from './runWave.js';
import { Semaphore } from './Semaphore.js';
import { DEFAULT_PART_ROWS } from './partitionTypes.js';
import type { StopState } from './stopState.js';
import type { PartitionEnv } from './wavePartition.js';
import { WaveThreads } from './waveThreads.js';

export type { RunContext } from './context.js';
export type { PhaseSummary, RunOptions, RunSummary } from './runTypes.js';

/** The fewest calls a chunk reserves for (RunOptions.chunkSize). */
const DEFAULT_CHUNK = 64;

/**
 * The local run: plan, then the battery's phases wave by wave (a phase starts once the phases it
 * consumes have run; phases of one wave run side by side), then the analysis, on the embedded
 * default (files laid out like the S3 bucket, SQLite ledger, DuckDB). Safe to kill at any point
 * and run again: the ledger and the journals make the next run ask only for what is missing and
 * count nothing twice.
 */
export async function runCampaign(ctx: RunContext, opts: RunOptions = {}): Promise<RunSummary> {
  const { campaign } = ctx;
  const log = opts.log ?? (() => {});
  const dataDir = opts.dataDir ?? ctx.dataDir;
  const runId = newRunId();
  const calls = callSettings(campaign, opts);
  const stop: StopState = {};
  const watch = new CallWatch();
  const progress = new RunProgress(opts.progress ?? silentProgress, watch, campaign.budget_usd);
  const stores = new RunStores(dataDir);
  const threads = new WaveThreads({
    ctx,
    requested: opts.threads,
    hooks: opts.onReply !== undefined || opts.batch?.onSubmitted !== undefined,
    init: { campaign, dataDir, runId, ...calls, retryFailed: opts.retryFailed === true },
    ledger: stores.ledger,
    stop,
    onReplies: progress.tick,
    log,
  });
  // An abort reaches the threads' calls as it reaches the main thread's (through the signal).
  const onAbort = (): void => {
    stop.reason ??= 'aborted';
    threads.broadcastStop();
  };
  try {
    // ---- plan: counted and priced; the threads the first wave wants boot meanwhile ----------
    // Unless the campaign completed under this very design: it most likely goes straight to its
    // analysis, and threads booted for nothing cost the demo's rerun ~2 s of its ~7 (a first
    // wave that does run starts them itself).
    const data = await designDataDigest(ctx);
    const design = designDigest(ctx, data);
    const rerun = await completedWithDesign(stores.store, campaign.name, design);
    const plan = planCampaign(ctx, rerun ? {} : { onPartition: threads.onPlanPartition });
    assertWithinBudget(campaign, plan, opts.allowPartial);
    // Providers check their settings before anything is written (answerers.ts).
    const answerers = await createAnswerers(ctx, new RateLimiters());
    const { store, ledger, writer } = await stores.open(campaign.name, runId);
    await recordPlan(store, campaign.name, plan, log);
    const orphaned = await prepareLedger(ledger, { ctx, dataDir, runId, plan, log });
    progress.spent = (await ledger.budget(campaign.name)).spent_usd;
    const env = partitionEnv({ ctx, dataDir, runId, opts, calls, stop, watch, progress, stores, store, ledger, writer, answerers });
    opts.signal?.addEventListener('abort', onAbort, { once: true });

    // ---- waves of phases, each a set of partitions; none when every reply is in ------------
    const phaseNames = ctx.graph.phases.map((p) => p.name);
    const fingerprint = designFingerprint(ctx, plan, data);
    const complete = orphaned.count === 0 ? await completeReplies(store, ledger, campaign.name, phaseNames, fingerprint) : undefined;
    const phases =
      complete !== undefined
        ? await rereadComplete(ctx, dataDir, complete, threads, log)
        : await runWaves({ plan, env, answerers, ledger, progress, threads, stop, partitionPool: opts.partitionConcurrency ?? 2, signal: opts.signal }, ctx.graph.waves);
    // The next run of this same design knows at once whether anything is left to ask.
    if (!opts.signal?.aborted) await recordIfComplete(store, ledger, campaign.name, phaseNames, { fingerprint, digest: design });
    // Every partition brought its readings in line before it ran: the next analysis need not check them.
    if (complete === undefined && !stop.reason && !opts.signal?.aborted) await markReadingsChecked(store, ctx, dataDir, data);
    // Their heaps and DuckDB instances are freed before the analysis takes its share of memory.
    await threads.closeRunning();
    const summary = await runSummary(ledger, { campaign: campaign.name, runId, dataDir, plan, phases }, stop);
    if (stop.reason === 'aborted' || opts.skipAnalysis) return summary;

    // ---- analyse -------------------------------------------------------------------------------
    // At a large campaign's size the analysis takes a minute after the last bar ends: said, so
    // that the run does not look stalled (a complete campaign's rerun said so already).
    if (complete === undefined) log(ANALYSING);
    const analysis = await analyzeLocal(ctx, dataDir, store);
    return { ...summary, resultsPrefix: `${layout.campaignPrefix(campaign.name)}results/`, analysis: analysis.results, table: analysis.table, excluded: analysis.excluded, readouts: analysis.readouts };
  } finally {
    opts.signal?.removeEventListener('abort', onAbort);
    await threads.close();
    await stores.close();
  }
}

/** The line a run logs when its waves have ended and the analysis begins. */
export const ANALYSING = "analysing: the battery's queries and estimators over the stored replies";

/** A run id that sorts by start time: `20260102T030405-a1b2c3`. */
function newRunId(): string {
  return `${new Date().toISOString().replace(/[-:]/g, '').slice(0, 15)}-${randomBytes(3).toString('hex')}`;
}

/** Retries, reservation chunks and part sizes: the same on the main thread and in every partition thread. */
function callSettings(
  campaign: Campaign,
  opts: RunOptions,
): { readonly retry: RetryPolicy; readonly chunkSize: number; readonly partRows: number; readonly sliceSources?: number; readonly onePass?: false } {
  return {
    retry: { maxWaitMs: DEFAULT_MAX_WAIT_MS, ...(opts.retry ?? DEFAULT_RETRY) },
    chunkSize: opts.chunkSize ?? Math.max(DEFAULT_CHUNK, campaign.concurrency),
    partRows: opts.partRows ?? DEFAULT_PART_ROWS,
    ...(opts.sliceSources !== undefined ? { sliceSources: opts.sliceSources } : {}),
    ...(opts.onePass === false ? { onePass: false as const } : {}),
  };
}

/** What a partition run on the main thread needs of the run: stores, providers, and the fields its partitions share. */
function partitionEnv(r: {
  readonly ctx: RunContext;
  readonly dataDir: string;
  readonly runId: string;
  readonly opts: RunOptions;
  readonly calls: ReturnType<typeof callSettings>;
  readonly stop: StopState;
  readonly watch: CallWatch;
  readonly progress: RunProgress;
  readonly stores: RunStores;
  readonly store: LocalBlobStore;
  readonly ledger: EmbeddedLedger;
  readonly writer: ParquetWriter;
  readonly answerers: Answerers;
}): PartitionEnv {
  const { opts, progress } = r;
  const { sliceSources, onePass, ...calls } = r.calls;
  return {
    ctx: r.ctx,
    dataDir: r.dataDir,
    store: r.store,
    writer: r.writer,
    providers: r.answerers.providers,
    batchClients: r.answerers.batchClients,
    shared: {
      campaign: r.ctx.campaign.name,
      runId: r.runId,
      ...calls,
      ledger: r.ledger,
      semaphore: new Semaphore(r.ctx.campaign.concurrency),
      watch: r.watch,
      ...(opts.signal ? { signal: opts.signal } : {}),
      ...(opts.retryFailed ? { retryFailed: true } : {}),
      stop: r.stop,
      onReply: (row: ReplyRow) => {
        progress.tick(row.status === 'ok' ? 1 : 0, row.cost_usd);
        opts.onReply?.(row);
      },
    },
    upstreamDb: r.stores.upstreamDb,
    batch: opts.batch,
    sliceSources,
    onePass,
  };
}

/**
 * Every item of an unchanged design done: said, and straight to the analysis, its readings brought
 * in line with the design first (as `analyze` does). Threads booted while it was planned (its
 * record predates the design digest, or the plan changed with the code) are not needed.
 */
async function rereadComplete(ctx: RunContext, dataDir: string, replies: number, threads: WaveThreads, log: (line: string) => void): Promise<PhaseSummary[]> {
  // The ledger counts every item answered; a replies part removed by hand since is refused here,
  // before the run says the campaign is complete (the analysis would refuse it next).
  await checkCampaignRepliesCoverLedger(dataDir, ctx.campaign.name, ctx.graph.phases.map((p) => p.name));
  log(`${ctx.campaign.name} is complete: every item of its design has its reply (${replies} in all), nothing to ask; analysing`);
  await threads.closeEarly();
  const reread = new Map((await refreshCampaignReadings(ctx, dataDir)).map((r) => [r.phase, r]));
  return ctx.graph.phases.map(({ name }) => {
    const r = reread.get(name);
    return { phase: name, items: 0, done: 0, failed: 0, adopted: 0, pending: 0, costUsd: 0, reread: r?.reread ?? 0, rereadChanged: r?.rereadChanged ?? 0 };
  });
}

/** The run's summary before the analysis: its phases, the ledger's money, and why it stopped. */
async function runSummary(ledger: EmbeddedLedger, run: Pick<RunSummary, 'campaign' | 'runId' | 'dataDir' | 'plan' | 'phases'>, stop: StopState): Promise<RunSummary> {
  // Kept beside the budget so that `sondage status` names the model after this run has ended.
  for (const [model, excessUsd] of stop.overruns ?? []) await ledger.recordOverrun(run.campaign, model, excessUsd);
  const budget = await ledger.budget(run.campaign);
  return {
    ...run,
    spentUsd: budget.spent_usd,
    capUsd: budget.cap_usd,
    possiblyBilledUsd: budget.possibly_billed_usd,
    heldUsd: budget.orphaned_usd,
    ...(stop.reason ? { stopped: stop.reason } : {}),
    ...(stop.overruns?.size ? { overruns: [...stop.overruns].map(([model, excessUsd]) => ({ model, excessUsd })) } : {}),
    ...(stop.keyFailures?.size ? { keyFailures: [...stop.keyFailures.values()] } : {}),
    ...(stop.waitStops?.size ? { waitStops: [...stop.waitStops.values()] } : {}),
  };
}
