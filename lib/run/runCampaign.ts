import { randomBytes } from 'node:crypto';
import { join } from 'node:path';
import { analyzeCampaign, formatConsoleTable, writeResults } from '../batteries/far6/analysis/index.js';
import type { AnalysisResults } from '../batteries/far6/analysis/index.js';
import type { BatteryModel, LoadedBattery } from '../design/battery.js';
import type { Campaign, ModelEntry } from '../design/campaign.js';
import type { LanguageCode, PromptItem } from '../core/types.js';
import type { Language as Far6Language } from '../batteries/far6/types.js';
import { createBatchClient, createProvider } from '../providers/registry.js';
import type { BatchClient } from '../providers/batchTypes.js';
import { simulationTruth } from '../batteries/far6/simulate/index.js';
import type { ModelProvider } from '../providers/types.js';
import { DuckDb, EmbeddedLedger, LocalBlobStore, ParquetWriter, acquireRunLock, layout, tableColumns, tableGlob } from '../store/index.js';
import type { BatchRecord, ReadingRow, ReplyRow } from '../store/types.js';
import { DEFAULT_RETRY, type RetryPolicy } from './callWithRetry.js';
import {
  assertWithinBudget,
  chosenReplies,
  ensurePrompts,
  generateReader,
  journalDir,
  judgeItems,
  judgeReader,
  partitionSpec,
  rateLimited,
} from './partitionSpec.js';
import { planCampaign, type Plan } from './planCampaign.js';
import { silentProgress, type ProgressSink } from './progress.js';
import { auditAnalysisOptions, auditItems, auditPhases, auditReadingRows, withAuditReadings } from './auditPhase.js';
import { runPartition, type StopState } from './runPartition.js';
import { runBatchPartition } from './runBatchPartition.js';
import { RateLimiters } from './RateLimiter.js';
import { Semaphore } from './Semaphore.js';

export interface RunOptions {
  /** Overrides the campaign's data_dir. */
  readonly dataDir?: string;
  readonly progress?: ProgressSink;
  readonly log?: (line: string) => void;
  readonly signal?: AbortSignal;
  /** Start even when the expected cost exceeds the budget; the run stops cleanly at the cap. */
  readonly allowPartial?: boolean;
  /** Ask again the items whose last attempt failed permanently (`--retry-failed`; issue 3). */
  readonly retryFailed?: boolean;
  /** Skip the analysis stage (tests that only look at collection). */
  readonly skipAnalysis?: boolean;
  readonly chunkSize?: number;
  readonly partRows?: number;
  readonly partitionConcurrency?: number;
  readonly retry?: RetryPolicy;
  /** Stop after this many replies have been journaled (tests of a killed run). */
  readonly onReply?: (row: ReplyRow) => void;
  /** Models with `mode: batch`: how often open batches are polled (default 30 s), and test hooks. */
  readonly batch?: {
    readonly pollMs?: number;
    /** At most this many requests per batch, below the provider's limits. */
    readonly maxRequests?: number;
    /** Called once a batch is submitted and written to the ledger. */
    readonly onSubmitted?: (record: BatchRecord) => void;
  };
}

/** Batches take minutes to hours: polling more often than this only spends API calls. */
const DEFAULT_BATCH_POLL_MS = 30_000;

export interface PhaseSummary {
  readonly phase: string;
  readonly items: number;
  readonly done: number;
  readonly failed: number;
  readonly adopted: number;
  readonly pending: number;
  readonly costUsd: number;
}

export interface RunSummary {
  readonly campaign: string;
  readonly runId: string;
  readonly dataDir: string;
  readonly plan: Plan;
  readonly phases: readonly PhaseSummary[];
  readonly spentUsd: number;
  readonly capUsd: number;
  readonly stopped?: 'budget' | 'aborted';
  /** One message per provider model that rejected its API key (its items stay pending). */
  readonly keyFailures?: readonly string[];
  readonly resultsPrefix?: string;
  readonly analysis?: AnalysisResults;
  readonly table?: string;
}

