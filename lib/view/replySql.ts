/**
 * The SQL of the viewer's reply queries, apart from where the rows come from: `sources` renders
 * the three tables for a set of phases (`read_parquet` of the local parts; an Athena source would
 * render its tables), and every filter becomes a WHERE clause on the replies. Values go in as SQL
 * literals, checked or escaped here; column names are checked against a strict pattern.
 */
import { SondageError } from '../errors.js';
import { sqlIdent, sqlString } from '../store/DuckDb.js';
import type { ReplyQuery } from './types.js';

/** The three tables of a campaign, as SQL table expressions, for a set of phases. */
export interface ReplySources {
  readonly replies: string;
  readonly prompts: string;
  /** Readings of every phase: a phase's readings may sit in another phase's folder (FAR-6's judge under generate). */
  readonly readings: string;
}

const COLUMN = /^[A-Za-z_][A-Za-z0-9_]*$/;

/** A prompt column name from a request, refused unless it is a plain identifier. */
export function factorColumn(name: string): string {
  if (!COLUMN.test(name)) throw new SondageError(`${JSON.stringify(name)} is not a column name`);
  return sqlIdent(name);
}

/** `'…'` for ILIKE, with its wildcards taken literally. */
function likeLiteral(text: string): string {
  return sqlString(`%${text.replace(/[\\%_]/g, (c) => `\\${c}`)}%`);
}

/** Conditions on the partition columns, for the replies and for the subqueries (so they prune files too). */
function partitionWhere(q: ReplyQuery): string[] {
  const out: string[] = [];
  if (q.model) out.push(`model = ${sqlString(q.model)}`);
  if (q.language) out.push(`language = ${sqlString(q.language)}`);
  return out;
}

/** The WHERE clause of a reply query over `sources` (without the word WHERE; `true` when empty). */
export function replyWhere(q: ReplyQuery, sources: ReplySources): string {
  const parts = partitionWhere(q);
  const inPartition = parts.length > 0 ? ` AND ${parts.join(' AND ')}` : '';
  if (q.search) parts.push(`text ILIKE ${likeLiteral(q.search)} ESCAPE '\\'`);
  const factors = Object.entries(q.factors ?? {});
  if (factors.length > 0) {
    const cond = factors.map(([k, v]) => `CAST(${factorColumn(k)} AS VARCHAR) = ${sqlString(v)}`).join(' AND ');
    parts.push(`item_id IN (SELECT item_id FROM ${sources.prompts} WHERE ${cond}${inPartition})`);
  }
  if (q.reader || q.label) {
    const cond = [q.reader ? `reader = ${sqlString(q.reader)}` : '', q.label ? `label = ${sqlString(q.label)}` : ''].filter(Boolean).join(' AND ');
    // A reading is of the reply it reads (item_id) and, for a judge's reading, of the judge's own reply too.
    parts.push(
      `(item_id IN (SELECT item_id FROM ${sources.readings} WHERE ${cond}${inPartition}) OR item_id IN (SELECT judge_item_id FROM ${sources.readings} WHERE judge_item_id IS NOT NULL AND ${cond}${inPartition}))`,
    );
  }
  if (q.disagree) {
    parts.push(
      `item_id IN (SELECT item_id FROM ${sources.readings} WHERE label <> 'invalid'${inPartition} GROUP BY item_id, coalesce(facet, '') HAVING count(DISTINCT label) > 1)`,
    );
  }
  return parts.length > 0 ? parts.join(' AND ') : 'true';
}

/** A page of replies: one row more than asked, to know whether a next page exists. Insertion order (file order) keeps pages stable. */
export function replyPageSql(q: ReplyQuery, sources: ReplySources, offset: number, limit: number): string {
  return `SELECT item_id, phase, model, language, attempt, status, cost_usd, left(text, 240) AS text, error_class
          FROM ${sources.replies} WHERE ${replyWhere(q, sources)} LIMIT ${limit + 1} OFFSET ${offset}`;
}

export function replyCountSql(q: ReplyQuery, sources: ReplySources): string {
  return `SELECT count(*) AS n FROM ${sources.replies} WHERE ${replyWhere(q, sources)}`;
}

/** The readings of a few replies (by their item ids), restricted to their partitions. */
export function pageReadingsSql(readings: string, ids: readonly string[], models: readonly string[], languages: readonly string[]): string {
  const list = (xs: readonly string[]): string => xs.map(sqlString).join(', ');
  return `SELECT item_id, judge_item_id, reader, facet, label FROM ${readings}
          WHERE (item_id IN (${list(ids)}) OR judge_item_id IN (${list(ids)}))
            AND model IN (${list(models)}) AND language IN (${list(languages)})`;
}
