/**
 * What the local run opens once its plan is within budget: the data folder's blob store, the
 * campaign's run lock, the embedded ledger and the Parquet writer (and DuckDB, once a dependent
 * phase reads its inputs), closed in the reverse order; and the two things done with them before
 * any call: plan.json compared and written, the ledger made ready (rebuilt from the stored replies
 * when it lost the campaign, dropped partitions retired, a killed run's reservations held).
 */
import { join } from 'node:path';
import { DuckDb, EmbeddedLedger, LocalBlobStore, ParquetWriter, acquireRunLock, layout } from '../store/index.js';
import type { RunContext } from './context.js';
import { describePlanChange } from './planChange.js';
import type { Plan } from './planCampaign.js';
import { rebuildLedger, retireDroppedPartitions } from './rebuildLedger.js';

export class RunStores {
  private lock: Awaited<ReturnType<typeof acquireRunLock>> | undefined;
  private opened: EmbeddedLedger | undefined;
  private parquet: ParquetWriter | undefined;
  private db: DuckDb | undefined;

  /** The data folder's files: readable before the lock is held (the run's hints), written only under it. */
  readonly store: LocalBlobStore;

  constructor(private readonly dataDir: string) {
    this.store = new LocalBlobStore(dataDir);
  }

  /** Takes the campaign's run lock, then opens the ledger and the writer. */
  async open(campaign: string, runId: string): Promise<{ readonly store: LocalBlobStore; readonly ledger: EmbeddedLedger; readonly writer: ParquetWriter }> {
    const { store } = this;
    this.lock = await acquireRunLock(this.dataDir, campaign);
    const ledger = (this.opened = new EmbeddedLedger(this.dataDir, { runId }));
    const writer = (this.parquet = await ParquetWriter.create({ tmpDir: join(this.dataDir, '.tmp'), threads: 1 }));
    return { store, ledger, writer };
  }

  /** The ledger once opened: the partition threads' calls go to it. */
  readonly ledger = (): EmbeddedLedger => this.opened!;

  /** The DuckDB that reads a dependent phase's upstream rows, opened on first use. */
  readonly upstreamDb = async (): Promise<DuckDb> => (this.db ??= await DuckDb.open());

  /** Closes what was opened, the lock last. */
  async close(): Promise<void> {
    this.db?.close();
    await this.parquet?.close();
    await this.opened?.close();
    await this.lock?.release();
  }
}

/** Says how the design changed since the campaign's last run, then writes the new plan.json. */
export async function recordPlan(store: LocalBlobStore, campaign: string, plan: Plan, log: (line: string) => void): Promise<void> {
  const previous = await store.get(layout.planKey(campaign));
  if (previous !== undefined) {
    try {
      const changes = describePlanChange(JSON.parse(Buffer.from(previous).toString('utf8')) as Plan, plan);
      if (changes.length > 0) log(`the campaign's design changed since its last run:\n  ${changes.join('\n  ')}`);
    } catch {
      // An unreadable plan.json (a write cut short) only loses the comparison.
    }
  }
  await store.put(layout.planKey(campaign), JSON.stringify(plan, null, 2));
}

/**
 * Makes the ledger ready for this run; returns the reservations a killed run left, held until its
 * partitions' journals are adopted.
 */
export async function prepareLedger(
  ledger: EmbeddedLedger,
  run: { readonly ctx: RunContext; readonly dataDir: string; readonly runId: string; readonly plan: Plan; readonly log: (line: string) => void },
): Promise<{ readonly count: number; readonly amountUsd: number }> {
  const { ctx, dataDir, runId, plan, log } = run;
  const { campaign, graph } = ctx;
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
  return orphaned;
}
