/**
 * The outputs of earlier phases that a dependent phase is built from, for one partition (model
 * under test × language): each item's chosen reply (chosen_replies.sql, the rule the analysis
 * uses: the lowest successful attempt, ties by time) and its readings (one_reading.sql: one per
 * reader and facet), read from the partition's Parquet parts under `root` (the data folder, or a
 * worker's copy of the parts). One fetch for the local run and the AWS worker.
 */
import { join } from 'node:path';
import type { ReadingDraft, ReplyView, Upstream } from '../battery/types.js';
import type { LanguageCode } from '../core/types.js';
import type { TokenLogprob } from '../providers/types.js';
import { CORE_SQL } from '../query/sql.js';
import type { DuckDb } from '../store/DuckDb.js';
import { readParquetSql, sqlString } from '../store/DuckDb.js';
import { partitionPrefix } from '../store/layout.js';
import { READING_COLUMNS, REPLY_COLUMNS } from '../store/schemas.js';
import { checkStoredParts } from '../store/storedParts.js';
import type { UpstreamNeeds } from './upstreamNeeds.js';
import type { UpstreamFilter } from './upstreamSlice.js';

export { NO_UPSTREAM, upstreamNeeds } from './upstreamNeeds.js';
export type { UpstreamNeeds } from './upstreamNeeds.js';

function readerFilter(readers: readonly string[] | undefined): string {
  if (!readers) return '';
  const terms = readers.map((r) => (r.endsWith('*') ? `reader LIKE ${sqlString(`${r.slice(0, -1).replaceAll('%', '\\%')}%`)}` : `reader = ${sqlString(r)}`));
  return `WHERE ${terms.join(' OR ')}`;
}

/** The rows of `source` the filter keeps when `phase` is its phase (all otherwise), as a subquery. */
function onlySql(source: string, phase: string, only: UpstreamFilter | undefined): string {
  if (only === undefined || only.phase !== phase) return source;
  // An empty slice keeps nothing; IN () is not SQL.
  const ids = only.ids.size === 0 ? 'NULL' : [...only.ids].map(sqlString).join(', ');
  return `(SELECT * FROM ${source} src WHERE item_id IN (${ids}))`;
}

/**
 * Reads the upstream of one partition; with `only`, of the filter's phase only the rows of its
 * items (lib/run/upstreamSlice.ts). A phase with no stored part yet gives no reply and no reading
 * (its items then yield nothing downstream).
 */
export async function loadUpstream(
  db: DuckDb,
  root: string,
  campaign: string,
  needs: UpstreamNeeds,
  model: string,
  language: LanguageCode,
  only?: UpstreamFilter,
): Promise<Upstream> {
  const glob = (phase: string, table: 'replies' | 'readings') => `${join(root, partitionPrefix(campaign, phase, table, model, language))}*.parquet`;
  const replies = new Map<string, Map<string, ReplyView>>();
  for (const phase of needs.replies) {
    const byItem = new Map<string, ReplyView>();
    replies.set(phase, byItem);
    if (!(await db.hasFiles(glob(phase, 'replies')))) continue;
    await checkStoredParts(db, glob(phase, 'replies'), 'replies', REPLY_COLUMNS);
    const source = onlySql(readParquetSql(glob(phase, 'replies')), phase, only);
    const chosen = CORE_SQL.render('chosen_replies', { replies: source });
    const rows = await db.all<{ item_id: string; text: string | null; attempt: number; logprobs_json: string | null; finish_reason: string | null }>(
      `SELECT r.item_id, r.text, r.attempt, r.logprobs_json, r.finish_reason
       FROM (${chosen}) c
       JOIN ${source} r ON r.item_id = c.item_id AND r.attempt = c.attempt AND r.created_at = c.created_at
       WHERE r.status = 'ok'`,
    );
    for (const r of rows) {
      byItem.set(r.item_id, {
        text: r.text,
        attempt: Number(r.attempt),
        logprobs: r.logprobs_json ? (JSON.parse(r.logprobs_json) as Record<string, TokenLogprob>) : null,
        finish_reason: r.finish_reason,
      });
    }
  }
  const readings = new Map<string, Map<string, ReadingDraft[]>>();
  for (const [folder, readers] of needs.readings) {
    const byItem = new Map<string, ReadingDraft[]>();
    readings.set(folder, byItem);
    if (!(await db.hasFiles(glob(folder, 'readings')))) continue;
    // Readings stored before facet and value existed read them as NULL.
    const have = await checkStoredParts(db, glob(folder, 'readings'), 'readings', READING_COLUMNS);
    const source = onlySql(readParquetSql(glob(folder, 'readings')), folder, only);
    const readingsSource = have.has('facet') ? source : `(SELECT *, CAST(NULL AS VARCHAR) AS facet, CAST(NULL AS DOUBLE) AS value FROM ${source} old)`;
    const one = CORE_SQL.render('one_reading', { readings: readingsSource });
    const rows = await db.all<{ item_id: string; reader: string; facet: string | null; label: string; value: number | null; raw: string | null }>(
      `SELECT item_id, reader, facet, label, value, raw FROM (${one}) o ${readerFilter(readers)}`,
    );
    for (const r of rows) {
      const list = byItem.get(r.item_id) ?? [];
      list.push({ reader: r.reader, facet: r.facet, label: r.label, value: r.value === null ? null : Number(r.value), raw: r.raw });
      byItem.set(r.item_id, list);
    }
  }
  return {
    reply: (phase, itemId) => replies.get(phase)?.get(itemId),
    readings: (phase, itemId) => readings.get(phase)?.get(itemId) ?? [],
  };
}
