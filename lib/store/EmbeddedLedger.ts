import Database from 'better-sqlite3';
import { randomUUID } from 'node:crypto';
import { mkdirSync } from 'node:fs';
import path from 'node:path';
import { SondageError } from '../errors.js';
import { PartCommittedError } from './errors.js';
import { MAX_SCOPE_IDS } from './types.js';
import type { BatchIntent, BatchRecord, BudgetState, Ledger, LedgerPartition, PartCommit, PartitionRecord, PendingOptions, ReservationScope } from './types.js';
import { idsDigest, orphanBill } from './orphans.js';
import { ledgerOpenError } from './storageErrors.js';
import { parsePartKey } from './layout.js';

/** Rounding slack of the cap check, so a reservation of exactly the remaining budget passes. */
const CAP_TOLERANCE_USD = 1e-12;

/** Ids per multi-row insert in `registerItems` and `registerPartition` (5 parameters each, under SQLite's 32766 limit). */
const REGISTER_BATCH = 500;

/**
 * Ids per transaction of `registerPartition`. Partition threads share the main thread's ledger:
 * registering a partition of 80,000 ids in one transaction (~0.3 s) held up every other thread's
 * calls, a chunk's reservation among them, and its calls stalled behind it.
 */
const REGISTER_SLICE = 10_000;

/** Inserts `rows` ids of one partition as pending; ids it has already keep their state, retired ones are restored. */
function registerSql(rows: number, restoreRetired: boolean): string {
  const values = Array.from({ length: rows }, () => "(?, ?, ?, ?, ?, 'pending')").join(', ');
  const onConflict = restoreRetired ? 'DO UPDATE SET retired = 0 WHERE items.retired = 1' : 'DO NOTHING';
  return `INSERT INTO items (campaign, phase, model, language, item_id, state) VALUES ${values}
    ON CONFLICT (campaign, phase, model, language, item_id) ${onConflict}`;
}

/**
 * The items table. Its key leads with the partition, so that the ids of one partition sit together
 * in the key's index: registering, looking up and committing a partition's ids touches a small
 * part of it. Keyed by phase and id alone (before), a phase's random ids spread over the whole
 * index, and past ~0.5 M items each one was a cache miss (bench/ledger.ts: 39.5 s → 19.7 s for
 * FAR-6’s 1.5 M items). A rowid table: rowid is the registration order that pendingItems keeps.
 */
const ITEMS_TABLE = `
CREATE TABLE IF NOT EXISTS items (
  campaign  TEXT NOT NULL,
  phase     TEXT NOT NULL,
  model     TEXT NOT NULL,
  language  TEXT NOT NULL,
  item_id   TEXT NOT NULL,
  state     TEXT NOT NULL CHECK (state IN ('pending', 'done', 'failed')),
  part_key  TEXT,
  -- 1 when the item's last attempt failed permanently (refusal, content filter…): not asked again
  -- unless retryFailed.
  permanent INTEGER NOT NULL DEFAULT 0,
  -- 1 when the current design's partition no longer has the id: kept with its replies, not counted.
  retired   INTEGER NOT NULL DEFAULT 0,
  PRIMARY KEY (campaign, phase, model, language, item_id)
);`;

