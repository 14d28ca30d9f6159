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
  parts: 'committed parts',
  batches: 'provider batches',
  batch_intents: 'provider batch intents',
};

/** Tables with a `campaign` column, in the order of the file. */
type LedgerPlan = readonly string[];

function quoteIdent(name: string): string {
  return `"${name.replaceAll('"', '""')}"`;
}

/**
 * One campaign's rows in the embedded ledger, `<dataDir>/ledger.sqlite` (EmbeddedLedger), as a
 * PurgeSource. Every table of that file keys its rows by a `campaign` column; the tables are read
 * from the file itself, so one added later is purged too (test/store/purge.test.ts checks that no
 * table lacks the column). The delete is one SQLite transaction: all of the campaign's rows or none.
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

  /** Every table of the file, and whether it has a `campaign` column. */
  tables(): { name: string; byCampaign: boolean }[] {
    if (!existsSync(this.file)) return [];
    return this.open((db) => {
      const names = db.prepare("SELECT name FROM sqlite_master WHERE type = 'table' AND name NOT LIKE 'sqlite_%' ORDER BY rowid").pluck().all() as string[];
      return names.map((name) => ({
        name,
        byCampaign: (db.prepare('SELECT name FROM pragma_table_info(?)').pluck().all(name) as string[]).includes('campaign'),
      }));
    });
  }

  async survey(campaign: string): Promise<PurgeSurvey<LedgerPlan>> {
    const where = this.file;
    const tables = this.tables().filter((t) => t.byCampaign).map((t) => t.name);
    if (tables.length === 0) return { where, counts: [], plan: [] };
    const counts = this.open((db) =>
      tables.map((t) => ({ what: LABELS[t] ?? t, count: Number(db.prepare(`SELECT count(*) FROM ${quoteIdent(t)} WHERE campaign = ?`).pluck().get(campaign)) })),
    );
    return { where, counts, plan: tables };
  }

  async purge(campaign: string, survey: PurgeSurvey<LedgerPlan>, onProgress?: (deleted: number) => void): Promise<readonly PurgeCount[]> {
    const counts = this.open((db) =>
      db
        .transaction(() => survey.plan.map((t) => ({ what: LABELS[t] ?? t, count: db.prepare(`DELETE FROM ${quoteIdent(t)} WHERE campaign = ?`).run(campaign).changes })))
        .immediate(),
    );
    onProgress?.(counts.reduce((n, c) => n + c.count, 0));
    return counts;
  }
}
