/**
 * Item states on the embedded ledger (dynamo/items.ts is the same concern on DynamoDB): the
 * `items` table (what is registered, what is still to ask, what each committed part did to each
 * item) and the `parts` table of committed parts. A part's commit lives here rather than with the
 * budget because what it guarantees is about items: one write transaction adopts the part once,
 * marks its items, closes its provider batches (batches.ts closeIn) and settles its reservations
 * (budget.ts settleIn), so a part is committed whole or not at all.
 */
import type Database from 'better-sqlite3';
import { assertAmount, partCommitted } from '../ledgerRules.js';
import type { ItemCounts, LedgerPartition, PartCommit, PendingOptions } from '../types.js';
import type { EmbeddedBatches } from './batches.js';
import type { EmbeddedBudget } from './budget.js';

/** An item's states, in the order of `ItemCounts`' fields. */
const STATES = ['pending', 'done', 'failed'] as const;

/** Ids per multi-row insert in `registerItems` and `registerPartition` (5 parameters each, under SQLite's 32766 limit). */
const REGISTER_BATCH = 500;

/** Inserts `rows` ids of one partition as pending; ids it has already keep their state, retired ones are restored. */
function registerSql(rows: number, restoreRetired: boolean): string {
  const values = Array.from({ length: rows }, () => "(?, ?, ?, ?, ?, 'pending')").join(', ');
  const onConflict = restoreRetired ? 'DO UPDATE SET retired = 0 WHERE items.retired = 1' : 'DO NOTHING';
  return `INSERT INTO items (campaign, phase, model, language, item_id, state) VALUES ${values}
    ON CONFLICT (campaign, phase, model, language, item_id) ${onConflict}`;
}

export class EmbeddedItems {
  private readonly stmt;
  /** Registers ids of one partition in one transaction; with `restore`, retired ids come back (partitions.ts runs it inside its own). */
  readonly registerTx: Database.Transaction<(campaign: string, part: LedgerPartition, ids: readonly string[], restore: boolean) => void>;
  private readonly commitTx;
  private readonly phaseCountsStmts = new Map<number, Database.Statement>();

  constructor(private readonly db: Database.Database, budget: EmbeddedBudget, batches: EmbeddedBatches) {
    const stmt = {
      registerBatch: db.prepare(registerSql(REGISTER_BATCH, false)),
      registerOne: db.prepare(registerSql(1, false)),
      claimBatch: db.prepare(registerSql(REGISTER_BATCH, true)),
      claimOne: db.prepare(registerSql(1, true)),
      // Whole id lists go in as one JSON array: SQLite loops natively instead of one bound call
      // per id (several times faster for a partition's ~20k ids).
      notDoneAmong: db
        .prepare(
          `SELECT j.value FROM json_each(?) AS j
           LEFT JOIN items AS i ON i.campaign = ? AND i.phase = ? AND i.model = ? AND i.language = ? AND i.item_id = j.value
           WHERE i.state IS NULL OR (i.state != 'done' AND (i.permanent = 0 OR ?)) ORDER BY j.key`,
        )
        .pluck(),
      // An item done in an earlier part keeps that part: its reply is already counted.
      markDoneAll: db.prepare(
        `INSERT INTO items (campaign, phase, model, language, item_id, state, part_key)
         SELECT ?, ?, ?, ?, value, 'done', ? FROM json_each(?) WHERE true
         ON CONFLICT (campaign, phase, model, language, item_id) DO UPDATE SET state = 'done', part_key = excluded.part_key, permanent = 0
         WHERE items.state != 'done'`,
      ),
      // A scan in rowid order beats the primary-key index here: no sort and no lookup per row
      // (1M items: ~0.3 s instead of ~3 s).
      pending: db
        .prepare("SELECT item_id FROM items NOT INDEXED WHERE campaign = ? AND phase = ? AND state != 'done' AND retired = 0 ORDER BY rowid")
        .pluck(),
      counts: db.prepare('SELECT state, count(*) AS n FROM items NOT INDEXED WHERE campaign = ? AND phase = ? AND retired = 0 GROUP BY state'),
      partExists: db.prepare('SELECT 1 FROM parts WHERE campaign = ? AND phase = ? AND part_key = ?'),
      insertPart: db.prepare('INSERT INTO parts (campaign, phase, part_key, cost_usd) VALUES (?, ?, ?, ?)'),
      parts: db.prepare('SELECT part_key FROM parts WHERE campaign = ? AND phase = ? ORDER BY rowid').pluck(),
      // The last attempt decides: a transient failure after a permanent one is asked again.
      markFailed: db.prepare(
        `INSERT INTO items (campaign, phase, model, language, item_id, state, part_key, permanent) VALUES (?, ?, ?, ?, ?, 'failed', ?, ?)
         ON CONFLICT (campaign, phase, model, language, item_id) DO UPDATE SET state = 'failed', part_key = excluded.part_key, permanent = excluded.permanent
         WHERE items.state != 'done'`,
      ),
    };
    this.stmt = stmt;

    // One statement per 500 ids: new ids come in pending; with `restore`, retired ones come back.
    this.registerTx = db.transaction((campaign: string, part: LedgerPartition, ids: readonly string[], restore: boolean): void => {
      const params: string[] = new Array<string>(REGISTER_BATCH * 5);
      const [batch, one] = restore ? [stmt.claimBatch, stmt.claimOne] : [stmt.registerBatch, stmt.registerOne];
      let i = 0;
      for (; i + REGISTER_BATCH <= ids.length; i += REGISTER_BATCH) {
        for (let j = 0; j < REGISTER_BATCH; j++) {
          params[j * 5] = campaign;
          params[j * 5 + 1] = part.phase;
          params[j * 5 + 2] = part.model;
          params[j * 5 + 3] = part.language;
          params[j * 5 + 4] = ids[i + j] as string;
        }
        batch.run(params);
      }
      for (; i < ids.length; i++) one.run(campaign, part.phase, part.model, part.language, ids[i]);
    });
    this.commitTx = db.transaction((c: PartCommit): void => {
      if (stmt.partExists.get(c.campaign, c.phase, c.partKey)) throw partCommitted(c.campaign, c.phase, c.partKey);
      stmt.insertPart.run(c.campaign, c.phase, c.partKey, c.costUsd);
      if (c.done.length > 0) stmt.markDoneAll.run(c.campaign, c.phase, c.model, c.language, c.partKey, JSON.stringify(c.done));
      for (const id of c.failed) stmt.markFailed.run(c.campaign, c.phase, c.model, c.language, id, c.partKey, 0);
      for (const id of c.failedPermanently ?? []) stmt.markFailed.run(c.campaign, c.phase, c.model, c.language, id, c.partKey, 1);
      for (const id of c.closeBatches ?? []) batches.closeIn(c.campaign, id);
      budget.settleIn(c.campaign, c.reservationIds ?? [], c.costUsd);
      if (c.possiblyBilledUsd) budget.addPossiblyBilledIn(c.possiblyBilledUsd, c.campaign);
    });
  }

