import { randomBytes } from 'node:crypto';
import { join } from 'node:path';
import { analyzeLocal } from '../analysis/analyzeLocal.js';
import type { PhaseSpec } from '../battery/types.js';
import type { ReadoutHealth } from '../battery/readoutHealth.js';
import { DuckDb, EmbeddedLedger, LocalBlobStore, ParquetWriter, acquireRunLock, layout } from '../store/index.js';
import type { ReplyRow } from '../store/types.js';
import { DEFAULT_MAX_WAIT_MS, DEFAULT_RETRY, type RetryPolicy } from './callWithRetry.js';
import { CallWatch } from './CallWatch.js';
import { createAnswerers } from './answerers.js';
import { phaseEntries } from './context.js';
import type { RunContext } from './context.js';
import { assertWithinBudget } from './partitionSpec.js';
import { PartitionThreads, runMemory, threadsForWave } from './partitionThreads.js';
import type { RunMemory } from './partitionThreads.js';
import { describePlanChange } from './planChange.js';
import { planCampaign, plannedItems, type Plan } from './planCampaign.js';
import { silentProgress, type ProgressSink } from './progress.js';
import { rebuildLedger, retireDroppedPartitions } from './rebuildLedger.js';
import { completeReplies, designFingerprint, recordIfComplete } from './completeCampaign.js';
import { refreshCampaignReadings } from './refreshCampaignReadings.js';
import type { StopState } from './runPartition.js';
import { RateLimiters } from './RateLimiter.js';
import { Semaphore } from './Semaphore.js';
import { runWavePartition, type BatchRunOptions, type PartitionEnv } from './wavePartition.js';

/** How often the progress line is redrawn while no reply arrives (calls in flight, waits). */
const PROGRESS_REDRAW_MS = 1000;

/** The fewest calls a chunk reserves for (RunCampaignOptions.chunkSize). */
const DEFAULT_CHUNK = 64;

export type { RunContext } from './context.js';

export interface RunOptions {
  /** Overrides the campaign's data_dir. */
  readonly dataDir?: string;
  readonly progress?: ProgressSink;
  readonly log?: (line: string) => void;
  readonly signal?: AbortSignal;
  /** Start even when the expected cost exceeds the budget; the run stops cleanly at the cap. */
  readonly allowPartial?: boolean;
  /** Ask again the items whose last attempt failed permanently (`--retry-failed`). */
  readonly retryFailed?: boolean;
  /** Skip the analysis stage (tests that only look at collection). */
  readonly skipAnalysis?: boolean;
  /**
   * Calls per reservation (each chunk reserves its calls' maximum cost in one ledger write).
   * Default: the campaign's concurrency, at least 64 — as many as the semaphore lets run at once,
   * so a campaign of 256 concurrent calls writes a quarter of the reservations a chunk of 64 did
   * (FAR-6 at full size: 24k -> 6k ledger writes on the main thread). Near the cap a refused
   * reservation halves the chunk, down to one call, as before.
   */
  readonly chunkSize?: number;
  readonly partRows?: number;
  readonly partitionConcurrency?: number;
  /** Retries and timeouts; `maxWaitMs` (`--max-wait`) defaults to DEFAULT_MAX_WAIT_MS on the local run. */
  readonly retry?: RetryPolicy;
  /** Stop after this many replies have been journaled (tests of a killed run). */
  readonly onReply?: (row: ReplyRow) => void;
  /** Models with `mode: batch`: how often open batches are polled (default 30 s), and test hooks. */
  readonly batch?: BatchRunOptions;
  /**
   * Threads that run the partitions of simulated models (partitionThreads.ts; `sondage run
   * --threads`): 1 keeps everything on the main thread; by default the cores, up to 4, for a
   * wave of at least 20,000 calls, as many as fit the run's memory budget (threadsForWave).
   */
  readonly threads?: number;
}

export interface PhaseSummary {
  readonly phase: string;
  readonly items: number;
  readonly done: number;
  readonly failed: number;
  readonly adopted: number;
  readonly pending: number;
  readonly costUsd: number;
  /** Stored readings read again because the design's reading inputs changed, and how many of them changed. */
  readonly reread?: number;
  readonly rereadChanged?: number;
}