const SCHEMA = `
CREATE TABLE IF NOT EXISTS campaigns (
  campaign     TEXT PRIMARY KEY,
  cap_usd      REAL NOT NULL,
  spent_usd    REAL NOT NULL DEFAULT 0,
  reserved_usd REAL NOT NULL DEFAULT 0,
  run_id       TEXT
);
CREATE TABLE IF NOT EXISTS reservations (
  campaign       TEXT NOT NULL,
  reservation_id TEXT NOT NULL,
  run_id         TEXT NOT NULL,
  amount_usd     REAL NOT NULL,
  PRIMARY KEY (campaign, reservation_id)
);
${ITEMS_TABLE}
CREATE TABLE IF NOT EXISTS parts (
  campaign TEXT NOT NULL,
  phase    TEXT NOT NULL,
  part_key TEXT NOT NULL,
  cost_usd REAL NOT NULL,
  PRIMARY KEY (campaign, phase, part_key)
);
-- Provider batches: written at submission, closed by the part commit holding their results.
CREATE TABLE IF NOT EXISTS batches (
  campaign       TEXT NOT NULL,
  phase          TEXT NOT NULL,
  model          TEXT NOT NULL,
  language       TEXT NOT NULL,
  batch_id       TEXT NOT NULL,
  handle_json    TEXT NOT NULL,
  reservation_id TEXT NOT NULL,
  state          TEXT NOT NULL CHECK (state IN ('open', 'closed')),
  PRIMARY KEY (campaign, batch_id)
);
-- The partitions of the current design (registerPartition): size, and a digest of their ids.
CREATE TABLE IF NOT EXISTS partitions (
  campaign TEXT NOT NULL,
  phase    TEXT NOT NULL,
  model    TEXT NOT NULL,
  language TEXT NOT NULL,
  items    INTEGER NOT NULL,
  digest   TEXT NOT NULL,
  PRIMARY KEY (campaign, phase, model, language)
);
-- Batches about to be created: written before the provider is asked, deleted by the batch's record.
CREATE TABLE IF NOT EXISTS batch_intents (
  campaign        TEXT NOT NULL,
  submission_key  TEXT NOT NULL,
  phase           TEXT NOT NULL,
  model           TEXT NOT NULL,
  language        TEXT NOT NULL,
  provider        TEXT NOT NULL,
  custom_ids_json TEXT NOT NULL,
  reservation_id  TEXT NOT NULL,
  created_at      INTEGER NOT NULL,
  PRIMARY KEY (campaign, submission_key)
);
`;

/** Columns added after a ledger file may have been created: added on open when missing (items: before migrateItems). */
const ADDED_COLUMNS: readonly { table: string; column: string; ddl: string }[] = [
  { table: 'batches', column: 'cancelled_at', ddl: 'ALTER TABLE batches ADD COLUMN cancelled_at TEXT' },
  { table: 'batches', column: 'submission_key', ddl: 'ALTER TABLE batches ADD COLUMN submission_key TEXT' },
  // 1 when the item's last attempt failed permanently (refusal, content filter…): not asked again
  // unless retryFailed. A ledger from before it reads 0: its failed items are re-asked, as they were.
  { table: 'items', column: 'permanent', ddl: 'ALTER TABLE items ADD COLUMN permanent INTEGER NOT NULL DEFAULT 0' },
  // The partition of an item (registerPartition), and whether the current design still has it.
  { table: 'items', column: 'model', ddl: 'ALTER TABLE items ADD COLUMN model TEXT' },
  { table: 'items', column: 'language', ddl: 'ALTER TABLE items ADD COLUMN language TEXT' },
  { table: 'items', column: 'retired', ddl: 'ALTER TABLE items ADD COLUMN retired INTEGER NOT NULL DEFAULT 0' },
  // What a reservation covers, and whether its run died holding it (orphanStale).
  { table: 'reservations', column: 'phase', ddl: 'ALTER TABLE reservations ADD COLUMN phase TEXT' },
  { table: 'reservations', column: 'model', ddl: 'ALTER TABLE reservations ADD COLUMN model TEXT' },
  { table: 'reservations', column: 'language', ddl: 'ALTER TABLE reservations ADD COLUMN language TEXT' },
  { table: 'reservations', column: 'item_ids_json', ddl: 'ALTER TABLE reservations ADD COLUMN item_ids_json TEXT' },
  { table: 'reservations', column: 'item_count', ddl: 'ALTER TABLE reservations ADD COLUMN item_count INTEGER NOT NULL DEFAULT 0' },
  { table: 'reservations', column: 'orphaned', ddl: 'ALTER TABLE reservations ADD COLUMN orphaned INTEGER NOT NULL DEFAULT 0' },
  { table: 'campaigns', column: 'possibly_billed_usd', ddl: 'ALTER TABLE campaigns ADD COLUMN possibly_billed_usd REAL NOT NULL DEFAULT 0' },
];

/**
 * Rewrites, once, the items of a ledger from before they were keyed by partition (key: campaign,
 * phase, item_id) into the current table, in registration order. An item registered without a
 * partition takes the one its part key names (data dir layout); a pending or failed item with
 * neither is dropped — the next registration of its partition writes it again as pending, and it
 * is asked again, as it would have been. A done item with neither (a part key outside the layout)
 * is kept under an empty partition: counted done, never asked again by a run that finds it, and
 * asked again by one that looks it up in its partition.
 */
