/**
 * The viewer's data from a local data folder: DuckDB over the campaign's Parquet parts (paged, so a
 * million replies open as fast as a thousand), result tables from `results/`, progress from the
 * reader `sondage status` uses. Reads nothing outside `<data folder>/campaigns/<campaign>/` but
 * the ledger (through that reader); every name in a request is checked against what is there.
 */
import { existsSync } from 'node:fs';
import { readdir, readFile, stat } from 'node:fs/promises';
import path from 'node:path';
import { batteryNamed } from '../batteries/index.js';
import type { ReplySelection } from '../battery/types.js';
import { SondageError } from '../errors.js';
import { campaignsIn } from '../store/dataDir.js';
import { DuckDb, readParquetSql, sqlString } from '../store/DuckDb.js';
import { isSafeSegment, runLockKey } from '../store/layout.js';
import { isProcessAlive } from '../store/lock.js';
import { ViewNotFoundError } from './errors.js';
import { factorColumn, pageReadingsSql, replyCountSql, replyPageSql } from './replySql.js';
import type { ReplySources } from './replySql.js';
import type {
  CampaignOverview,
  CampaignSummary,
  FilterValues,
  ProgressReader,
  Reading,
  ReplyCounts,
  ReplyDetail,
  ReplyListRow,
  ReplyPage,
  ReplyQuery,
  ResultTable,
  ViewSource,
} from './types.js';

/** Rows of a result table sent to the page at most (result tables are summaries; the largest demo table has a few thousand). */
const TABLE_ROWS = 5000;
export const PAGE_SIZE = 50;
const MAX_PAGE = 500;
const ITEM_ID = /^[A-Za-z0-9_-]{1,200}$/;
/** Folders beside the phases in a campaign folder. */
const NOT_PHASES = new Set(['results', 'input']);

/** One `model=…/language=…` folder. */
interface Partition {
  readonly model: string;
  readonly language: string;
}

/** Where a page starts: a phase, a partition and a row within it. */
interface Cursor {
  readonly phase: string;
  readonly model: string;
  readonly language: string;
  readonly offset: number;
}

function formatCursor(c: Cursor): string {
  return [c.phase, c.model, c.language, String(c.offset)].join('~');
}

function parseCursor(text: string): Cursor {
  const [phase, model, language, offset] = text.split('~');
  const n = Number(offset);
  if (!phase || model === undefined || language === undefined || !Number.isInteger(n) || n < 0) throw new SondageError(`cursor ${JSON.stringify(text)} is not one this viewer gave`);
  return { phase, model, language, offset: n };
}

interface StoredPlan {
  readonly battery?: string;
  readonly budgetUsd?: number;
  readonly phases?: readonly string[];
}

export interface LocalViewSourceOptions {
  /** `sondage status`'s reader of a campaign's progress; without it the overview shows stored replies only. */
  readonly progress?: ProgressReader;
  /** DuckDB threads (default: DuckDB's). */
  readonly threads?: number;
  /** The clock, for throughput (tests). */
  readonly now?: () => Date;
  /** Told how many reply part files each overview had to read (tests and the bench). */
  readonly onPartsCounted?: (parts: number) => void;
}

/** What the overview counts of one reply part file (a part lies in one partition of one phase). */
interface PartCounts {
  /** Size and modification time: a part that changes is counted again. */
  readonly stamp: string;
  readonly rows: readonly { phase: string; model: string; language: string; replies: number; ok: number; cost: number | null; first: string | null; last: string | null }[];
}

/**
 * @example
 * const source = await LocalViewSource.open('data', { progress });
 * const page = await source.replies('demo', { phases: ['generate'], model: 'alpha', limit: 50 });
 */
export class LocalViewSource implements ViewSource {
  readonly description: string;

  /**
   * The overview's counts per reply part file, kept while the file is unchanged: a running
   * campaign's overview, refreshed every few seconds, reads only the parts written since, not
   * its million replies again.
   */
  private readonly partCounts = new Map<string, PartCounts>();

  private constructor(
    private readonly root: string,
    private readonly db: DuckDb,
    private readonly options: LocalViewSourceOptions,
  ) {
    this.description = 'local data folder';
  }

  static async open(dataDir: string, options: LocalViewSourceOptions = {}): Promise<LocalViewSource> {
    return new LocalViewSource(path.resolve(dataDir), await DuckDb.open(options.threads === undefined ? {} : { threads: options.threads }), options);
  }

  async close(): Promise<void> {
    this.db.close();
  }

