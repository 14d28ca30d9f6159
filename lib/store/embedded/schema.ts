/**
 * The embedded ledger's file, `<dataDir>/ledger.sqlite`: its tables, the columns added since the
 * first version (added on open when missing), the rewrites of the items table into its current
 * key, and the opening itself (WAL, busy timeout, a named error for a file that is not a ledger).
 * Kept apart from the concerns that use the tables (budget.ts, items.ts, batches.ts,
 * partitions.ts) because the file is one: every table is created, and migrated, in the same
 * transaction, whichever concern reads it.
 */
import Database from 'better-sqlite3';
import { parsePartKey } from '../layout.js';
import { ledgerOpenError } from '../storageErrors.js';

/**
 * The items table: one row per item, keyed by its partition's number (item_partitions) and its
 * id, so that the ids of one partition sit together in the key's index — registering, looking up
 * and committing a partition's ids touches a small part of it. A number, not the partition's four
 * names: the row and its index entry hold the names once per partition instead of twice per item,
 * and the part that settled an item is the parts table's rowid, not its 70-byte key. The file
 * took 228 bytes an item with the names and 102 without, and the calls of a full FAR-6 run a
 * quarter less time (bench/ledger.ts: 18.9 s → 14.5 s). A rowid table: rowid is the registration
 * order that pendingItems keeps.
 */
const ITEMS_TABLE = `
CREATE TABLE IF NOT EXISTS items (
  pid       INTEGER NOT NULL,
  item_id   TEXT NOT NULL,
  state     TEXT NOT NULL CHECK (state IN ('pending', 'done', 'failed')),
  -- The rowid of the part (parts table) that last marked it done or failed: for a person reading
  -- the file (nothing reads it; a VACUUM may renumber the parts).
  part      INTEGER,
  -- 1 when the item's last attempt failed permanently (refusal, content filter…): not asked again
  -- unless retryFailed.
  permanent INTEGER NOT NULL DEFAULT 0,
  -- 1 when the current design's partition no longer has the id: kept with its replies, not counted.
  retired   INTEGER NOT NULL DEFAULT 0,
  PRIMARY KEY (pid, item_id)
);`;

/**
 * The items table of ledgers before item_partitions: keyed by the partition's names. Only
 * migrateItems writes it, from the layout before that (keyed by phase and id), and
 * migratePartitionNumbers rewrites it at once into the current table. Keyed by phase and id, a
 * phase's random ids spread over the whole index, and past ~0.5 M items each one was a cache miss
 * (bench/ledger.ts: 39.5 s → 19.7 s for FAR-6's 1.5 M items).
 */
const ITEMS_BY_PARTITION_NAMES = `
CREATE TABLE items (
  campaign  TEXT NOT NULL,
  phase     TEXT NOT NULL,
  model     TEXT NOT NULL,
  language  TEXT NOT NULL,
  item_id   TEXT NOT NULL,
  state     TEXT NOT NULL CHECK (state IN ('pending', 'done', 'failed')),
  part_key  TEXT,
  permanent INTEGER NOT NULL DEFAULT 0,
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
-- The partitions items are registered in, numbered: the items table keys its rows by the number.
-- A partition has its number for good; purging its campaign deletes it with its items.
CREATE TABLE IF NOT EXISTS item_partitions (
  pid      INTEGER PRIMARY KEY,
  campaign TEXT NOT NULL,
  phase    TEXT NOT NULL,
  model    TEXT NOT NULL,
  language TEXT NOT NULL,
  UNIQUE (campaign, phase, model, language)
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

/**
 * Columns added after a ledger file may have been created: added on open when missing. Those of
 * `items` belong to its layouts before item_partitions, and are added to such a table only, before
 * migrateItems and migratePartitionNumbers rewrite it.
 */
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
  // A provider's usage above what its calls reserved (recordOverrun): the last model, the excess added up, when.
  { table: 'campaigns', column: 'overrun_model', ddl: 'ALTER TABLE campaigns ADD COLUMN overrun_model TEXT' },
  { table: 'campaigns', column: 'overrun_usd', ddl: 'ALTER TABLE campaigns ADD COLUMN overrun_usd REAL NOT NULL DEFAULT 0' },
  { table: 'campaigns', column: 'overrun_at', ddl: 'ALTER TABLE campaigns ADD COLUMN overrun_at TEXT' },
];

/**
 * Rewrites, once, the items of a ledger from before they were keyed by partition (key: campaign,
 * phase, item_id) into the table keyed by the partition's names, in registration order
 * (migratePartitionNumbers then makes it the current table). An item registered without a
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
  db.exec(ITEMS_BY_PARTITION_NAMES);
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

/**
 * Rewrites, once, the items table keyed by the partition's names into the current one, in
 * registration order: each partition gets its number, each item keeps its id, state, flags and
 * order, and names the part that settled it by that part's rowid (none when the parts table does
 * not hold its key: the state is what counts; the part only says which one set it). A ledger of
 * millions of items takes a while, once, in the one transaction that opens it.
 */
function migratePartitionNumbers(db: Database.Database): void {
  db.exec('ALTER TABLE items RENAME TO items_by_partition_names');
  db.exec(ITEMS_TABLE);
  db.exec(`INSERT OR IGNORE INTO item_partitions (campaign, phase, model, language)
    SELECT campaign, phase, model, language FROM items_by_partition_names GROUP BY campaign, phase, model, language ORDER BY min(rowid)`);
  db.exec(`INSERT INTO items (pid, item_id, state, part, permanent, retired)
    SELECT p.pid, i.item_id, i.state, pt.rowid, i.permanent, i.retired
    FROM items_by_partition_names AS i
    JOIN item_partitions AS p ON p.campaign = i.campaign AND p.phase = i.phase AND p.model = i.model AND p.language = i.language
    LEFT JOIN parts AS pt ON pt.campaign = i.campaign AND pt.phase = i.phase AND pt.part_key = i.part_key
    ORDER BY i.rowid`);
  db.exec('DROP TABLE items_by_partition_names');
}

/** The columns of a table of the ledger. */
function columnsOf(db: Database.Database, table: string): string[] {
  return db.prepare('SELECT name FROM pragma_table_info(?)').pluck().all(table) as string[];
}

/** Opens (creating or migrating) the ledger file; a file that cannot be opened is named, not a stack trace. */
export function openLedgerDb(file: string, busyTimeoutMs: number): Database.Database {
  // ---- bad input: a ledger that cannot be opened is named, not a stack trace.
  let opened: Database.Database | undefined;
  try {
    opened = new Database(file, { timeout: busyTimeoutMs });
    const db = opened;
    db.pragma('journal_mode = WAL');
    db.pragma('synchronous = NORMAL');
    // Registering a million random item ids touches index pages all over; keep them in memory.
    db.pragma('cache_size = -65536');
    db.transaction(() => {
      db.exec(SCHEMA);
      const itemsBeforeNumbers = !columnsOf(db, 'items').includes('pid');
      for (const c of ADDED_COLUMNS) {
        if (c.table === 'items' && !itemsBeforeNumbers) continue;
        if (!columnsOf(db, c.table).includes(c.column)) db.exec(c.ddl);
      }
      if (itemsBeforeNumbers) {
        migrateItems(db);
        migratePartitionNumbers(db);
      }
    }).immediate();
  } catch (err) {
    opened?.close();
    throw ledgerOpenError(file, err);
  }
  // ---- end bad input
  return opened;
}
