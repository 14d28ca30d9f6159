/**
 * The embedded ledger's money (DESIGN.md "Cost and safety rails"; dynamo/budget.ts is the same
 * concern on DynamoDB): the `campaigns` table's cap, spent and possibly billed, and the
 * `reservations` table. The cap check and the insert of a reservation are one SQL statement inside
 * a write transaction taken up front (BEGIN IMMEDIATE), so neither async workers in one process nor
 * several processes on the same file can push spending past the cap. `reserved_usd` is recomputed
 * from the reservations after each change, not incremented, so rounding never accumulates in it.
 *
 * The `…In` methods run inside a transaction another concern holds (a part's commit settles its
 * reservations, dropping a batch intent releases its reservation), so that theirs and this one's
 * writes are one.
 */
import type Database from 'better-sqlite3';
import { SondageError } from '../../errors.js';
import { CAP_TOLERANCE_USD, assertAmount, duplicateReservation } from '../ledgerRules.js';
import { orphanBill } from '../orphans.js';
import { MAX_SCOPE_IDS } from '../types.js';
import type { BudgetState, LedgerPartition, ReservationScope } from '../types.js';

export class EmbeddedBudget {
  private readonly db: Database.Database;
  private readonly file: string;
  private readonly stmt;
  private readonly reserveTx;
  private readonly settleTx;
  private readonly releaseTx;
  private readonly orphanStaleTx;
  private readonly resolveTx;

