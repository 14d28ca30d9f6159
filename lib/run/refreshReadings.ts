/**
 * Readings that follow the design as it stands. A reading is made once, when its reply arrives,
 * from the reply and the item's design data (a P(True) gold letter, a FAR-6 reading map); a design
 * corrected between runs would leave the stored readings as they were read. Before a partition
 * runs, its stored readings are checked against the fingerprints the current design gives
 * (lib/run/readings.ts `readingFingerprint`), and every part whose readings differ is read again
 * from its stored replies and written anew. Re-reading costs no call: `read` is a pure function of
 * the item and the stored reply. A dependent phase whose prompts follow from these readings (X-Value's
 * step 2) then expands new items, which the run plans, prices and asks like any other.
 *
 * Why whole parts are rewritten rather than superseding rows added: every query that reads the
 * readings table (the batteries' SQL, one_reading.sql, the upstream of dependent phases) would
 * have to learn to pick the newest row. A readings part is named after the replies part it was read
 * from and holds that part's readings only, so rewriting it (atomically: the writers rename a
 * finished file into place) gives exactly the part a fresh run on the same replies would write.
 *
 * A digest of the partition's items and their reading inputs, kept outside the tables' locations,
 * spares a run the reads when nothing changed. It is written only once every part agrees, so a run
 * killed halfway checks again next time; parts already rewritten then compare equal and are kept.
 */
import { createHash } from 'node:crypto';
import type { PhaseSpec } from '../battery/types.js';
import type { LanguageCode, PromptItem } from '../core/types.js';
import { partKey, partitionPrefix } from '../store/layout.js';
import type { PartWriter } from '../store/parquetParts.js';
import type { BlobStore, ReadingRow, ReplyRow } from '../store/types.js';
import { itemsDigest, readerOf } from './readings.js';
import { lookupOf, SlicedItems } from './slicedItems.js';

/**
 * The JavaScript Parquet reader (hyparquet, ~50 modules), loaded when stored parts are read again:
 * every partition thread imports this file, and a run whose readings are current never needs it.
 */
const jsParquet = () => import('../store/JsParquet.js');

/** One partition of a phase, with its current items and how one reply is read. */
export interface ReadingsRefreshTarget {
  readonly store: BlobStore;
  readonly writer: PartWriter;
  readonly campaign: string;
  readonly phase: Pick<PhaseSpec, 'name' | 'readerVersion' | 'readingsOf'>;
  /** Where the phase's readings are stored (PhaseGraph.readingsFolder). */
  readonly folder: string;
  /** Partition keys: the model whose replies these are (a judge phase's: the judged model). */
  readonly model: string;
  readonly language: LanguageCode;
  /** The partition's items, or its slices (lib/run/slicedItems.ts: indexed, their digest known). */
  readonly items: readonly PromptItem[] | SlicedItems;
  /** The phase's reading rows of one reply (lib/run/readings.ts `readingRows`). */
  readReply(item: PromptItem, reply: ReplyRow): ReadingRow[];
}

export interface ReadingsRefresh {
  /** Readings read again from their stored replies (the rows of every part written anew). */
  readonly reread: number;
  /** Of those, readings whose label, value or raw text is not what was stored. */
  readonly changed: number;
}

/** Where the digest of a partition's reading inputs is kept: beside the prompts digest, outside every table. */
export function readingsDigestKey(campaign: string, phase: string, model: string, language: LanguageCode): string {
  const prefix = partitionPrefix(campaign, phase, 'readings', model, language);
  return prefix.replace(`/${phase}/readings/`, `/${phase}/_readings/`) + 'read_with.digest';
}

/**
 * The partition's reading inputs as one digest: its reader and the digest of its items' ids and
 * extras, the one its prompts part is kept with (readings.ts `itemsDigest`). Its format names the
 * fingerprints' version: a campaign whose readings were fingerprinted from the items' JSON (an
 * earlier sondage) has every part read again once, and rewritten with the same labels.
 */
function inputsDigest(phase: ReadingsRefreshTarget['phase'], items: ReadingsRefreshTarget['items']): string {
  return inputsDigestOf(phase, items instanceof SlicedItems ? items.digest : itemsDigest(items));
}

function inputsDigestOf(phase: ReadingsRefreshTarget['phase'], itemsDigest: string): string {
  return createHash('sha256').update(`read_with 2\u0000${readerOf(phase)}\u0000${itemsDigest}`).digest('hex');
}

/**
 * Marks the stored readings of a partition as read under the design whose items give
 * `itemsDigest` (readings.ts `itemsDigest`), as refreshReadings does once every part agrees: for a
 * partition whose every reading this run made itself (lib/run/onePassPartition.ts), so that the
 * next run does not read them all again to find the same.
 */
export async function markReadingsCurrent(t: Pick<ReadingsRefreshTarget, 'store' | 'campaign' | 'phase' | 'model' | 'language'>, itemsDigest: string): Promise<void> {
  await t.store.put(readingsDigestKey(t.campaign, t.phase.name, t.model, t.language), inputsDigestOf(t.phase, itemsDigest));
}

