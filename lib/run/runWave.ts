/**
 * One wave of the local run: the phases whose inputs are done, run side by side. Every (phase,
 * model, language) partition of the wave runs, a few at a time, on the main thread or on the
 * partition threads, and the wave's phases are summed up. Apart from the run (runCampaign.ts),
 * which only says which waves run.
 */
import type { PhaseSpec } from '../battery/types.js';
import type { EmbeddedLedger } from '../store/index.js';
import type { Answerers } from './answerers.js';
import type { PartitionOutcome, SyncRemainder } from './partitionTypes.js';
import type { Plan } from './planCampaign.js';
import { plannedItems } from './planCampaign.js';
import type { RunProgress } from './runProgress.js';
import type { PhaseSummary } from './runTypes.js';
import type { StopState } from './stopState.js';
import { runWavePartition, type PartitionEnv } from './wavePartition.js';
import type { WaveThreads } from './waveThreads.js';

/** What a wave needs of the run around it. */
export interface WaveRun {
  readonly plan: Plan;
  readonly env: PartitionEnv;
  readonly answerers: Answerers;
  readonly ledger: EmbeddedLedger;
  readonly progress: RunProgress;
  readonly threads: WaveThreads;
  readonly stop: StopState;
  /** Partitions run at once on the main thread (RunOptions.partitionConcurrency). */
  readonly partitionPool: number;
  readonly signal?: AbortSignal | undefined;
}

/**
 * One wave: for every phase of it and every model and language, the partition's items (a
 * dependent phase's built from the stored outputs of the phases it consumes), their prompts
 * part, and the budget-guarded calls; partitions run `partitionPool` at a time.
 */
export async function runWave(run: WaveRun, wave: readonly PhaseSpec[]): Promise<PhaseSummary[]> {
  const { plan, env, ledger, progress, stop } = run;
  const { ctx } = env;
  const { campaign } = ctx;
  const summaries = new Map<string, Accumulated>(wave.map((p) => [p.name, { phase: p.name, items: 0, done: 0, failed: 0, adopted: 0, pending: 0, costUsd: 0, reread: 0, rereadChanged: 0 }]));
  let done = 0;
  for (const c of (await ledger.phaseCounts(campaign.name, wave.map((p) => p.name))).values()) done += c.done;
  // Before the progress bar: a thread that cannot start says so on a line of its own.
  const threads = await run.threads.forWave(wave, plan, run.answerers);
  let total = wave.reduce((s, p) => s + plannedItems(plan, p.name), 0);
  progress.startWave(wave.map((p) => p.name).join(' + '), total, done);
  const tasks = wave.flatMap((phase) =>
    campaign.models.flatMap((model) =>
      ctx.design.languages.map((language) => async () => {
        if (stop.reason) return;
        const summary = summaries.get(phase.name)!;
        // A partition that waited for its thread starts only if the run has not stopped meanwhile.
        const ran = threads ? await threads.run(phase.name, model.id, language, () => !stop.reason) : await runWavePartition(env, phase, model, language);
        if (ran === undefined) return;
        const { items, outcome } = ran;
        summary.items += items;
        accumulate(summary, outcome);
        // A dependent phase was planned from an estimate (X-Value's step 2 from step 1's
        // expected natures): once its items are built, the bar counts what is really asked.
        const planned = plan.partitions.find((p) => p.model === model.id && p.language === language)?.items[phase.name] ?? 0;
        if (items !== planned) {
          total += items - planned;
          progress.retotal(total);
        }
      }),
    ),
  );
  try {
    await pool(tasks, threads?.capacity(largestPartition(plan, wave), env.shared.partRows) ?? run.partitionPool);
  } finally {
    progress.stopRedraw();
  }
  // An abort after the last chunk was sent leaves items pending without any partition noticing.
  if (run.signal?.aborted) stop.reason ??= 'aborted';
  progress.finishWave(await spendLine(ledger, campaign.name));
  return [...summaries.values()];
}

/** A phase's summary while its partitions add to it. */
interface Accumulated {
  phase: string;
  items: number;
  done: number;
  failed: number;
  adopted: number;
  pending: number;
  costUsd: number;
  reread: number;
  rereadChanged: number;
  syncRemainder?: SyncRemainder;
}

function accumulate(into: Accumulated, out: PartitionOutcome) {
  if (out.syncRemainder !== undefined) {
    into.syncRemainder = {
      items: (into.syncRemainder?.items ?? 0) + out.syncRemainder.items,
      minRequests: Math.max(into.syncRemainder?.minRequests ?? 0, out.syncRemainder.minRequests),
    };
  }
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

/** The most items one partition of the wave's phases has in the plan. */
export function largestPartition(plan: Pick<Plan, 'partitions'>, wave: readonly Pick<PhaseSpec, 'name'>[]): number {
  let most = 0;
  for (const p of plan.partitions) for (const phase of wave) most = Math.max(most, p.items[phase.name] ?? 0);
  return most;
}

/** The waves in order, until the run stops (the budget, an abort, an overrun). */
export async function runWaves(run: WaveRun, waves: readonly (readonly PhaseSpec[])[]): Promise<PhaseSummary[]> {
  const phases: PhaseSummary[] = [];
  for (const wave of waves) {
    if (run.stop.reason) break;
    phases.push(...(await runWave(run, wave)));
  }
  return phases;
}