  // ---- campaigns -------------------------------------------------------------------------------

  async campaigns(): Promise<readonly CampaignSummary[]> {
    const names = await campaignsIn(this.root);
    return Promise.all(names.filter(isSafeSegment).map((n) => this.summary(n)));
  }

  /** The campaign's folder, once its name is known to be one of the data folder's campaigns. */
  private async campaignDir(name: string): Promise<string> {
    if (!isSafeSegment(name) || !(await campaignsIn(this.root)).includes(name)) throw new ViewNotFoundError(`no campaign ${JSON.stringify(name)} in the data folder`);
    return path.join(this.root, 'campaigns', name);
  }

  private async summary(name: string): Promise<CampaignSummary> {
    const dir = await this.campaignDir(name);
    const plan = await readFile(path.join(dir, 'plan.json'), 'utf8').then(
      (t) => JSON.parse(t) as StoredPlan,
      () => ({}) as StoredPlan,
    );
    const folders = (await readdir(dir, { withFileTypes: true })).filter((e) => e.isDirectory() && !e.name.startsWith('_') && !NOT_PHASES.has(e.name)).map((e) => e.name);
    const phases = plan.phases ? [...plan.phases, ...folders.filter((f) => !plan.phases!.includes(f)).sort()] : folders.sort();
    return {
      name,
      ...(plan.battery ? { battery: plan.battery } : {}),
      ...(typeof plan.budgetUsd === 'number' ? { budgetUsd: plan.budgetUsd } : {}),
      phases: phases.filter(isSafeSegment),
      tables: await this.tableNames(dir),
      running: await this.running(name),
    };
  }

  private async tableNames(dir: string): Promise<string[]> {
    const entries = await readdir(path.join(dir, 'results'), { withFileTypes: true }).catch(() => []);
    return entries.filter((e) => e.isFile() && e.name.endsWith('.csv') && isSafeSegment(e.name)).map((e) => e.name).sort();
  }

  /** Whether a live process on this machine holds the campaign's run lock. */
  private async running(name: string): Promise<boolean> {
    const text = await readFile(path.join(this.root, runLockKey(name)), 'utf8').catch(() => undefined);
    if (text === undefined) return false;
    try {
      const pid = (JSON.parse(text) as { pid?: unknown }).pid;
      return typeof pid === 'number' && isProcessAlive(pid);
    } catch {
      return false;
    }
  }

  async overview(campaign: string): Promise<CampaignOverview> {
    const summary = await this.summary(campaign);
    const [counts, progress] = await Promise.all([this.replyCounts(campaign, summary.phases), this.options.progress?.(campaign)]);
    const failuresByKind: Record<string, number> = { ...progress?.failuresByKind };
    if (!progress?.failuresByKind) for (const f of progress?.failures ?? []) failuresByKind[f.error] = (failuresByKind[f.error] ?? 0) + 1;
    return { campaign: summary, counts, ...(progress ? { progress } : {}), failuresByKind };
  }

  /** Every reply part file of the phases, with its size and modification time. */
  private async replyParts(campaign: string, phases: readonly string[]): Promise<Map<string, string>> {
    const parts = new Map<string, string>();
    for (const phase of phases) {
      const dir = path.join(this.root, 'campaigns', campaign, phase, 'replies');
      const entries = await readdir(dir, { recursive: true, withFileTypes: true }).catch(() => []);
      for (const e of entries) {
        if (!e.isFile() || !e.name.endsWith('.parquet')) continue;
        const file = path.join(e.parentPath, e.name);
        const st = await stat(file).catch(() => undefined);
        if (st) parts.set(file, `${st.size}:${st.mtimeMs}`);
      }
    }
    return parts;
  }