/** A reading as compared: every stored column but the fingerprint. */
function contentKey(r: Record<string, unknown>): string {
  return JSON.stringify([r['item_id'], r['reader'], r['facet'] ?? null, r['label'], r['value'] ?? null, r['raw'] ?? null, r['judge_item_id'] ?? null]);
}

/**
 * Reads again the stored readings of one partition that the current design would read otherwise,
 * and rewrites their parts. Returns how many readings were read again and how many changed.
 */
export async function refreshReadings(t: ReadingsRefreshTarget): Promise<ReadingsRefresh> {
  const marker = readingsDigestKey(t.campaign, t.phase.name, t.model, t.language);
  const digest = inputsDigest(t.phase, t.items);
  const held = await t.store.get(marker);
  const replyParts = (await t.store.list(partitionPrefix(t.campaign, t.phase.name, 'replies', t.model, t.language))).filter((k) => k.endsWith('.parquet')).sort();
  // The digest vouches for the readings parts it was written beside: a replies part whose readings
  // part is gone (removed by hand, lost in a copy) is read again even so. A part whose replies give
  // no reading (all failed) has none either, and is read again only to find the same.
  if (held !== undefined && Buffer.from(held).toString('utf8') === digest && (await everyReadingsPart(t, replyParts))) return { reread: 0, changed: 0 };

  const byId = lookupOf(t.items);
  const ofSource = t.phase.readingsOf === 'source';
  let reread = 0;
  let changed = 0;
  // The old digest goes before the first part is rewritten: a run killed halfway, then a design
  // put back as it was, must not find its digest still there and skip parts read under the other.
  let markerDropped = held === undefined;
  for (const key of replyParts) {
    const bytes = await t.store.get(key);
    if (bytes === undefined) continue;
    const partName = key.slice(key.lastIndexOf('/') + 1);
    const { readParquetRows } = await jsParquet();
    const fresh: ReadingRow[] = [];
    for (const row of await readParquetRows(bytes)) {
      const item = row['status'] === 'ok' ? byId.get(row['item_id'] as string) : undefined;
      if (item === undefined) continue;
      fresh.push(...t.readReply(item, { ...row, model: t.model, language: t.language } as unknown as ReplyRow));
    }
    const readingsKey = partKey(t.campaign, t.folder, 'readings', t.model, t.language, partName);
    const stored = await t.store.get(readingsKey);
    const old = stored === undefined ? [] : await readParquetRows(stored);
    // Readings of items the design no longer has stay as they were: no query joins them to a prompt.
    // But a judge's readings name the item it judged (readingsOf 'source'), whose readings the
    // analysis picks one of per reader: those of judge items the design replaced (an edited
    // reference answer makes new ones) would compete with the new ones, so they go, as a fresh
    // reading never makes them. Their replies stay; putting the design back reads them again.
    const producer = (r: Record<string, unknown>) => (ofSource ? r['judge_item_id'] : r['item_id']) as string;
    const kept = ofSource ? [] : old.filter((r) => !byId.has(producer(r)));
    const current = old.filter((r) => byId.has(producer(r)));
    const same =
      kept.length + current.length === old.length &&
      current.length === fresh.length &&
      current.every((r) => typeof r['read_with'] === 'string') &&
      sameMultiset(current.map((r) => `${contentKey(r)}${r['read_with'] as string}`), fresh.map((r) => `${contentKey(r as unknown as Record<string, unknown>)}${r.read_with}`));
    if (same) continue;
    const before = new Map<string, number>();
    for (const r of current) before.set(contentKey(r), (before.get(contentKey(r)) ?? 0) + 1);
    for (const r of fresh) {
      const k = contentKey(r as unknown as Record<string, unknown>);
      const n = before.get(k) ?? 0;
      if (n > 0) before.set(k, n - 1);
      else changed++;
    }
    reread += fresh.length;
    if (!markerDropped) {
      await t.store.delete(marker);
      markerDropped = true;
    }
    const rows = [...kept.map((r) => ({ ...r, model: t.model, language: t.language, read_with: (r['read_with'] as string | null | undefined) ?? null }) as unknown as ReadingRow), ...fresh];
    if (rows.length > 0) await t.writer.writePart(t.store, { campaign: t.campaign, phase: t.folder, table: 'readings', model: t.model, language: t.language, partName }, rows, { trusted: true });
    else if (stored !== undefined) await t.store.delete(readingsKey);
  }
  await t.store.put(marker, digest);
  return { reread, changed };
}

/** True when each replies part of the partition has its readings part (the same name in the readings folder). */
async function everyReadingsPart(t: ReadingsRefreshTarget, replyParts: readonly string[]): Promise<boolean> {
  const readings = new Set((await t.store.list(partitionPrefix(t.campaign, t.folder, 'readings', t.model, t.language))).map((k) => k.slice(k.lastIndexOf('/') + 1)));
  return replyParts.every((k) => readings.has(k.slice(k.lastIndexOf('/') + 1)));
}

function sameMultiset(a: readonly string[], b: readonly string[]): boolean {
  if (a.length !== b.length) return false;
  const x = [...a].sort();
  const y = [...b].sort();
  return x.every((v, i) => v === y[i]);
}