export interface RunContext {
  readonly campaign: Campaign;
  readonly battery: LoadedBattery;
  readonly dataDir: string;
}

/**
 * The local run: plan, generate, judge, analyse, on the embedded default (files laid out like the
 * S3 bucket, SQLite ledger, DuckDB). Safe to kill at any point and run again: the ledger and the
 * journals make the next run ask only for what is missing and count nothing twice.
 */
export async function runCampaign(ctx: RunContext, opts: RunOptions = {}): Promise<RunSummary> {
  const { campaign, battery } = ctx;
  const log = opts.log ?? (() => {});
  const progress = opts.progress ?? silentProgress;
  const dataDir = opts.dataDir ?? ctx.dataDir;

  const plan = planCampaign(campaign, battery);
  assertWithinBudget(campaign, plan, opts.allowPartial);

  // Providers check their settings (a simulation block, an unknown provider) before anything is
  // written: a campaign that cannot run leaves no data folder behind.
  // Real providers share one limiter per provider model (RPM/TPM from the campaign, lowered by
  // the x-ratelimit headers they report); the simulated one needs none.
  const limiters = new RateLimiters();
  const ctxFor = { seed: campaign.seed, file: campaign.file, onRateLimitHints: limiters.observe, ...(battery.simulator ? { simulator: battery.simulator } : {}) };
  const limited = (p: ModelProvider, entry: { rpm?: number; tpm?: number }): ModelProvider => rateLimited(limiters, p, entry);
  const providers = new Map<string, ModelProvider>();
  for (const m of campaign.models) providers.set(m.id, limited(await createProvider(m, ctxFor), m));
  const judgeProvider = campaign.judge
    ? limited(await createProvider({ ...campaign.judge, role: 'judge' }, ctxFor), campaign.judge)
    : undefined;
  // The judge audit (seed 000 "Sentence judging"): a second judge, and the primary judge again.
  const audits = auditPhases(campaign);
  const auditProviders = new Map<string, ModelProvider>();
  for (const a of audits) {
    const retest = a.judge === campaign.judge && judgeProvider;
    auditProviders.set(a.phase, retest || limited(await createProvider({ ...a.judge, role: 'judge' }, ctxFor), a.judge));
  }
  // mode: batch goes through the provider's batch API (issue 3) at its discounted price.
  const batchClients = new Map<string, BatchClient>();
  const secondJudge = campaign.judge?.audit?.second_judge;
  for (const m of [...campaign.models, ...(campaign.judge ? [campaign.judge] : []), ...(secondJudge ? [secondJudge] : [])]) {
    if (m.mode === 'batch') batchClients.set(m.id, await createBatchClient(m, ctxFor));
  }

  const store = new LocalBlobStore(dataDir);
  const lock = await acquireRunLock(dataDir, campaign.name);
  const runId = `${new Date().toISOString().replace(/[-:]/g, '').slice(0, 15)}-${randomBytes(3).toString('hex')}`;
  const ledger = new EmbeddedLedger(dataDir, { runId });
  const writer = await ParquetWriter.create({ tmpDir: join(dataDir, '.tmp'), threads: 1 });
  try {
    await store.put(layout.planKey(campaign.name), JSON.stringify(plan, null, 2));
    await ledger.initCampaign(campaign.name, campaign.budget_usd, runId);
    const released = await ledger.releaseStale(campaign.name, runId);
    if (released > 0) log(`released ${released} reservation(s) left by an interrupted run`);

    const semaphore = new Semaphore(campaign.concurrency);
    const stop: StopState = {};
    const shared = {
      campaign: campaign.name,
      runId,
      retry: opts.retry ?? DEFAULT_RETRY,
      ledger,
      semaphore,
      chunkSize: opts.chunkSize ?? 64,
      partRows: opts.partRows ?? 20_000,
      ...(opts.signal ? { signal: opts.signal } : {}),
      ...(opts.onReply ? { onReply: opts.onReply } : {}),
      ...(opts.retryFailed ? { retryFailed: true } : {}),
      stop,
    };
    const phases: PhaseSummary[] = [];
    const partitionPool = opts.partitionConcurrency ?? 2;
    let spent = (await ledger.budget(campaign.name)).spent_usd;

    /**
     * One phase: for every model and language, the partition's items (`itemsFor`), their prompts
     * part, and the budget-guarded calls; partitions run `partitionPool` at a time.
     */
    const runPhase = async (
      phase: string,
      total: number,
      entryFor: (model: ModelEntry) => { provider: ModelProvider; price: ModelEntry['price']; batch?: BatchClient | undefined; keyEnv?: string | undefined },
      itemsFor: (model: ModelEntry, language: LanguageCode) => Promise<PromptItem[]>,
      readReply: (item: PromptItem, reply: ReplyRow) => ReadingRow[],
    ): Promise<PhaseSummary> => {
      const summary = { phase, items: 0, done: 0, failed: 0, adopted: 0, pending: 0, costUsd: 0 };
      let replied = (await ledger.counts(campaign.name, phase)).done;
      progress.start(phase, total);
      const tasks = campaign.models.flatMap((model) =>
        battery.languages.map((language) => async () => {
          if (stop.reason) return;
          const items = await itemsFor(model, language);
          summary.items += items.length;
          // Generate prompts are a pure function of the design: written once. Judge prompts depend
          // on the replies, which a later run may have completed: rewritten each time.
          await ensurePrompts(writer, store, { campaign: campaign.name, phase, model: model.id, language }, items, battery.prompts, phase !== 'generate');
          const { provider, price, batch, keyEnv } = entryFor(model);
          const built = partitionSpec(
            {
              ...shared,
              onReply: (row: ReplyRow) => {
                spent += row.cost_usd;
                if (row.status === 'ok') progress.tick(++replied, `$${spent.toFixed(4)} of $${campaign.budget_usd}`);
                opts.onReply?.(row);
              },
            },
            {
              phase,
              model: model.id,
              language,
              items,
              provider,
              price,
              batch,
              readReply,
              store,
              writer,
              journalDir: journalDir(dataDir, campaign.name, phase, model.id, language),
              keyEnv,
            },
          );
          const partition = withAuditReadings(built, writer, store);
          const out = batch
            ? await runBatchPartition({
                ...partition,
                batch,
                pollMs: opts.batch?.pollMs ?? DEFAULT_BATCH_POLL_MS,
                ...(opts.batch?.maxRequests !== undefined ? { maxBatchRequests: opts.batch.maxRequests } : {}),
                ...(opts.batch?.onSubmitted ? { onBatchSubmitted: opts.batch.onSubmitted } : {}),
              })
            : await runPartition(partition);
          accumulate(summary, out);
        }),
      );
      await pool(tasks, partitionPool);
      // An abort after the last chunk was sent leaves items pending without any partition noticing.
      if (opts.signal?.aborted) stop.reason ??= 'aborted';
      progress.finish(await spendLine(ledger, campaign.name));
      return summary;
    };

    phases.push(
      await runPhase(
        'generate',
        plan.lines.filter((l) => l.phase === 'generate').reduce((s, l) => s + l.items, 0),
        (model) => ({ provider: providers.get(model.id)!, price: model.price, batch: batchClients.get(model.id), keyEnv: model.api_key_env }),
        async (model, language) => [...battery.expand(model, language)],
        generateReader(battery),
      ),
    );

    const judge = campaign.judge;
    if (judge && judgeProvider && !stop.reason) {
      const judgeModel: BatteryModel = { id: judge.id, settings: judge.settings };
      const db = await DuckDb.open();
      try {
        phases.push(
          await runPhase(
            'judge',
            plan.partitions.reduce((s, p) => s + p.judged, 0),
            () => ({ provider: judgeProvider, price: judge.price, batch: batchClients.get(judge.id), keyEnv: judge.api_key_env }),
            async (model, language) =>
              judgeItems(battery, judgeModel, battery.expand(model, language), await chosenReplies(db, dataDir, campaign.name, model.id, language)),
            judgeReader(battery, judge.id),
          ),
        );
      } finally {
        db.close();
      }
    }

    // After the judge phase: the audit draws from the replies the primary judge labelled.
    if (audits.length > 0 && !stop.reason) {
      const db = await DuckDb.open();
      try {
        for (const spec of audits) {
          if (stop.reason) break;
          const provider = auditProviders.get(spec.phase)!;
          phases.push(
            await runPhase(
              spec.phase,
              plan.lines.filter((l) => l.phase === spec.phase).reduce((s, l) => s + l.items, 0),
              () => ({ provider, price: spec.judge.price, batch: batchClients.get(spec.judge.id), keyEnv: spec.judge.api_key_env }),
              (model, language) => auditItems({ db, dataDir, campaign, battery, model, language, spec }),
              (item, reply) => auditReadingRows(battery, spec.judge.id, item, reply),
            ),
          );
        }
      } finally {
        db.close();
      }
    }

    const budget = await ledger.budget(campaign.name);
    const summary: RunSummary = {
      campaign: campaign.name,
      runId,
      dataDir,
      plan,
      phases,
      spentUsd: budget.spent_usd,
      capUsd: budget.cap_usd,
      ...(stop.reason ? { stopped: stop.reason } : {}),
      ...(stop.keyFailures?.size ? { keyFailures: [...stop.keyFailures.values()] } : {}),
    };
    if (stop.reason === 'aborted' || opts.skipAnalysis) return summary;

    // ---- analyse ----------------------------------------------------------------------------
    const analysis = await analyzeLocal(ctx, dataDir, store);
    return { ...summary, resultsPrefix: `${layout.campaignPrefix(campaign.name)}results/`, analysis, table: formatConsoleTable(analysis) };
  } finally {
    await writer.close();
    await ledger.close();
    await lock.release();
  }
}