  private async replyCounts(campaign: string, phases: readonly string[]): Promise<ReplyCounts> {
    const now = (this.options.now ?? (() => new Date()))();
    const since = new Date(now.getTime() - 5 * 60_000).toISOString();
    const parts = await this.replyParts(campaign, phases);
    const prefix = path.join(this.root, 'campaigns', campaign) + path.sep;
    for (const file of this.partCounts.keys()) if (file.startsWith(prefix) && !parts.has(file)) this.partCounts.delete(file);
    const stale = [...parts].filter(([file, stamp]) => this.partCounts.get(file)?.stamp !== stamp).map(([file]) => file);
    this.options.onPartsCounted?.(stale.length);
    const source = (files: readonly string[]): string =>
      `read_parquet([${files.map(sqlString).join(', ')}], hive_partitioning = true, hive_types_autocast = false, union_by_name = true, filename = true)`;
    if (stale.length > 0) {
      const counted = await this.db.all<PartCounts['rows'][number] & { filename: string }>(
        `SELECT filename, phase, model, language, count(*) AS replies, count(*) FILTER (WHERE status = 'ok') AS ok, sum(cost_usd) AS cost,
                min(created_at) AS first, max(created_at) AS last
         FROM ${source(stale)} GROUP BY ALL`,
      );
      for (const file of stale) this.partCounts.set(file, { stamp: parts.get(file)!, rows: counted.filter((r) => r.filename === file).map(({ filename: _f, ...r }) => r) });
    }
    // Replies of the last five minutes: only parts whose newest reply is that recent are read for them.
    const fresh = [...parts.keys()].filter((file) => this.partCounts.get(file)!.rows.some((r) => r.last !== null && r.last >= since));
    const recentOf = new Map<string, number>();
    if (fresh.length > 0) {
      for (const r of await this.db.all<{ phase: string; model: string; language: string; n: number }>(
        `SELECT phase, model, language, count(*) AS n FROM ${source(fresh)} WHERE created_at >= ${sqlString(since)} GROUP BY ALL`,
      )) recentOf.set(`${r.phase}\u0000${r.model}\u0000${r.language}`, r.n);
    }
    // One row per phase, model and language, summed over its parts.
    const merged = new Map<string, { phase: string; model: string; language: string; replies: number; ok: number; cost: number | null; recent: number; first: string | null; last: string | null }>();
    for (const file of parts.keys()) {
      for (const r of this.partCounts.get(file)!.rows) {
        const key = `${r.phase}\u0000${r.model}\u0000${r.language}`;
        const m = merged.get(key) ?? { phase: r.phase, model: r.model, language: r.language, replies: 0, ok: 0, cost: null, recent: recentOf.get(key) ?? 0, first: null, last: null };
        m.replies += r.replies;
        m.ok += r.ok;
        if (r.cost !== null) m.cost = (m.cost ?? 0) + r.cost;
        if (r.first !== null && (m.first === null || r.first < m.first)) m.first = r.first;
        if (r.last !== null && (m.last === null || r.last > m.last)) m.last = r.last;
        merged.set(key, m);
      }
    }
    const rows = [...merged.values()].sort((a, b) => (a.phase < b.phase ? -1 : a.phase > b.phase ? 1 : a.model < b.model ? -1 : a.model > b.model ? 1 : a.language < b.language ? -1 : a.language > b.language ? 1 : 0));
    const total = rows.reduce((s, r) => s + r.replies, 0);
    const firsts = rows.map((r) => r.first).filter((x): x is string => x !== null).sort();
    const lasts = rows.map((r) => r.last).filter((x): x is string => x !== null).sort();
    const firstAt = firsts[0];
    const lastAt = lasts.at(-1);
    const minutes = firstAt && lastAt ? (Date.parse(lastAt) - Date.parse(firstAt)) / 60_000 : 0;
    // Phases in the campaign's order, then partitions.
    const order = new Map(phases.map((p, i) => [p, i]));
    rows.sort((a, b) => (order.get(a.phase) ?? 99) - (order.get(b.phase) ?? 99));
    return {
      rows: rows.map((r) => ({ phase: r.phase, model: r.model, language: r.language, replies: r.replies, ok: r.ok, costUsd: r.cost ?? 0 })),
      recentPerMinute: rows.reduce((s, r) => s + r.recent, 0) / 5,
      overallPerMinute: minutes > 0 ? total / minutes : 0,
      ...(firstAt ? { firstAt } : {}),
      ...(lastAt ? { lastAt } : {}),
    };
  }

  // ---- result tables -----------------------------------------------------------------------------

  async table(campaign: string, name: string): Promise<ResultTable> {
    const dir = await this.campaignDir(campaign);
    // Only a CSV the results folder lists: a name is never joined to a path unchecked.
    if (!(await this.tableNames(dir)).includes(name)) throw new ViewNotFoundError(`no result table ${JSON.stringify(name)} in campaign ${campaign}`);
    const file = path.join(dir, 'results', name);
    const text = await readFile(file, 'utf8');
    if (text.trim() === '') return { name, columns: [], rows: [], truncated: 0 };
    const rel = `read_csv(${sqlString(file)}, header = true, all_varchar = true, auto_detect = true)`;
    const columns = (await this.db.all<{ column_name: string }>(`DESCRIBE SELECT * FROM ${rel}`)).map((c) => c.column_name);
    const [{ n } = { n: 0 }] = await this.db.all<{ n: number }>(`SELECT count(*) AS n FROM ${rel}`);
    const rows = await this.db.all<Record<string, string | null>>(`SELECT * FROM ${rel} LIMIT ${TABLE_ROWS}`);
    return { name, columns, rows: rows.map((r) => columns.map((c) => r[c] ?? '')), truncated: Math.max(0, n - TABLE_ROWS) };
  }