  constructor(db: Database.Database, file: string) {
    this.db = db;
    this.file = file;
    const stmt = {
      initCampaign: db.prepare(
        `INSERT INTO campaigns (campaign, cap_usd, run_id) VALUES (?, ?, ?)
         ON CONFLICT (campaign) DO UPDATE SET cap_usd = excluded.cap_usd, run_id = excluded.run_id`,
      ),
      budget: db.prepare(
        `SELECT cap_usd, spent_usd, reserved_usd, possibly_billed_usd,
           (SELECT coalesce(sum(amount_usd), 0) FROM reservations r WHERE r.campaign = campaigns.campaign AND r.orphaned = 1) AS orphaned_usd
         FROM campaigns WHERE campaign = ?`,
      ),
      // The cap check and the insert are one statement: nothing can run between them.
      reserve: db.prepare(
        `INSERT INTO reservations (campaign, reservation_id, run_id, amount_usd, phase, model, language, item_ids_json, item_count)
         SELECT campaign, ?, ?, ?, ?, ?, ?, ?, ? FROM campaigns
         WHERE campaign = ? AND spent_usd + reserved_usd + possibly_billed_usd + ? <= cap_usd + ${CAP_TOLERANCE_USD}`,
      ),
      hasReservation: db.prepare('SELECT 1 FROM reservations WHERE campaign = ? AND reservation_id = ?'),
      deleteReservation: db.prepare('DELETE FROM reservations WHERE campaign = ? AND reservation_id = ?'),
      // An open batch's reservation is not stale: the batch runs on at the provider without us.
      // Nor is an intent's: its batch may exist at the provider, unrecorded (a run killed mid-creation).
      stale: db.prepare(
        `SELECT reservation_id AS id, amount_usd AS amount, phase FROM reservations WHERE campaign = ? AND run_id != ? AND orphaned = 0 AND reservation_id NOT IN
           (SELECT reservation_id FROM batches WHERE batches.campaign = reservations.campaign AND state = 'open'
            UNION ALL SELECT reservation_id FROM batch_intents WHERE batch_intents.campaign = reservations.campaign)`,
      ),
      markOrphaned: db.prepare('UPDATE reservations SET orphaned = 1 WHERE campaign = ? AND reservation_id = ?'),
      orphansOf: db.prepare(
        'SELECT reservation_id AS id, amount_usd AS amount, item_ids_json AS ids FROM reservations WHERE campaign = ? AND orphaned = 1 AND phase = ? AND model = ? AND language = ?',
      ),
      addPossiblyBilled: db.prepare('UPDATE campaigns SET possibly_billed_usd = possibly_billed_usd + ? WHERE campaign = ?'),
      inFlight: db.prepare('SELECT phase, sum(item_count) AS n FROM reservations WHERE campaign = ? AND orphaned = 0 AND phase IS NOT NULL GROUP BY phase'),
      // reserved_usd is recomputed, not incremented, so rounding never accumulates in it.
      syncReserved: db.prepare(
        `UPDATE campaigns SET reserved_usd =
           (SELECT coalesce(sum(amount_usd), 0) FROM reservations WHERE reservations.campaign = campaigns.campaign)
         WHERE campaign = ?`,
      ),
      addSpent: db.prepare('UPDATE campaigns SET spent_usd = spent_usd + ? WHERE campaign = ?'),
      recordOverrun: db.prepare('UPDATE campaigns SET overrun_model = ?, overrun_at = ?, overrun_usd = overrun_usd + ? WHERE campaign = ?'),
      overrun: db.prepare('SELECT overrun_model AS model, overrun_usd AS excessUsd, overrun_at AS at FROM campaigns WHERE campaign = ? AND overrun_model IS NOT NULL'),
    };
    this.stmt = stmt;

    this.reserveTx = db.transaction((campaign: string, reservationId: string, runId: string, amount: number, scope: ReservationScope | undefined): boolean => {
      this.requireCampaign(campaign);
      if (stmt.hasReservation.get(campaign, reservationId)) throw duplicateReservation(campaign, reservationId);
      const ids = scope && scope.itemIds.length <= MAX_SCOPE_IDS ? JSON.stringify(scope.itemIds) : null;
      const { changes } = stmt.reserve.run(reservationId, runId, amount, scope?.phase ?? null, scope?.model ?? null, scope?.language ?? null, ids, scope?.itemIds.length ?? 0, campaign, amount);
      if (changes === 0) return false;
      stmt.syncReserved.run(campaign);
      return true;
    });
    this.settleTx = db.transaction((campaign: string, reservationIds: readonly string[], actualUsd: number): void => this.settleIn(campaign, reservationIds, actualUsd));
    this.releaseTx = db.transaction((campaign: string, reservationId: string): void => this.releaseIn(campaign, reservationId));
    this.orphanStaleTx = db.transaction((campaign: string, runId: string, mode: 'hold' | 'bill'): { count: number; amountUsd: number } => {
      const rows = stmt.stale.all(campaign, runId) as { id: string; amount: number; phase: string | null }[];
      let billed = 0;
      for (const r of rows) {
        // Without a partition (a ledger from before scopes) no journal can resolve it: billed now.
        if (mode === 'hold' && r.phase !== null) stmt.markOrphaned.run(campaign, r.id);
        else {
          stmt.deleteReservation.run(campaign, r.id);
          billed += r.amount;
        }
      }
      if (billed > 0) stmt.addPossiblyBilled.run(billed, campaign);
      stmt.syncReserved.run(campaign);
      return { count: rows.length, amountUsd: rows.reduce((sum, r) => sum + r.amount, 0) };
    });
    this.resolveTx = db.transaction(
      (campaign: string, part: LedgerPartition, replied: ReadonlySet<string>, maxCostOf: (id: string) => number | undefined) => {
        const rows = stmt.orphansOf.all(campaign, part.phase, part.model, part.language) as { id: string; amount: number; ids: string | null }[];
        let billedUsd = 0;
        for (const r of rows) {
          billedUsd += orphanBill(r.amount, r.ids === null ? null : (JSON.parse(r.ids) as string[]), replied, maxCostOf);
          stmt.deleteReservation.run(campaign, r.id);
        }
        if (billedUsd > 0) stmt.addPossiblyBilled.run(billedUsd, campaign);
        stmt.syncReserved.run(campaign);
        return { resolved: rows.length, billedUsd };
      },
    );
  }

  // Not in ledgerRules.ts with the other refusals: each backend names where it looked (a file here, a table there).
  private noBudget(campaign: string): SondageError {
    return new SondageError(`campaign ${JSON.stringify(campaign)} has no budget in ${this.file}; call initCampaign first`);
  }

  private requireCampaign(campaign: string): void {
    if (!this.stmt.budget.get(campaign)) throw this.noBudget(campaign);
  }