function migrateItems(db: Database.Database): void {
  const keyed = db.prepare("SELECT name FROM pragma_table_info('items') WHERE pk > 0").pluck().all() as string[];
  if (keyed.includes('model')) return;
  db.exec('ALTER TABLE items RENAME TO items_keyed_by_id');
  db.exec(ITEMS_TABLE);
  db.exec('CREATE TEMP TABLE part_partitions (part_key TEXT PRIMARY KEY, model TEXT NOT NULL, language TEXT NOT NULL)');
  const place = db.prepare('INSERT INTO part_partitions (part_key, model, language) VALUES (?, ?, ?)');
  for (const key of db.prepare('SELECT DISTINCT part_key FROM items_keyed_by_id WHERE model IS NULL AND part_key IS NOT NULL').pluck().all() as string[]) {
    const parsed = parsePartKey(key);
    if (parsed !== undefined) place.run(key, parsed.model, parsed.language);
  }
  db.exec(`INSERT INTO items (campaign, phase, model, language, item_id, state, part_key, permanent, retired)
    SELECT i.campaign, i.phase, coalesce(i.model, p.model, ''), coalesce(i.language, p.language, ''), i.item_id, i.state, i.part_key, i.permanent, i.retired
    FROM items_keyed_by_id AS i LEFT JOIN part_partitions AS p ON p.part_key = i.part_key
    WHERE i.model IS NOT NULL OR p.model IS NOT NULL OR i.state = 'done'
    ORDER BY i.rowid`);
  db.exec('DROP TABLE items_keyed_by_id; DROP TABLE temp.part_partitions');
}

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

export interface EmbeddedLedgerOptions {
  /** How long a write waits for another process's lock, in ms (SQLite busy_timeout). Default 30 s. */
  readonly busyTimeoutMs?: number;
  /** Run id used for reservations of campaigns this instance did not `initCampaign`. */
  readonly runId?: string;
}

function assertAmount(what: string, amount: number): void {
  if (typeof amount !== 'number' || !Number.isFinite(amount) || amount < 0) {
    throw new SondageError(`${what} must be a finite number of USD ≥ 0, got ${String(amount)}`);
  }
}

/**
 * The ledger on one machine: item states and the campaign budget in SQLite
 * (`<dataDir>/ledger.sqlite`, WAL). The budget protocol of DESIGN.md "Cost and safety rails"
 * runs as SQLite write transactions taken up front (BEGIN IMMEDIATE), so neither async workers in
 * one process nor several processes on the same file can push spending past the cap.
 *
 * @example
 * const ledger = new EmbeddedLedger('./data');
 * await ledger.initCampaign('demo', 5, runId);
 * if (await ledger.reserve('demo', callId, maxCost)) { …call…; await ledger.settle('demo', callId, cost); }
 */
export class EmbeddedLedger implements Ledger {
  readonly file: string;
  private readonly db: Database.Database;
  private readonly defaultRunId: string;
  private readonly runIds = new Map<string, string>();
  private readonly stmt;
  private readonly reserveTx;
  private readonly settleTx;
  private readonly releaseTx;
  private readonly orphanStaleTx;
  private readonly resolveTx;
  private readonly registerPartitionTx;
  private readonly registerTx;
  private readonly commitTx;