  async cellSelection(campaign: string, tableName: string, row: number, column: string): Promise<ReplySelection | undefined> {
    const summary = await this.summary(campaign);
    const table = await this.table(campaign, tableName);
    const values = table.rows[row];
    if (!values || !table.columns.includes(column)) throw new ViewNotFoundError(`no cell ${row}/${column} in ${tableName}`);
    const record = Object.fromEntries(table.columns.map((c, i) => [c, values[i] ?? '']));
    const view = summary.battery ? batteryNamed(summary.battery)?.view : undefined;
    if (view) return view.cellReplies(tableName, record, column);
    // A battery that declares nothing: the row's model and language, in the first phase.
    const model = record['model'] || undefined;
    const language = record['language'] || undefined;
    if ((!model && !language) || summary.phases.length === 0) return undefined;
    return { phases: [summary.phases[0]!], ...(model ? { model } : {}), ...(language ? { language } : {}) };
  }

  // ---- replies -----------------------------------------------------------------------------------

  /** Glob of one table over the given phases that have it; undefined when none has. */
  private tableExpr(campaign: string, phases: readonly string[], table: 'replies' | 'prompts' | 'readings', parts?: readonly Partition[]): string | undefined {
    const dir = path.join(this.root, 'campaigns', campaign);
    const globs = phases
      .flatMap((p) => (parts ? parts.map((x) => `${p}/${table}/model=${x.model}/language=${x.language}`) : [`${p}/${table}`]))
      .filter((folder) => existsSync(path.join(dir, folder)))
      .map((folder) => `${dir}/${folder}/${parts ? '' : '**/'}*.parquet`);
    if (globs.length === 0) return undefined;
    return readParquetSql(globs[0]!).replace(sqlString(globs[0]!), `[${globs.map(sqlString).join(', ')}]`);
  }

  /** The three tables for the phases asked (the readings of every phase), of some partitions only where given. */
  private sources(campaign: string, phases: readonly string[], all: readonly string[] = phases, parts?: readonly Partition[]): ReplySources | undefined {
    const replies = this.tableExpr(campaign, phases, 'replies', parts);
    if (!replies) return undefined;
    const empty = "(SELECT NULL::VARCHAR AS item_id, NULL::VARCHAR AS judge_item_id, NULL::VARCHAR AS reader, NULL::VARCHAR AS facet, NULL::VARCHAR AS label, NULL::VARCHAR AS model, NULL::VARCHAR AS language WHERE false)";
    return {
      replies,
      prompts: this.tableExpr(campaign, phases, 'prompts', parts) ?? "(SELECT NULL::VARCHAR AS item_id, NULL::VARCHAR AS model, NULL::VARCHAR AS language WHERE false)",
      readings: this.tableExpr(campaign, all, 'readings', parts) ?? empty,
    };
  }

  /** The phases a query asks for, each one the campaign has. */
  private async queryPhases(campaign: string, q: ReplyQuery): Promise<{ phases: string[]; all: readonly string[] }> {
    // Checked before anything is read, whether or not the phases hold replies yet.
    for (const column of Object.keys(q.factors ?? {})) factorColumn(column);
    const all = (await this.summary(campaign)).phases;
    const asked = q.phases && q.phases.length > 0 ? q.phases : all;
    const unknown = asked.filter((p) => !all.includes(p));
    if (unknown.length > 0) throw new ViewNotFoundError(`campaign ${campaign} has no phase ${unknown.join(', ')}`);
    return { phases: [...asked], all };
  }

  /** The partitions (`model=…/language=…` folders) of a phase's replies, in the order DuckDB reads them (by path). */
  private async partitionsOf(campaign: string, phase: string, q: ReplyQuery): Promise<Partition[]> {
    const dir = path.join(this.root, 'campaigns', campaign, phase, 'replies');
    const out: Partition[] = [];
    for (const m of (await readdir(dir).catch(() => [] as string[])).sort()) {
      if (!m.startsWith('model=') || (q.model && m !== `model=${q.model}`)) continue;
      for (const l of (await readdir(path.join(dir, m)).catch(() => [] as string[])).sort()) {
        if (l.startsWith('language=') && (!q.language || l === `language=${q.language}`)) out.push({ model: m.slice(6), language: l.slice(9) });
      }
    }
    return out;
  }