  registerItems(campaign: string, partition: LedgerPartition, itemIds: readonly string[]): void {
    this.registerTx.immediate(campaign, partition, itemIds, false);
  }

  pendingItems(campaign: string, phase: string): Set<string> {
    return new Set(this.stmt.pending.all(campaign, phase) as string[]);
  }

  /**
   * The ids among `itemIds` not yet done (unregistered ids included), in the order given; items
   * failed permanently only with `retryFailed`.
   */
  pendingAmong(campaign: string, partition: LedgerPartition, itemIds: readonly string[], options: PendingOptions = {}): Set<string> {
    return new Set(this.stmt.notDoneAmong.all(JSON.stringify(itemIds), campaign, partition.phase, partition.model, partition.language, options.retryFailed === true ? 1 : 0) as string[]);
  }

  commitPart(commit: PartCommit): void {
    assertAmount('part cost', commit.costUsd);
    this.commitTx.immediate(commit);
  }

  committedParts(campaign: string, phase: string): Set<string> {
    return new Set(this.stmt.parts.all(campaign, phase) as string[]);
  }

  counts(campaign: string, phase: string): ItemCounts {
    const out = { pending: 0, done: 0, failed: 0 };
    for (const row of this.stmt.counts.all(campaign, phase) as { state: keyof typeof out; n: number }[]) {
      out[row.state] = row.n;
    }
    return out;
  }

  /**
   * Every phase counted in one scan of the table. A scan reads all of it (P(True) at the paper's
   * size: 8 M items, ~2 GB, ~2 s), so the phases counted one by one took a scan each; a GROUP BY
   * over all of them sorts every row, and took longer than a count per phase and state in one pass.
   */
  phaseCounts(campaign: string, phases: readonly string[]): Map<string, ItemCounts> {
    const out = new Map<string, ItemCounts>();
    if (phases.length === 0) return out;
    const n = this.phaseCountsStmt(phases.length).get(...phases.flatMap((p) => [p, p, p]), campaign) as number[];
    phases.forEach((p, i) => out.set(p, { pending: n[3 * i]!, done: n[3 * i + 1]!, failed: n[3 * i + 2]! }));
    return out;
  }

  /** phaseCounts' statement for `phases` phases, prepared once per number of phases. */
  private phaseCountsStmt(phases: number): Database.Statement {
    let stmt = this.phaseCountsStmts.get(phases);
    if (!stmt) {
      const columns = Array.from({ length: phases }, () => STATES.map((s) => `count(*) FILTER (WHERE phase = ? AND state = '${s}')`)).flat();
      stmt = this.db.prepare(`SELECT ${columns.join(', ')} FROM items NOT INDEXED WHERE campaign = ? AND retired = 0`).raw();
      this.phaseCountsStmts.set(phases, stmt);
    }
    return stmt;
  }
}