export interface RunSummary {
  readonly campaign: string;
  readonly runId: string;
  readonly dataDir: string;
  readonly plan: Plan;
  readonly phases: readonly PhaseSummary[];
  readonly spentUsd: number;
  readonly capUsd: number;
  /** Calls of killed runs that left no reply: maybe billed, counted against the cap (all runs). */
  readonly possiblyBilledUsd: number;
  /** Reservations of a killed run still held: their partitions' journals were not read yet. */
  readonly heldUsd: number;
  readonly stopped?: 'budget' | 'aborted' | 'overrun';
  /** Models whose provider reported more usage than their calls reserved, and by how much (USD). */
  readonly overruns?: readonly { readonly model: string; readonly excessUsd: number }[];
  /** One message per provider model that rejected its API key (its items stay pending). */
  readonly keyFailures?: readonly string[];
  /** One message per provider model that asked to wait longer than `maxWaitMs` (its items stay pending), saying when to resume. */
  readonly waitStops?: readonly string[];
  readonly resultsPrefix?: string;
  /** The battery's analysis results (its own type). */
  readonly analysis?: unknown;
  /** Stored model/language partitions the campaign file no longer has: kept, not analysed. */
  readonly excluded?: readonly string[];
  /** How much of each numeric readout the analysis could read (lib/battery/readoutHealth.ts). */
  readonly readouts?: readonly ReadoutHealth[];
  readonly table?: string;
}

/**
 * The local run: plan, then the battery's phases wave by wave (a phase starts once the phases it
 * consumes have run; phases of one wave run side by side), then the analysis, on the embedded
 * default (files laid out like the S3 bucket, SQLite ledger, DuckDB). Safe to kill at any point
 * and run again: the ledger and the journals make the next run ask only for what is missing and
 * count nothing twice.
 */