  async replies(campaign: string, q: ReplyQuery): Promise<ReplyPage> {
    const started = performance.now();
    const offset = Math.max(0, Math.floor(q.offset ?? 0));
    const limit = Math.min(MAX_PAGE, Math.max(1, Math.floor(q.limit ?? PAGE_SIZE)));
    const { phases, all } = await this.queryPhases(campaign, q);
    const sources = this.sources(campaign, phases, all);
    if (!sources) return { rows: [], offset, limit, more: false, ms: performance.now() - started };
    let rows: Omit<ReplyListRow, 'readings'>[];
    let more: boolean;
    let next: string | undefined;
    const cursor = q.cursor === undefined ? undefined : parseCursor(q.cursor);
    if (cursor || (offset === 0 && !(q.model && q.language))) {
      // Partition after partition, stopping once the page is full: a filter that must group every
      // reading (disagreement) or scan every text costs one partition's worth per page, not the campaign's.
      ({ rows, next } = await this.pageByPartition(campaign, q, phases, all, cursor ?? { phase: phases[0]!, model: '', language: '', offset: 0 }, limit));
      more = next !== undefined;
    } else {
      const found = await this.db.all<Omit<ReplyListRow, 'readings'>>(replyPageSql(q, sources, offset, limit));
      rows = found.slice(0, limit);
      more = found.length > limit;
    }
    const readings = new Map<string, string[]>();
    if (rows.length > 0) {
      const uniq = (xs: string[]): string[] => [...new Set(xs)];
      const read = await this.db.all<{ item_id: string; judge_item_id: string | null; reader: string; facet: string | null; label: string }>(
        pageReadingsSql(sources.readings, uniq(rows.map((r) => r.item_id)), uniq(rows.map((r) => r.model)), uniq(rows.map((r) => r.language))),
      );
      for (const r of read) {
        const text = `${r.reader}${r.facet ? `/${r.facet}` : ''}=${r.label}`;
        for (const id of [r.item_id, r.judge_item_id]) if (id) readings.set(id, [...(readings.get(id) ?? []), text]);
      }
    }
    return {
      rows: rows.map((r) => ({ ...r, readings: (readings.get(r.item_id) ?? []).sort().join(' ') })),
      offset,
      limit,
      more,
      ...(next !== undefined ? { next } : {}),
      ms: performance.now() - started,
    };
  }

  /**
   * A page read phase by phase and partition by partition from `from` on, in the order of the
   * whole query (phases as asked, partitions by path), so that a cursor page and an offset page
   * agree. Returns the rows and the cursor of the first row past the page.
   */
  private async pageByPartition(
    campaign: string,
    q: ReplyQuery,
    phases: readonly string[],
    all: readonly string[],
    from: Cursor,
    limit: number,
  ): Promise<{ rows: Omit<ReplyListRow, 'readings'>[]; next?: string }> {
    const rows: Omit<ReplyListRow, 'readings'>[] = [];
    const startPhase = Math.max(0, phases.indexOf(from.phase));
    for (let ph = startPhase; ph < phases.length; ph++) {
      const phase = phases[ph]!;
      let parts = await this.partitionsOf(campaign, phase, q);
      // Before the cursor's partition (in path order): already shown.
      if (ph === startPhase && from.model !== '') parts = parts.filter((x) => x.model > from.model || (x.model === from.model && x.language >= from.language));
      // The cursor's own partition from its row, then groups of 1, 2, 4, … partitions: a page that
      // fills at once reads one partition; a filter that matches little costs a few queries, not one per partition.
      let i = 0;
      for (let size = 1; i < parts.length; size *= 2) {
        const group = parts.slice(i, i + size);
        const within = ph === startPhase && i === 0 && group[0]!.model === from.model && group[0]!.language === from.language ? from.offset : 0;
        const take = within > 0 ? group.slice(0, 1) : group;
        i += take.length;
        const sources = this.sources(campaign, [phase], all, take);
        if (!sources) continue;
        const need = limit + 1 - rows.length;
        const found = await this.db.all<Omit<ReplyListRow, 'readings'>>(replyPageSql({ ...q, phases: [phase] }, sources, within, need));
        for (let j = 0; j < found.length; j++) {
          if (rows.length < limit) {
            rows.push(found[j]!);
            continue;
          }
          // The first row past the page: its place within its partition.
          const r = found[j]!;
          const before = found.slice(0, j).filter((x) => x.model === r.model && x.language === r.language).length;
          const offset = (take[0]!.model === r.model && take[0]!.language === r.language ? within : 0) + before;
          return { rows, next: formatCursor({ phase, model: r.model, language: r.language, offset }) };
        }
      }
    }
    return { rows };
  }