/** The SQL stage on DuckDB, the estimators, and the results files (CSV, Markdown, truth). */
export async function analyzeLocal(ctx: RunContext, dataDir: string, store = new LocalBlobStore(dataDir)) {
  const { campaign, battery } = ctx;
  const db = await DuckDb.open();
  try {
    for (const table of ['prompts', 'replies', 'readings'] as const) {
      await db.attachTable(table, tableGlob(dataDir, campaign.name, 'generate', table), table, tableColumns(table, battery.prompts));
    }
    const judgeAudit = await auditAnalysisOptions(db, dataDir, campaign);
    const analysis = await analyzeCampaign(db, { prompts: 'prompts', replies: 'replies', readings: 'readings' }, judgeAudit ? { judgeAudit } : {});
    const simulated = campaign.models.some((m) => m.provider === 'simulated') || campaign.judge?.provider === 'simulated';
    const out = (name: string, content: string) => store.put(layout.resultsKey(campaign.name, name), content);
    await writeResults(out, analysis, { campaign: campaign.name, simulated, source: dataDir });
    const truths = campaign.models
      .filter((m) => m.provider === 'simulated')
      .map((m) =>
        simulationTruth({ seed: campaign.seed, model: { id: m.id, simulation: m.simulation }, stories: battery.stories, languages: battery.languages as Far6Language[] }),
      );
    if (truths.length > 0) await out('simulation_truth.json', JSON.stringify({ note: 'simulated respondents: the true parameters the generator used', models: truths }, null, 2));
    return analysis;
  } finally {
    db.close();
  }
}

function accumulate(
  into: { done: number; failed: number; adopted: number; pending: number; costUsd: number },
  out: { done: number; failed: number; adopted: number; pending: number; costUsd: number; keyBlocked?: number },
) {
  into.done += out.done;
  into.failed += out.failed;
  into.adopted += out.adopted;
  // Items a rejected key left are pending in the ledger: the next run (with a good key) asks them.
  into.pending += out.pending + (out.keyBlocked ?? 0);
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