export async function runCampaign(ctx: RunContext, opts: RunOptions = {}): Promise<RunSummary> {
  const { campaign, graph } = ctx;
  const log = opts.log ?? (() => {});
  const progress = opts.progress ?? silentProgress;
  const dataDir = opts.dataDir ?? ctx.dataDir;

  const runId = `${new Date().toISOString().replace(/[-:]/g, '').slice(0, 15)}-${randomBytes(3).toString('hex')}`;
  const stop: StopState = {};
  const retry: RetryPolicy = { maxWaitMs: DEFAULT_MAX_WAIT_MS, ...(opts.retry ?? DEFAULT_RETRY) };
  const watch = new CallWatch();
  const chunkSize = opts.chunkSize ?? Math.max(DEFAULT_CHUNK, campaign.concurrency);
  const partRows = opts.partRows ?? 20_000;
  /** The run's ledger once opened (after the plan): the threads' calls go to it. */
  let openedLedger: EmbeddedLedger | undefined;
  let spent = 0;
  let replied = 0;
  const tick = (ok: number, costUsd: number): void => {
    spent += costUsd;
    if (ok === 0) return;
    replied += ok;
    progress.tick(replied, progressExtra());
  };
  // Spend, and what the calls are doing: a bar that does not move says why (calls in flight for
  // long, a provider's Retry-After).
  const progressExtra = (): string => {
    const calls = watch.describe();
    return `$${spent.toFixed(4)} of $${campaign.budget_usd}${calls === '' ? '' : ` · ${calls}`}`;
  };
  const threadInit = { campaign, dataDir, runId, retry, chunkSize, partRows, retryFailed: opts.retryFailed === true };
  const startThreads = (count: number): Promise<PartitionThreads> =>
    PartitionThreads.start(count, threadInit, campaign.concurrency, { ledger: () => openedLedger!, stop }, { onReplies: tick });
  const hooks = opts.onReply !== undefined || opts.batch?.onSubmitted !== undefined;
  /** Threads started while the plan runs (below), until the first wave takes them or the run ends. */
  let early: { readonly count: number; readonly threads: Promise<PartitionThreads> } | undefined;
  let earlyMemory: RunMemory | undefined;
  const closeEarly = async (): Promise<void> => {
    const booting = early?.threads;
    early = undefined;
    await booting?.then((t) => t.close()).catch(() => undefined);
  };
  let lock: Awaited<ReturnType<typeof acquireRunLock>> | undefined;
  let writer: ParquetWriter | undefined;
  let db: DuckDb | undefined;
  let threads: PartitionThreads | undefined;
  let onAbort: (() => void) | undefined;
  try {
    const firstWave = graph.waves[0] ?? [];
    const plan = planCampaign(ctx, {
      // The threads take ~1.5 s each to load the code, the campaign and their stores; started
      // once the first partition is counted, they boot on the core the plan leaves idle. The
      // first wave checks their number against the whole plan (threadsFor) and closes them if
      // it disagrees. The estimate: the first partition's calls, times the partitions.
      onPartition: (first, index, total) => {
        if (index > 0) return;
        const memory = runMemory();
        const n = threadsForWave(opts.threads, {
          calls: firstWave.reduce((s, p) => s + (first.items[p.name] ?? 0), 0) * total,
          simulatedOnly: firstWave.every((p) => phaseEntries(ctx, p).every((e) => e.provider === 'simulated' && e.mode !== 'batch')),
          hooks,
          ...memory,
        });
        const count = Math.min(n, campaign.concurrency);
        if (count <= 1) return;
        earlyMemory = memory;
        const booting = startThreads(count);
        // Awaited (and its error reported) by the first wave; a run that stops before it closes them.
        booting.catch(() => undefined);
        early = { count, threads: booting };
      },
    });
    assertWithinBudget(campaign, plan, opts.allowPartial);

    // Providers check their settings before anything is written (answerers.ts).
    const { providers, batchClients } = await createAnswerers(ctx, new RateLimiters());

    const store = new LocalBlobStore(dataDir);
    lock = await acquireRunLock(dataDir, campaign.name);
    const ledger = new EmbeddedLedger(dataDir, { runId });
    openedLedger = ledger;
    writer = await ParquetWriter.create({ tmpDir: join(dataDir, '.tmp'), threads: 1 });
    const previous = await store.get(layout.planKey(campaign.name));
    if (previous !== undefined) {
      try {
        const changes = describePlanChange(JSON.parse(Buffer.from(previous).toString('utf8')) as Plan, plan);
        if (changes.length > 0) log(`the campaign's design changed since its last run:\n  ${changes.join('\n  ')}`);
      } catch {
        // An unreadable plan.json (a write cut short) only loses the comparison.
      }
    }
    await store.put(layout.planKey(campaign.name), JSON.stringify(plan, null, 2));
    // A ledger without this campaign while its replies are stored (ledger.sqlite deleted, or the
    // data copied from elsewhere): rebuilt from them before any call, so nothing is asked twice
    // and the cap counts what was spent.
    const known = await ledger.budget(campaign.name).then(
      () => true,
      () => false,
    );
    await ledger.initCampaign(campaign.name, campaign.budget_usd, runId);
    if (!known) {
      const rebuilt = await rebuildLedger(ledger, dataDir, campaign.name, graph.phases.map((p) => p.name));
      if (rebuilt.parts > 0) {
        log(`the ledger had no record of ${campaign.name} while ${rebuilt.parts} reply part(s) are stored: rebuilt from their ${rebuilt.replies} attempt(s), $${rebuilt.spentUsd.toFixed(4)} spent`);
      }
    }
    await retireDroppedPartitions(ledger, plan);
    // A killed run's reservations stay counted: the calls it had in flight may have been billed.
    // Each is resolved when its partition's journals are adopted (registerAndAdopt).
    const orphaned = await ledger.orphanStale(campaign.name, runId, 'hold');
    if (orphaned.count > 0) log(`holding $${orphaned.amountUsd.toFixed(4)} of ${orphaned.count} reservation(s) left by an interrupted run until its journals show which calls came back`);

    const semaphore = new Semaphore(campaign.concurrency);
    const shared = {
      campaign: campaign.name,
      runId,
      retry,
      ledger,
      semaphore,
      chunkSize,
      partRows,
      watch,
      ...(opts.signal ? { signal: opts.signal } : {}),
      ...(opts.onReply ? { onReply: opts.onReply } : {}),
      ...(opts.retryFailed ? { retryFailed: true } : {}),
      stop,
    };
    const phases: PhaseSummary[] = [];
    const partitionPool = opts.partitionConcurrency ?? 2;
    spent = (await ledger.budget(campaign.name)).spent_usd;
    let threadsFailed = false;
    const env: PartitionEnv = {
      ctx,
      dataDir,
      store,
      writer,
      providers,
      batchClients,
      shared: {
        ...shared,
        onReply: (row: ReplyRow) => {
          tick(row.status === 'ok' ? 1 : 0, row.cost_usd);
          opts.onReply?.(row);
        },
      },
      upstreamDb: async () => (db ??= await DuckDb.open()),
      batch: opts.batch,
    };
    /** The partition threads of a wave (partitionThreads.ts), started for the first wave that uses them. */
    const threadsFor = async (wave: readonly PhaseSpec[]): Promise<PartitionThreads | undefined> => {
      const n = threadsForWave(opts.threads, {
        calls: wave.reduce((s, p) => s + plannedItems(plan, p.name), 0),
        simulatedOnly: wave.every((p) => phaseEntries(ctx, p).every((e) => providers.get(e.id)?.simulated === true && !batchClients.has(e.id))),
        hooks,
        // The threads started during the plan count in the RSS now: measured as it was then.
        ...(early && earlyMemory ? earlyMemory : runMemory()),
        ...(threads ? { running: threads.size } : {}),
      });
      const count = Math.min(n, campaign.concurrency);
      // Started for a wave that, counted in full, wants another number of threads (or none).
      if (early && early.count !== count) await closeEarly();
      if (count <= 1 || threadsFailed) return undefined;
      try {
        if (threads === undefined) {
          const booting = early?.threads ?? startThreads(count);
          early = undefined;
          threads = await booting;
          log(`partitions run in ${count} threads (--threads 1: on one)`);
        }
      } catch (err) {
        // The main thread runs the same partitions, only slower: say so and go on.
        threadsFailed = true;
        log(`partition threads could not start (${err instanceof Error ? err.message : String(err)}); running on one thread`);
      }
      return threads;
    };
    // An abort reaches the threads' calls as it reaches the main thread's (through the signal).
    onAbort = (): void => {
      stop.reason ??= 'aborted';
      threads?.broadcastStop();
    };
    opts.signal?.addEventListener('abort', onAbort, { once: true });

    /**
     * One wave: for every phase of it and every model and language, the partition's items (a
     * dependent phase's built from the stored outputs of the phases it consumes), their prompts
     * part, and the budget-guarded calls; partitions run `partitionPool` at a time.
     */
    const runWave = async (wave: readonly PhaseSpec[]): Promise<PhaseSummary[]> => {
      const summaries = new Map(wave.map((p) => [p.name, { phase: p.name, items: 0, done: 0, failed: 0, adopted: 0, pending: 0, costUsd: 0, reread: 0, rereadChanged: 0 }]));
      replied = 0;
      for (const p of wave) replied += (await ledger.counts(campaign.name, p.name)).done;
      // Before the progress bar: a thread that cannot start says so on a line of its own.
      const threads = await threadsFor(wave);
      let total = wave.reduce((s, p) => s + plannedItems(plan, p.name), 0);
      progress.start(wave.map((p) => p.name).join(' + '), total);
      // Redrawn while no reply arrives, so that the calls in flight and the waits show.
      const redraw = setInterval(() => progress.tick(replied, progressExtra()), PROGRESS_REDRAW_MS);
      redraw.unref();
      const tasks = wave.flatMap((phase) =>
        campaign.models.flatMap((model) =>
          ctx.design.languages.map((language) => async () => {
            if (stop.reason) return;
            const summary = summaries.get(phase.name)!;
            const { items, outcome } = threads ? await threads.run(phase.name, model.id, language) : await runWavePartition(env, phase, model, language);
            summary.items += items;
            accumulate(summary, outcome);
            // A dependent phase was planned from an estimate (X-Value's step 2 from step 1's
            // expected natures): once its items are built, the bar counts what is really asked.
            const planned = plan.partitions.find((p) => p.model === model.id && p.language === language)?.items[phase.name] ?? 0;
            if (items !== planned) {
              total += items - planned;
              progress.retotal?.(total);
            }
          }),
        ),
      );
      try {
        await pool(tasks, threads?.capacity ?? partitionPool);
      } finally {
        clearInterval(redraw);
      }
      // An abort after the last chunk was sent leaves items pending without any partition noticing.
      if (opts.signal?.aborted) stop.reason ??= 'aborted';
      progress.finish(await spendLine(ledger, campaign.name));
      return [...summaries.values()];
    };

    // Every item of an unchanged design done: said, and straight to the analysis (its readings
    // brought in line with the design first, as `analyze` does).
    const phaseNames = graph.phases.map((p) => p.name);
    const fingerprint = designFingerprint(ctx, plan);
    const complete = orphaned.count === 0 ? await completeReplies(store, ledger, campaign.name, phaseNames, fingerprint) : undefined;
    if (complete !== undefined) {
      log(`${campaign.name} is complete: every item of its design has its reply (${complete} in all), nothing to ask; analysing`);
      await closeEarly();
      const reread = new Map((await refreshCampaignReadings(ctx, dataDir)).map((r) => [r.phase, r]));
      for (const p of phaseNames) {
        const r = reread.get(p);
        phases.push({ phase: p, items: 0, done: 0, failed: 0, adopted: 0, pending: 0, costUsd: 0, reread: r?.reread ?? 0, rereadChanged: r?.rereadChanged ?? 0 });
      }
    } else {
      for (const wave of graph.waves) {
        if (stop.reason) break;
        phases.push(...(await runWave(wave)));
      }
    }
    // The next run of this same design knows at once whether anything is left to ask.
    if (!opts.signal?.aborted) await recordIfComplete(store, ledger, campaign.name, phaseNames, fingerprint);
    // Their heaps and DuckDB instances are freed before the analysis takes its share of memory.
    await threads?.close();
    threads = undefined;

    const budget = await ledger.budget(campaign.name);
    const summary: RunSummary = {
      campaign: campaign.name,
      runId,
      dataDir,
      plan,
      phases,
      spentUsd: budget.spent_usd,
      capUsd: budget.cap_usd,
      possiblyBilledUsd: budget.possibly_billed_usd,
      heldUsd: budget.orphaned_usd,
      ...(stop.reason ? { stopped: stop.reason } : {}),
      ...(stop.overruns?.size ? { overruns: [...stop.overruns].map(([model, excessUsd]) => ({ model, excessUsd })) } : {}),
      ...(stop.keyFailures?.size ? { keyFailures: [...stop.keyFailures.values()] } : {}),
      ...(stop.waitStops?.size ? { waitStops: [...stop.waitStops.values()] } : {}),
    };
    if (stop.reason === 'aborted' || opts.skipAnalysis) return summary;

    // ---- analyse ----------------------------------------------------------------------------
    const analysis = await analyzeLocal(ctx, dataDir, store);
    return { ...summary, resultsPrefix: `${layout.campaignPrefix(campaign.name)}results/`, analysis: analysis.results, table: analysis.table, excluded: analysis.excluded, readouts: analysis.readouts };
  } finally {
    if (onAbort) opts.signal?.removeEventListener('abort', onAbort);
    await threads?.close();
    await closeEarly();
    db?.close();
    await writer?.close();
    await openedLedger?.close();
    await lock?.release();
  }
}