  async count(campaign: string, q: ReplyQuery): Promise<number> {
    const { phases, all } = await this.queryPhases(campaign, q);
    const sources = this.sources(campaign, phases, all);
    if (!sources) return 0;
    const [row] = await this.db.all<{ n: number }>(replyCountSql(q, sources));
    return row?.n ?? 0;
  }

  async filters(campaign: string): Promise<FilterValues> {
    const { phases } = await this.summary(campaign);
    const dir = await this.campaignDir(campaign);
    const models = new Set<string>();
    const languages = new Set<string>();
    // The partitions are folders: listing them costs no query.
    for (const phase of phases) {
      for (const m of await readdir(path.join(dir, phase, 'replies')).catch(() => [] as string[])) {
        if (!m.startsWith('model=')) continue;
        models.add(m.slice(6));
        for (const l of await readdir(path.join(dir, phase, 'replies', m)).catch(() => [] as string[])) if (l.startsWith('language=')) languages.add(l.slice(9));
      }
    }
    const readings = this.tableExpr(campaign, phases, 'readings');
    const rl = readings ? await this.db.all<{ reader: string; label: string }>(`SELECT DISTINCT reader, label FROM ${readings} ORDER BY reader, label`) : [];
    return {
      phases,
      models: [...models].sort(),
      languages: [...languages].sort(),
      readers: [...new Set(rl.map((r) => r.reader))],
      labels: [...new Set(rl.map((r) => r.label))].sort(),
    };
  }

  /** One reply in full; `phase` '' looks in every phase. */
  async reply(campaign: string, phase: string, itemId: string, where: { readonly model?: string; readonly language?: string } = {}): Promise<ReplyDetail | undefined> {
    if (!ITEM_ID.test(itemId)) throw new ViewNotFoundError(`${JSON.stringify(itemId)} is not an item id`);
    // No phase: the item is looked for in every phase (a link from a judge's reading to its reply).
    const { phases, all } = await this.queryPhases(campaign, phase === '' ? {} : { phases: [phase] });
    const sources = this.sources(campaign, phases, all);
    if (!sources) return undefined;
    const part = [where.model ? `model = ${sqlString(where.model)}` : '', where.language ? `language = ${sqlString(where.language)}` : ''].filter(Boolean).map((c) => ` AND ${c}`).join('');
    const id = sqlString(itemId);
    const attempts = await this.db.all<ReplyDetail['attempts'][number] & { model: string; language: string; phase: string }>(
      `SELECT phase, attempt, status, text, finish_reason, cost_usd, input_tokens, output_tokens, latency_ms, logprobs_json, error_class, error_message,
              provider, simulated, created_at, model, language
       FROM ${sources.replies} WHERE item_id = ${id}${part} ORDER BY attempt`,
    );
    const first = attempts[0];
    if (!first) return undefined;
    const samePartition = ` AND model = ${sqlString(first.model)} AND language = ${sqlString(first.language)}`;
    const [prompt] = await this.db.all<Record<string, string | number | boolean | null>>(`SELECT * FROM ${sources.prompts} WHERE item_id = ${id}${samePartition} LIMIT 1`);
    const readings = await this.db.all<Reading>(
      `SELECT phase, reader, facet, label, value, raw, judge_item_id FROM ${sources.readings}
       WHERE (item_id = ${id} OR judge_item_id = ${id})${samePartition} ORDER BY phase, reader, facet`,
    );
    let messages: ReplyDetail['messages'] = [];
    try {
      messages = JSON.parse(String(prompt?.['messages_json'] ?? '[]')) as ReplyDetail['messages'];
    } catch {
      messages = [];
    }
    const { messages_json: _m, settings_json: _s, ...columns } = prompt ?? {};
    return {
      item_id: itemId,
      phase: first.phase,
      model: first.model,
      language: first.language,
      prompt: columns,
      messages,
      attempts: attempts.map(({ model: _mo, language: _la, phase: _ph, ...a }) => a),
      readings,
      source_item_id: typeof prompt?.['source_item_id'] === 'string' ? prompt['source_item_id'] : null,
    };
  }
}