  /** Creates the campaign's budget, or updates its cap; spending so far is kept across runs. */
  initCampaign(campaign: string, capUsd: number, runId: string): void {
    assertAmount('cap', capUsd);
    this.db.transaction(() => this.stmt.initCampaign.run(campaign, capUsd, runId)).immediate();
  }

  budget(campaign: string): BudgetState {
    const row = this.stmt.budget.get(campaign) as BudgetState | undefined;
    if (!row) throw this.noBudget(campaign);
    return { cap_usd: row.cap_usd, spent_usd: row.spent_usd, reserved_usd: row.reserved_usd, orphaned_usd: row.orphaned_usd, possibly_billed_usd: row.possibly_billed_usd };
  }

  /** A call of `model` cost `excessUsd` more than it reserved: kept beside the budget, so `status` names the model after the run. */
  recordOverrun(campaign: string, model: string, excessUsd: number, at: string): void {
    assertAmount('overrun', excessUsd);
    this.db.transaction(() => this.stmt.recordOverrun.run(model, at, excessUsd, campaign)).immediate();
  }

  /** What recordOverrun kept (the last model, the excess added up, when), or undefined. */
  overrun(campaign: string): { model: string; excessUsd: number; at: string } | undefined {
    return this.stmt.overrun.get(campaign) as { model: string; excessUsd: number; at: string } | undefined;
  }

  reserve(campaign: string, reservationId: string, runId: string, amountUsd: number, scope?: ReservationScope): boolean {
    assertAmount('reservation amount', amountUsd);
    return this.reserveTx.immediate(campaign, reservationId, runId, amountUsd, scope);
  }

  settle(campaign: string, reservationId: string, actualUsd: number): void {
    assertAmount('actual cost', actualUsd);
    this.settleTx.immediate(campaign, [reservationId], actualUsd);
  }

  release(campaign: string, reservationId: string): void {
    this.releaseTx.immediate(campaign, reservationId);
  }

  orphanStale(campaign: string, runId: string, mode: 'hold' | 'bill'): { count: number; amountUsd: number } {
    return this.orphanStaleTx.immediate(campaign, runId, mode);
  }

  resolveOrphans(campaign: string, partition: LedgerPartition, replied: ReadonlySet<string>, maxCostOf: (itemId: string) => number | undefined): { resolved: number; billedUsd: number } {
    return this.resolveTx.immediate(campaign, partition, replied, maxCostOf);
  }

  /**
   * The item ids the orphaned reservations of a partition name (what `resolveOrphans` will ask
   * `maxCostOf` about): for a caller that must look the costs up before the call, a partition
   * thread whose ledger calls cross to the main thread (lib/run/threadLedger.ts).
   */
  orphanedItemIds(campaign: string, partition: LedgerPartition): string[] {
    const rows = this.stmt.orphansOf.all(campaign, partition.phase, partition.model, partition.language) as { ids: string | null }[];
    return rows.flatMap((r) => (r.ids === null ? [] : (JSON.parse(r.ids) as string[])));
  }

  inFlight(campaign: string): Map<string, number> {
    return new Map((this.stmt.inFlight.all(campaign) as { phase: string; n: number }[]).map((r) => [r.phase, r.n]));
  }

  /** Inside a transaction: deletes the reservations and adds what was spent (a part's commit). */
  settleIn(campaign: string, reservationIds: readonly string[], actualUsd: number): void {
    this.requireCampaign(campaign);
    for (const id of reservationIds) this.stmt.deleteReservation.run(campaign, id);
    // The money was spent even when the reservation is gone (released as stale): count it.
    this.stmt.addSpent.run(actualUsd, campaign);
    this.stmt.syncReserved.run(campaign);
  }

  /** Inside a transaction: deletes a reservation, its amount back to the headroom (a dropped batch intent). */
  releaseIn(campaign: string, reservationId: string): void {
    this.stmt.deleteReservation.run(campaign, reservationId);
    this.stmt.syncReserved.run(campaign);
  }

  /** Inside a transaction: adds to what was possibly billed (a part's attempts cut off unanswered). */
  addPossiblyBilledIn(amountUsd: number, campaign: string): void {
    this.stmt.addPossiblyBilled.run(amountUsd, campaign);
  }
}
