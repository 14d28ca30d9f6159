import Database from 'better-sqlite3';
import { existsSync } from 'node:fs';
import path from 'node:path';
import { SondageError } from '../errors.js';
import type { PurgeCount, PurgeSource, PurgeSurvey } from './purge.js';

/** What the embedded ledger's tables hold, for people (the SCHEMA of embedded/schema.ts); another table shows its own name. */
const LABELS: Readonly<Record<string, string>> = {
  campaigns: 'budget (cap and spend)',
  reservations: 'reservations',
  items: 'item states',
  item_partitions: 'item partitions',
  parts: 'committed parts',
  batches: 'provider batches',
  batch_intents: 'provider batch intents',
};

/** The tables that hold the campaign's rows, each with the condition that picks them (one parameter: the campaign). */
type LedgerPlan = readonly { readonly table: string; readonly where: string }[];

const OWN_COLUMN = 'campaign = ?';

/**
 * How a table's rows name their campaign: its own `campaign` column, or (items) the partition
 * number `pid` of item_partitions (embedded/schema.ts). Undefined: the table does not say.
 */
function campaignCondition(columns: readonly string[]): string | undefined {
  if (columns.includes('campaign')) return OWN_COLUMN;
  if (columns.includes('pid')) return 'pid IN (SELECT pid FROM item_partitions WHERE campaign = ?)';
  return undefined;
}

function quoteIdent(name: string): string {
  return `"${name.replaceAll('"', '""')}"`;
}

/**
 * One campaign's rows in the embedded ledger, `<dataDir>/ledger.sqlite` (EmbeddedLedger), as a
 * PurgeSource. Every table of that file keys its rows by a `campaign` column, or by the number of a
 * partition that item_partitions names with its campaign (items); the tables are read from the file
 * itself, so one added later is purged too (test/store/purge.test.ts checks that every table is
 * keyed one way or the other). The delete is one SQLite transaction: all of the campaign's rows or
 * none, the rows keyed by a partition's number before item_partitions.
 *
 * @example const rows = new EmbeddedLedgerRows('./data'); await rows.purge('demo', await rows.survey('demo'));
 */
export class EmbeddedLedgerRows implements PurgeSource<LedgerPlan> {
  readonly file: string;
  private readonly busyTimeoutMs: number;

  constructor(dataDir: string, options: { readonly busyTimeoutMs?: number } = {}) {
    this.file = path.join(path.resolve(dataDir), 'ledger.sqlite');
    this.busyTimeoutMs = options.busyTimeoutMs ?? 30_000;
  }

  private open<T>(fn: (db: Database.Database) => T): T {
    let db: Database.Database;
    try {
      db = new Database(this.file, { fileMustExist: true, timeout: this.busyTimeoutMs });
    } catch (err) {
      throw new SondageError(`cannot open the ledger ${this.file}: ${(err as Error).message}`, { cause: err });
    }
    try {
      return fn(db);
    } finally {
      db.close();
    }
  }

  /** Every table of the file, and the condition that picks a campaign's rows (undefined: none). */
  tables(): { name: string; byCampaign: string | undefined }[] {
    if (!existsSync(this.file)) return [];
    return this.open((db) => {
      const names = db.prepare("SELECT name FROM sqlite_master WHERE type = 'table' AND name NOT LIKE 'sqlite_%' ORDER BY rowid").pluck().all() as string[];
      return names.map((name) => ({ name, byCampaign: campaignCondition(db.prepare('SELECT name FROM pragma_table_info(?)').pluck().all(name) as string[]) }));
    });
  }

  async survey(campaign: string): Promise<PurgeSurvey<LedgerPlan>> {
    const where = this.file;
    const plan = this.tables().flatMap((t) => (t.byCampaign === undefined ? [] : [{ table: t.name, where: t.byCampaign }]));
    if (plan.length === 0) return { where, counts: [], plan: [] };
    const counts = this.open((db) =>
      plan.map((t) => ({ what: LABELS[t.table] ?? t.table, count: Number(db.prepare(`SELECT count(*) FROM ${quoteIdent(t.table)} WHERE ${t.where}`).pluck().get(campaign)) })),
    );
    return { where, counts, plan };
  }

  async purge(campaign: string, survey: PurgeSurvey<LedgerPlan>, onProgress?: (deleted: number) => void): Promise<readonly PurgeCount[]> {
    // Rows found through item_partitions go before it; the counts stay in the survey's order.
    const order = [...survey.plan.filter((t) => t.where !== OWN_COLUMN), ...survey.plan.filter((t) => t.where === OWN_COLUMN)];
    const deleted = this.open((db) =>
      db.transaction(() => new Map(order.map((t) => [t.table, db.prepare(`DELETE FROM ${quoteIdent(t.table)} WHERE ${t.where}`).run(campaign).changes]))).immediate(),
    );
    const counts = survey.plan.map((t) => ({ what: LABELS[t.table] ?? t.table, count: deleted.get(t.table) ?? 0 }));
    onProgress?.(counts.reduce((n, c) => n + c.count, 0));
    return counts;
  }
}
