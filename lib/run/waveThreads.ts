/**
 * Which partition threads (partitionThreads.ts) the local run's waves use: started early, while
 * the plan is counted, when its first partition says the first wave will want them; checked
 * against each wave in full (threadsForWave); closed before the analysis. Apart from the run
 * because the early start, the check and the fallback to the main thread are one piece of state.
 */
import type { PhaseSpec } from '../battery/types.js';
import type { EmbeddedLedger } from '../store/index.js';
import type { Answerers } from './answerers.js';
import { phaseEntries } from './context.js';
import type { RunContext } from './context.js';
import { PartitionThreads, runMemory, threadsForWave } from './partitionThreads.js';
import type { RunMemory } from './partitionThreads.js';
import { plannedItems, type Plan, type PlanPartition } from './planCampaign.js';
import type { StopState } from './stopState.js';
import type { ThreadInit } from './threadMessages.js';

export interface WaveThreadsOptions {
  readonly ctx: RunContext;
  /** RunOptions.threads (`--threads`). */
  readonly requested: number | undefined;
  /** Test hooks on replies or batches run on the main thread only. */
  readonly hooks: boolean;
  readonly init: Omit<ThreadInit, 'concurrency'>;
  /** The run's ledger, looked up when a thread first calls it (threads may boot before it opens). */
  readonly ledger: () => EmbeddedLedger;
  readonly stop: StopState;
  /** Replies the threads report: successes and their cost. */
  readonly onReplies: (ok: number, costUsd: number) => void;
  readonly log: (line: string) => void;
}

export class WaveThreads {
  /** Threads started while the plan runs, until the first wave takes them or the run ends. */
  private early: { readonly count: number; readonly threads: Promise<PartitionThreads> } | undefined;
  private earlyMemory: RunMemory | undefined;
  private running: PartitionThreads | undefined;
  private failed = false;

  constructor(private readonly o: WaveThreadsOptions) {}

  /**
   * The plan's `onPartition`: the threads take ~1.5 s each to load the code, the campaign and their
   * stores; started once the first partition is counted, they boot on the core the plan leaves
   * idle. The first wave checks their number against the whole plan (forWave) and closes them if
   * it disagrees. The estimate: the first partition's calls, times the partitions.
   */
  readonly onPlanPartition = (first: PlanPartition, index: number, total: number): void => {
    if (index > 0) return;
    const { ctx } = this.o;
    const firstWave = ctx.graph.waves[0] ?? [];
    const memory = runMemory();
    const n = threadsForWave(this.o.requested, {
      calls: firstWave.reduce((s, p) => s + (first.items[p.name] ?? 0), 0) * total,
      simulatedOnly: firstWave.every((p) => phaseEntries(ctx, p).every((e) => e.provider === 'simulated' && e.mode !== 'batch')),
      hooks: this.o.hooks,
      languages: ctx.design.languages,
      ...memory,
    });
    const count = Math.min(n, ctx.campaign.concurrency);
    // The first wave is weighed against this measure whether or not threads start now: measured
    // again after the plan, once the collector had freed the plan's garbage, the same run of
    // X-Value at 100,000 pairs got one thread or two (1.9 or 2.6 GB at its peak).
    this.earlyMemory = memory;
    if (count <= 1) return;
    const booting = this.start(count);
    // Awaited (and its error reported) by the first wave; a run that stops before it closes them.
    booting.catch(() => undefined);
    this.early = { count, threads: booting };
  };

  /** The partition threads of a wave, started for the first wave that uses them; none: the main thread runs it. */
  async forWave(wave: readonly PhaseSpec[], plan: Plan, answerers: Answerers): Promise<PartitionThreads | undefined> {
    const { ctx } = this.o;
    const { providers, batchClients } = answerers;
    const n = threadsForWave(this.o.requested, {
      calls: wave.reduce((s, p) => s + plannedItems(plan, p.name), 0),
      simulatedOnly: wave.every((p) => phaseEntries(ctx, p).every((e) => providers.get(e.id)?.simulated === true && !batchClients.has(e.id))),
      hooks: this.o.hooks,
      languages: ctx.design.languages,
      // The first wave: the memory measured at the plan's first partition (the threads started
      // then count in the memory now). A later wave: the memory now.
      ...(this.earlyMemory ?? runMemory()),
      ...(this.running ? { running: this.running.size } : {}),
    });
    this.earlyMemory = undefined;
    const count = Math.min(n, ctx.campaign.concurrency);
    // Started for a wave that, counted in full, wants another number of threads (or none).
    if (this.early && this.early.count !== count) await this.closeEarly();
    if (count <= 1 || this.failed) return undefined;
    try {
      if (this.running === undefined) {
        const booting = this.early?.threads ?? this.start(count);
        this.early = undefined;
        this.running = await booting;
        this.o.log(`partitions run in ${count} threads (--threads 1: on one)`);
      }
    } catch (err) {
      // The main thread runs the same partitions, only slower: say so and go on.
      this.failed = true;
      this.o.log(`partition threads could not start (${err instanceof Error ? err.message : String(err)}); running on one thread`);
    }
    return this.running;
  }

  /** An abort reaches the threads' calls as it reaches the main thread's. */
  broadcastStop(): void {
    this.running?.broadcastStop();
  }

  /** Closes the threads started during the plan that no wave took. */
  async closeEarly(): Promise<void> {
    const booting = this.early?.threads;
    this.early = undefined;
    await booting?.then((t) => t.close()).catch(() => undefined);
  }

  /** Closes the threads the waves ran on: their heaps and DuckDB instances are freed. */
  async closeRunning(): Promise<void> {
    await this.running?.close();
    this.running = undefined;
  }

  /** Closes every thread, running or still booting. */
  async close(): Promise<void> {
    await this.closeRunning();
    await this.closeEarly();
  }

  private start(count: number): Promise<PartitionThreads> {
    const { init, ctx, ledger, stop, onReplies } = this.o;
    return PartitionThreads.start(count, init, ctx.campaign.concurrency, { ledger, stop }, { onReplies }, ctx.design.languages);
  }
}