  constructor(dataDir: string, options: EmbeddedLedgerOptions = {}) {
    mkdirSync(dataDir, { recursive: true });
    this.file = path.join(path.resolve(dataDir), 'ledger.sqlite');
    this.defaultRunId = options.runId ?? `${process.pid}-${randomUUID()}`;
    // ---- bad input: a ledger that cannot be opened is named, not a stack trace.
    let opened: Database.Database | undefined;
    try {
      opened = new Database(this.file, { timeout: options.busyTimeoutMs ?? 30_000 });
      const db = opened;
      db.pragma('journal_mode = WAL');
      db.pragma('synchronous = NORMAL');
      // Registering a million random item ids touches index pages all over; keep them in memory.
      db.pragma('cache_size = -65536');
      db.transaction(() => {
        db.exec(SCHEMA);
        for (const c of ADDED_COLUMNS) {
          const has = (db.prepare(`SELECT name FROM pragma_table_info('${c.table}')`).pluck().all() as string[]).includes(c.column);
          if (!has) db.exec(c.ddl);
        }
        migrateItems(db);
      }).immediate();
    } catch (err) {
      opened?.close();
      throw ledgerOpenError(this.file, err);
    }
    // ---- end bad input
    const db = opened;
    this.db = db;

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
      partitionRow: db.prepare('SELECT items, digest FROM partitions WHERE campaign = ? AND phase = ? AND model = ? AND language = ?'),
      upsertPartition: db.prepare(
        `INSERT INTO partitions (campaign, phase, model, language, items, digest) VALUES (?, ?, ?, ?, ?, ?)
         ON CONFLICT (campaign, phase, model, language) DO UPDATE SET items = excluded.items, digest = excluded.digest`,
      ),
      partitions: db.prepare('SELECT phase, model, language, items FROM partitions WHERE campaign = ? ORDER BY phase, model, language'),
      // Ids the partition no longer has: kept with their replies, left out of the counts.
      retireOthers: db.prepare(
        `UPDATE items SET retired = 1 WHERE campaign = ? AND phase = ? AND model = ? AND language = ? AND retired = 0
           AND item_id NOT IN (SELECT value FROM json_each(?))`,
      ),
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
      // reserved_usd is recomputed, not incremented, so rounding never accumulates in it.
      syncReserved: db.prepare(
        `UPDATE campaigns SET reserved_usd =
           (SELECT coalesce(sum(amount_usd), 0) FROM reservations WHERE reservations.campaign = campaigns.campaign)
         WHERE campaign = ?`,
      ),
      addSpent: db.prepare('UPDATE campaigns SET spent_usd = spent_usd + ? WHERE campaign = ?'),
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

    const requireCampaign = (campaign: string): void => {
      if (!stmt.budget.get(campaign)) {
        throw new SondageError(`campaign ${JSON.stringify(campaign)} has no budget in ${this.file}; call initCampaign first`);
      }
    };
    const settleIn = (campaign: string, reservationIds: readonly string[], actualUsd: number): void => {
      requireCampaign(campaign);
      for (const id of reservationIds) stmt.deleteReservation.run(campaign, id);
      // The money was spent even when the reservation is gone (released as stale): count it.
      stmt.addSpent.run(actualUsd, campaign);
      stmt.syncReserved.run(campaign);
    };

    this.reserveTx = db.transaction((campaign: string, reservationId: string, runId: string, amount: number, scope: ReservationScope | undefined): boolean => {
      requireCampaign(campaign);
      if (stmt.hasReservation.get(campaign, reservationId)) {
        throw new SondageError(`reservation ${JSON.stringify(reservationId)} of campaign ${JSON.stringify(campaign)} already exists; reservation ids must be unique`);
      }
      const ids = scope && scope.itemIds.length <= MAX_SCOPE_IDS ? JSON.stringify(scope.itemIds) : null;
      const { changes } = stmt.reserve.run(reservationId, runId, amount, scope?.phase ?? null, scope?.model ?? null, scope?.language ?? null, ids, scope?.itemIds.length ?? 0, campaign, amount);
      if (changes === 0) return false;
      stmt.syncReserved.run(campaign);
      return true;
    });
    this.settleTx = db.transaction(settleIn);
    this.releaseTx = db.transaction((campaign: string, reservationId: string): void => {
      stmt.deleteReservation.run(campaign, reservationId);
      stmt.syncReserved.run(campaign);
    });
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
    // Registers ids from `from` on (registerPartition registered those before), then retires the rest and records the digest.
    this.registerPartitionTx = db.transaction((campaign: string, part: LedgerPartition, ids: readonly string[], digest: string, from: number): void => {
      const known = stmt.partitionRow.get(campaign, part.phase, part.model, part.language) as { items: number; digest: string } | undefined;
      // The same design as last time: every id is registered already.
      if (known?.digest === digest) return;
      this.registerTx(campaign, part, from === 0 ? ids : ids.slice(from), true);
      // Ids the partition has and the list lacks (the design changed, or registerItems wrote ids
      // of a slice): read through the key's partition prefix, a few ms per partition.
      stmt.retireOthers.run(campaign, part.phase, part.model, part.language, JSON.stringify(ids));
      stmt.upsertPartition.run(campaign, part.phase, part.model, part.language, ids.length, digest);
    });
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
      if (stmt.partExists.get(c.campaign, c.phase, c.partKey)) {
        throw new PartCommittedError(
          `part ${c.partKey} of campaign ${JSON.stringify(c.campaign)} phase ${JSON.stringify(c.phase)} is already committed; ` +
            'a part is adopted once (write new replies to a new part name)',
          c.partKey,
        );
      }
      stmt.insertPart.run(c.campaign, c.phase, c.partKey, c.costUsd);
      if (c.done.length > 0) stmt.markDoneAll.run(c.campaign, c.phase, c.model, c.language, c.partKey, JSON.stringify(c.done));
      for (const id of c.failed) stmt.markFailed.run(c.campaign, c.phase, c.model, c.language, id, c.partKey, 0);
      for (const id of c.failedPermanently ?? []) stmt.markFailed.run(c.campaign, c.phase, c.model, c.language, id, c.partKey, 1);
      for (const id of c.closeBatches ?? []) stmt.closeBatch.run(c.campaign, id);
      settleIn(c.campaign, c.reservationIds ?? [], c.costUsd);
      if (c.possiblyBilledUsd) stmt.addPossiblyBilled.run(c.possiblyBilledUsd, c.campaign);
    });
  }

  private runIdFor(campaign: string): string {
    return this.runIds.get(campaign) ?? this.defaultRunId;
  }

  /** Creates the campaign's budget, or updates its cap; spending so far is kept across runs. */
  async initCampaign(campaign: string, capUsd: number, runId: string): Promise<void> {
    assertAmount('cap', capUsd);
    this.db.transaction(() => this.stmt.initCampaign.run(campaign, capUsd, runId)).immediate();
    this.runIds.set(campaign, runId);
  }

  async budget(campaign: string): Promise<BudgetState> {
    const row = this.stmt.budget.get(campaign) as BudgetState | undefined;
    if (!row) throw new SondageError(`campaign ${JSON.stringify(campaign)} has no budget in ${this.file}; call initCampaign first`);
    return { cap_usd: row.cap_usd, spent_usd: row.spent_usd, reserved_usd: row.reserved_usd, orphaned_usd: row.orphaned_usd, possibly_billed_usd: row.possibly_billed_usd };
  }

  async reserve(campaign: string, reservationId: string, amountUsd: number, scope?: ReservationScope): Promise<boolean> {
    assertAmount('reservation amount', amountUsd);
    return this.reserveTx.immediate(campaign, reservationId, this.runIdFor(campaign), amountUsd, scope);
  }

  async settle(campaign: string, reservationId: string, actualUsd: number): Promise<void> {
    assertAmount('actual cost', actualUsd);
    this.settleTx.immediate(campaign, [reservationId], actualUsd);
  }

  async release(campaign: string, reservationId: string): Promise<void> {
    this.releaseTx.immediate(campaign, reservationId);
  }

  async orphanStale(campaign: string, runId: string, mode: 'hold' | 'bill'): Promise<{ count: number; amountUsd: number }> {
    return this.orphanStaleTx.immediate(campaign, runId, mode);
  }

  async resolveOrphans(
    campaign: string,
    partition: LedgerPartition,
    replied: ReadonlySet<string>,
    maxCostOf: (itemId: string) => number | undefined,
  ): Promise<{ resolved: number; billedUsd: number }> {
    return this.resolveTx.immediate(campaign, partition, replied, maxCostOf);
  }

  /**
   * The item ids the orphaned reservations of a partition name (what `resolveOrphans` will ask
   * `maxCostOf` about): for a caller that must look the costs up before the call, a partition
   * thread whose ledger calls cross to the main thread (lib/run/threadLedger.ts).
   */
  async orphanedItemIds(campaign: string, partition: LedgerPartition): Promise<string[]> {
    const rows = this.stmt.orphansOf.all(campaign, partition.phase, partition.model, partition.language) as { ids: string | null }[];
    return rows.flatMap((r) => (r.ids === null ? [] : (JSON.parse(r.ids) as string[])));
  }

  async inFlight(campaign: string): Promise<Map<string, number>> {
    return new Map((this.stmt.inFlight.all(campaign) as { phase: string; n: number }[]).map((r) => [r.phase, r.n]));
  }

  async registerItems(campaign: string, partition: LedgerPartition, itemIds: readonly string[]): Promise<void> {
    this.registerTx.immediate(campaign, partition, itemIds, false);
  }

  /**
   * Registers a partition's ids a slice at a time, one transaction each, letting other calls run
   * between them; the last transaction retires the ids the list lacks and records the digest. A run
   * killed between slices recorded no digest: the next registers the partition again (ids already
   * registered keep their state).
   */
  async registerPartition(campaign: string, partition: LedgerPartition, itemIds: readonly string[]): Promise<void> {
    const digest = idsDigest(itemIds);
    const known = this.stmt.partitionRow.get(campaign, partition.phase, partition.model, partition.language) as { digest: string } | undefined;
    if (known?.digest === digest) return;
    let from = 0;
    for (; from + REGISTER_SLICE < itemIds.length; from += REGISTER_SLICE) {
      this.registerTx.immediate(campaign, partition, itemIds.slice(from, from + REGISTER_SLICE), true);
      await new Promise<void>((resolve) => setImmediate(resolve));
    }
    this.registerPartitionTx.immediate(campaign, partition, itemIds, digest, from);
  }

  async partitions(campaign: string): Promise<PartitionRecord[]> {
    return this.stmt.partitions.all(campaign) as PartitionRecord[];
  }

  async pendingItems(campaign: string, phase: string): Promise<Set<string>> {
    return new Set(this.stmt.pending.all(campaign, phase) as string[]);
  }

  /**
   * The ids among `itemIds` not yet done (unregistered ids included), in the order given; items
   * failed permanently only with `retryFailed`.
   */
  async pendingAmong(campaign: string, partition: LedgerPartition, itemIds: readonly string[], options: PendingOptions = {}): Promise<Set<string>> {
    return new Set(this.stmt.notDoneAmong.all(JSON.stringify(itemIds), campaign, partition.phase, partition.model, partition.language, options.retryFailed === true ? 1 : 0) as string[]);
  }

  async commitPart(commit: PartCommit): Promise<void> {
    assertAmount('part cost', commit.costUsd);
    this.commitTx.immediate(commit);
  }

  async committedParts(campaign: string, phase: string): Promise<Set<string>> {
    return new Set(this.stmt.parts.all(campaign, phase) as string[]);
  }

  async counts(campaign: string, phase: string): Promise<{ pending: number; done: number; failed: number }> {
    const out = { pending: 0, done: 0, failed: 0 };
    for (const row of this.stmt.counts.all(campaign, phase) as { state: keyof typeof out; n: number }[]) {
      out[row.state] = row.n;
    }
    return out;
  }

  async recordBatch(r: BatchRecord): Promise<void> {
    this.db
      .transaction(() => {
        this.stmt.insertBatch.run(r.campaign, r.phase, r.model, r.language, r.batchId, r.handleJson, r.reservationId, r.submissionKey ?? null);
        if (r.submissionKey !== undefined) this.stmt.deleteIntent.run(r.campaign, r.submissionKey);
      })
      .immediate();
  }

  async openBatches(campaign: string, phase: string, model: string, language: string): Promise<BatchRecord[]> {
    return (this.stmt.openBatches.all(campaign, phase, model, language) as BatchRecord[]).map(recordOf);
  }

  async campaignBatches(campaign: string): Promise<BatchRecord[]> {
    return (this.stmt.campaignBatches.all(campaign) as BatchRecord[]).map(recordOf);
  }

  async markBatchCancelled(campaign: string, batchId: string, at: string): Promise<void> {
    this.db.transaction(() => this.stmt.markCancelled.run(at, campaign, batchId)).immediate();
  }

  async recordBatchIntent(i: BatchIntent): Promise<void> {
    this.db
      .transaction(() =>
        this.stmt.insertIntent.run(i.campaign, i.submissionKey, i.phase, i.model, i.language, i.provider, JSON.stringify(i.customIds), i.reservationId, i.createdAt),
      )
      .immediate();
  }

  async batchIntents(campaign: string, phase: string, model: string, language: string): Promise<BatchIntent[]> {
    return (this.stmt.intents.all(campaign, phase, model, language) as IntentRow[]).map(intentOf);
  }

  async campaignBatchIntents(campaign: string): Promise<BatchIntent[]> {
    return (this.stmt.campaignIntents.all(campaign) as IntentRow[]).map(intentOf);
  }

  async dropBatchIntent(campaign: string, submissionKey: string): Promise<void> {
    this.db
      .transaction(() => {
        const reservationId = this.stmt.intentReservation.get(campaign, submissionKey) as string | undefined;
        if (reservationId === undefined) return;
        this.stmt.deleteIntent.run(campaign, submissionKey);
        this.stmt.deleteReservation.run(campaign, reservationId);
        this.stmt.syncReserved.run(campaign);
      })
      .immediate();
  }

  async close(): Promise<void> {
    if (this.db.open) this.db.close();
  }
}