function accumulate(
  into: { done: number; failed: number; adopted: number; pending: number; costUsd: number; reread: number; rereadChanged: number },
  out: { done: number; failed: number; adopted: number; pending: number; costUsd: number; keyBlocked?: number; waitBlocked?: number; reread?: number; rereadChanged?: number },
) {
  into.reread += out.reread ?? 0;
  into.rereadChanged += out.rereadChanged ?? 0;
  into.done += out.done;
  into.failed += out.failed;
  into.adopted += out.adopted;
  // Items a rejected key left are pending in the ledger: the next run (with a good key) asks them.
  // So are those of a model whose provider asked for a longer wait than the run allows.
  into.pending += out.pending + (out.keyBlocked ?? 0) + (out.waitBlocked ?? 0);
  into.costUsd += out.costUsd;
}

async function spendLine(ledger: EmbeddedLedger, campaign: string): Promise<string> {
  const b = await ledger.budget(campaign);
  return `spent $${b.spent_usd.toFixed(4)} of $${b.cap_usd}`;
}

async function pool(tasks: readonly (() => Promise<void>)[], limit: number): Promise<void> {
  let next = 0;
  const worker = async () => {
    while (next < tasks.length) await tasks[next++]!();
  };
  await Promise.all(Array.from({ length: Math.min(limit, tasks.length) }, worker));
}

