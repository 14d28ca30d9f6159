/**
 * Provider batches on the embedded ledger (dynamo/batches.ts is the same concern on DynamoDB): the
 * `batches` table, written at submission and closed by the part commit holding their results
 * (items.ts, through closeIn, in its transaction), and `batch_intents`, a batch about to be
 * created, written before the provider is asked and deleted by the batch's record, so that a run
 * killed mid-creation leaves a trace and its reservation stays held (budget.ts orphanStale).
 */
import type Database from 'better-sqlite3';
import type { BatchIntent, BatchRecord } from '../types.js';
import type { EmbeddedBudget } from './budget.js';

interface IntentRow {
  campaign: string;
  submission_key: string;
  phase: string;
  model: string;
  language: string;
  provider: string;
  custom_ids_json: string;
  reservation_id: string;
  created_at: number;
}

const intentOf = (r: IntentRow): BatchIntent => ({
  campaign: r.campaign,
  phase: r.phase,
  model: r.model,
  language: r.language,
  provider: r.provider,
  submissionKey: r.submission_key,
  customIds: JSON.parse(r.custom_ids_json) as string[],
  reservationId: r.reservation_id,
  createdAt: r.created_at,
});

/** Drops the SQL NULLs of optional columns, so a record reads as the interface declares it. */
const recordOf = (r: BatchRecord & { submissionKey?: string | null; cancelledAt?: string | null }): BatchRecord => {
  const { submissionKey, cancelledAt, ...rest } = r;
  return { ...rest, ...(submissionKey ? { submissionKey } : {}), ...(cancelledAt ? { cancelledAt } : {}) };
};

export class EmbeddedBatches {
  private readonly db: Database.Database;
  private readonly budget: EmbeddedBudget;
  private readonly stmt;

  constructor(db: Database.Database, budget: EmbeddedBudget) {
    this.db = db;
    this.budget = budget;
    this.stmt = {
      insertBatch: db.prepare(
        `INSERT INTO batches (campaign, phase, model, language, batch_id, handle_json, reservation_id, state, submission_key)
         VALUES (?, ?, ?, ?, ?, ?, ?, 'open', ?)`,
      ),
      openBatches: db.prepare(
        `SELECT campaign, phase, model, language, batch_id AS batchId, handle_json AS handleJson, reservation_id AS reservationId,
                submission_key AS submissionKey, cancelled_at AS cancelledAt
         FROM batches WHERE campaign = ? AND phase = ? AND model = ? AND language = ? AND state = 'open' ORDER BY rowid`,
      ),
      campaignBatches: db.prepare(
        `SELECT campaign, phase, model, language, batch_id AS batchId, handle_json AS handleJson, reservation_id AS reservationId,
                submission_key AS submissionKey, cancelled_at AS cancelledAt
         FROM batches WHERE campaign = ? AND state = 'open' ORDER BY rowid`,
      ),
      markCancelled: db.prepare("UPDATE batches SET cancelled_at = coalesce(cancelled_at, ?) WHERE campaign = ? AND batch_id = ? AND state = 'open'"),
      insertIntent: db.prepare(
        `INSERT INTO batch_intents (campaign, submission_key, phase, model, language, provider, custom_ids_json, reservation_id, created_at)
         VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)`,
      ),
      intents: db.prepare('SELECT * FROM batch_intents WHERE campaign = ? AND phase = ? AND model = ? AND language = ? ORDER BY rowid'),
      campaignIntents: db.prepare('SELECT * FROM batch_intents WHERE campaign = ? ORDER BY rowid'),
      intentReservation: db.prepare('SELECT reservation_id FROM batch_intents WHERE campaign = ? AND submission_key = ?').pluck(),
      deleteIntent: db.prepare('DELETE FROM batch_intents WHERE campaign = ? AND submission_key = ?'),
      closeBatch: db.prepare("UPDATE batches SET state = 'closed' WHERE campaign = ? AND batch_id = ?"),
    };
  }

  recordBatch(r: BatchRecord): void {
    this.db
      .transaction(() => {
        this.stmt.insertBatch.run(r.campaign, r.phase, r.model, r.language, r.batchId, r.handleJson, r.reservationId, r.submissionKey ?? null);
        if (r.submissionKey !== undefined) this.stmt.deleteIntent.run(r.campaign, r.submissionKey);
      })
      .immediate();
  }

  openBatches(campaign: string, phase: string, model: string, language: string): BatchRecord[] {
    return (this.stmt.openBatches.all(campaign, phase, model, language) as BatchRecord[]).map(recordOf);
  }

  campaignBatches(campaign: string): BatchRecord[] {
    return (this.stmt.campaignBatches.all(campaign) as BatchRecord[]).map(recordOf);
  }

  markBatchCancelled(campaign: string, batchId: string, at: string): void {
    this.db.transaction(() => this.stmt.markCancelled.run(at, campaign, batchId)).immediate();
  }

  recordBatchIntent(i: BatchIntent): void {
    this.db
      .transaction(() =>
        this.stmt.insertIntent.run(i.campaign, i.submissionKey, i.phase, i.model, i.language, i.provider, JSON.stringify(i.customIds), i.reservationId, i.createdAt),
      )
      .immediate();
  }

  batchIntents(campaign: string, phase: string, model: string, language: string): BatchIntent[] {
    return (this.stmt.intents.all(campaign, phase, model, language) as IntentRow[]).map(intentOf);
  }

  campaignBatchIntents(campaign: string): BatchIntent[] {
    return (this.stmt.campaignIntents.all(campaign) as IntentRow[]).map(intentOf);
  }

  dropBatchIntent(campaign: string, submissionKey: string): void {
    this.db
      .transaction(() => {
        const reservationId = this.stmt.intentReservation.get(campaign, submissionKey) as string | undefined;
        if (reservationId === undefined) return;
        this.stmt.deleteIntent.run(campaign, submissionKey);
        this.budget.releaseIn(campaign, reservationId);
      })
      .immediate();
  }

  /** Inside a transaction: closes a batch (the part commit that holds its results). */
  closeIn(campaign: string, batchId: string): void {
    this.stmt.closeBatch.run(campaign, batchId);
  }
}
