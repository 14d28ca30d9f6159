/**
 * The upstream of one partition (lib/run/upstream.ts) read without DuckDB, for the Lambda worker,
 * which ships without it: the partition's Parquet parts under `root` are read in JavaScript
 * (lib/store/JsParquet.ts) and the two rules of the core SQL library applied to their rows, as
 * chosen_replies.sql and one_reading.sql state them:
 *
 * - the chosen reply of an item: its lowest `attempt` with status 'ok', ties by the earliest
 *   `created_at`;
 * - one reading per item, reader and facet (a NULL facet is one group): the first by
 *   `judge_item_id` (NULLs last, as DuckDB and Athena order them), then `label`.
 *
 * test/run/upstreamRows.test.ts holds this to loadUpstream over the same parts.
 */
import { readdir } from 'node:fs/promises';
import { join } from 'node:path';
import type { ReadingDraft, ReplyView, Upstream } from '../battery/types.js';
import type { LanguageCode } from '../core/types.js';
import type { TokenLogprob } from '../providers/types.js';
import { readParquetRows } from '../store/JsParquet.js';
import { partitionPrefix } from '../store/layout.js';
import type { UpstreamNeeds } from './upstreamNeeds.js';
import type { UpstreamFilter } from './upstreamSlice.js';

/**
 * The rows of every `*.parquet` file directly in `folder` (file names in order); none when there
 * is no folder. With `keep`, only the rows it accepts: a part is decoded, filtered and dropped
 * before the next, so memory holds the kept rows and one part.
 */
async function partRows(folder: string, keep?: (row: Record<string, unknown>) => boolean): Promise<Record<string, unknown>[]> {
  let names: string[];
  try {
    names = (await readdir(folder)).filter((n) => n.endsWith('.parquet')).sort();
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === 'ENOENT') return [];
    throw err;
  }
  const rows: Record<string, unknown>[] = [];
  for (const name of names) for (const row of await readParquetRows(join(folder, name))) if (!keep || keep(row)) rows.push(row);
  return rows;
}

/** Strings as SQL orders them (by code point; NULL last). */
function compareSql(a: unknown, b: unknown): number {
  if (a === b) return 0;
  if (a === null || a === undefined) return 1;
  if (b === null || b === undefined) return -1;
  return (a as string | number) < (b as string | number) ? -1 : 1;
}

/**
 * The readers filter of loadUpstream: a name, or a prefix ending in `*`, which loadUpstream turns
 * into SQL `LIKE 'prefix%'` — where `_` in the prefix matches any one character, as here.
 */
function readerTest(readers: readonly string[] | undefined): (reader: string) => boolean {
  if (!readers) return () => true;
  const tests = readers.map((r) => {
    if (!r.endsWith('*')) return (x: string) => x === r;
    const source = [...r.slice(0, -1)].map((ch) => (ch === '_' ? '.' : ch === '%' ? '.*' : ch.replace(/[.*+?^${}()|[\]\\]/g, '\\$&'))).join('');
    const re = new RegExp(`^${source}`, 's');
    return (x: string) => re.test(x);
  });
  return (reader) => tests.some((t) => t(reader));
}

/**
 * loadUpstream's result from the partition's parts under `root`, read in JavaScript; with `only`,
 * of the filter's phase only the rows of its items (lib/run/upstreamSlice.ts).
 */
export async function loadUpstreamRows(root: string, campaign: string, needs: UpstreamNeeds, model: string, language: LanguageCode, only?: UpstreamFilter): Promise<Upstream> {
  const folder = (phase: string, table: 'replies' | 'readings') => join(root, partitionPrefix(campaign, phase, table, model, language));
  const keep = (phase: string) => (only === undefined || only.phase !== phase ? undefined : (row: Record<string, unknown>) => only.ids.has(row['item_id'] as string));
  const replies = new Map<string, Map<string, ReplyView>>();
  for (const phase of needs.replies) {
    const chosen = new Map<string, Record<string, unknown>>();
    for (const r of await partRows(folder(phase, 'replies'), keep(phase))) {
      if (r['status'] !== 'ok') continue;
      const id = r['item_id'] as string;
      const best = chosen.get(id);
      if (!best || compareSql(r['attempt'], best['attempt']) < 0 || (r['attempt'] === best['attempt'] && compareSql(r['created_at'], best['created_at']) < 0)) chosen.set(id, r);
    }
    const byItem = new Map<string, ReplyView>();
    for (const [id, r] of chosen) {
      const logprobs = r['logprobs_json'] as string | null | undefined;
      byItem.set(id, {
        text: (r['text'] as string | null | undefined) ?? null,
        attempt: Number(r['attempt']),
        logprobs: logprobs ? (JSON.parse(logprobs) as Record<string, TokenLogprob>) : null,
        finish_reason: (r['finish_reason'] as string | null | undefined) ?? null,
      });
    }
    replies.set(phase, byItem);
  }
  const readings = new Map<string, Map<string, ReadingDraft[]>>();
  for (const [phaseFolder, readers] of needs.readings) {
    const wanted = readerTest(readers);
    // One per item, reader and facet; readings stored before facet and value existed read them as NULL.
    const picked = new Map<string, Record<string, unknown>>();
    for (const r of await partRows(folder(phaseFolder, 'readings'), keep(phaseFolder))) {
      const key = JSON.stringify([r['item_id'], r['reader'], r['facet'] ?? null]);
      const best = picked.get(key);
      const order = best ? compareSql(r['judge_item_id'], best['judge_item_id']) || compareSql(r['label'], best['label']) : -1;
      if (order < 0) picked.set(key, r);
    }
    const byItem = new Map<string, ReadingDraft[]>();
    for (const r of picked.values()) {
      const reader = r['reader'] as string;
      if (!wanted(reader)) continue;
      const id = r['item_id'] as string;
      const value = r['value'] as number | null | undefined;
      const list = byItem.get(id) ?? [];
      list.push({ reader, facet: (r['facet'] as string | null | undefined) ?? null, label: r['label'] as string, value: value === null || value === undefined ? null : Number(value), raw: (r['raw'] as string | null | undefined) ?? null });
      byItem.set(id, list);
    }
    readings.set(phaseFolder, byItem);
  }
  return {
    reply: (phase, itemId) => replies.get(phase)?.get(itemId),
    readings: (phase, itemId) => readings.get(phase)?.get(itemId) ?? [],
  };
}
