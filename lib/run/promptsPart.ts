/**
 * A partition's prompts part: the table the analysis joins replies to, written from the items the
 * design gives, with a digest beside it that says which items it holds, so that a changed design
 * rewrites it and an unchanged one is not written again.
 *
 * A part is one file up to `partRows` rows (RunOptions.partRows, as for replies), then goes on in
 * continuation files: `part-plan.parquet`, `part-plan.1.parquet`, `part-plan.2.parquet`, … The
 * readers read a partition's folder whole, so the files are one table to them. Why: the writer
 * holds a file's rows in DuckDB's memory until it writes them out (ParquetWriter), so a part of one
 * file held a whole partition's prompts — at three times FAR-6's full design a judge partition's
 * 34,400 rows of ~5 KB, ~170 MB in each partition thread, and the run's peak grew with the design.
 * In files of `partRows` rows the writer holds at most one file's.
 *
 * The digest (beside the first file) covers every file of the part. A rewrite is not atomic across
 * its files: a run killed while it rewrites a part of several files leaves the digest of the
 * earlier design, and the next run writes them all again; an analysis run in between may read some
 * files of each design. A part of one file is replaced whole, as before.
 */
import type { LanguageCode, PromptItem } from '../core/types.js';
import { partKey, partitionPrefix } from '../store/layout.js';
import type { PartWriter, WriteOptions } from '../store/parquetParts.js';
import { promptColumns, promptRow } from '../store/schemas.js';
import type { PromptColumns, PromptRow } from '../store/schemas.js';
import type { BlobStore } from '../store/types.js';
import { DEFAULT_PART_ROWS } from './partitionTypes.js';
import { itemsDigest } from './readings.js';
import type { SlicedItems } from './slicedItems.js';

/** The prompts part of every partition: one, written from the plan's items. */
export const PROMPTS_PART = 'part-plan.parquet';

type PartName = { readonly campaign: string; readonly phase: string; readonly model: string; readonly language: LanguageCode; readonly partName: string };

/**
 * File `k` of prompts part `partName`: the part's own name, then `<name>.<k>.parquet`.
 * @example promptsFileName('part-plan.parquet', 2) // 'part-plan.2.parquet'
 */
export function promptsFileName(partName: string, k: number): string {
  return k === 0 ? partName : `${stemOf(partName)}.${k}.parquet`;
}

/** A part's name without its `.parquet`: what its continuation files are named after. */
function stemOf(partName: string): string {
  return partName.slice(0, -'.parquet'.length);
}

/** Which file of prompts part `partName` the file `name` is, or undefined when it is none of them. */
function promptsFileIndex(partName: string, name: string): number | undefined {
  if (name === partName) return 0;
  const stem = stemOf(partName);
  if (!name.startsWith(`${stem}.`) || !name.endsWith('.parquet')) return undefined;
  const k = name.slice(stem.length + 1, -'.parquet'.length);
  return /^[1-9]\d*$/.test(k) ? Number(k) : undefined;
}

/** Deletes the files of prompts part `partName` from file `from` on (0: the whole part; its digest is the caller's). */
async function deletePromptsFiles(store: BlobStore, target: PartName, from: number): Promise<void> {
  const { campaign, phase, model, language, partName } = target;
  const prefix = partitionPrefix(campaign, phase, 'prompts', model, language);
  for (const key of await store.list(prefix)) {
    const k = promptsFileIndex(partName, key.slice(prefix.length));
    if (k !== undefined && k >= from) await store.delete(key);
  }
}

/** Deletes prompts part `partName`, every file of it, and its digest. */
async function deletePromptsPart(store: BlobStore, target: PartName): Promise<void> {
  await deletePromptsFiles(store, target, 0);
  await store.delete(promptsDigestKey(target.campaign, target.phase, target.model, target.language, target.partName));
}

/**
 * Writes `rows` as prompts part `target.partName`: files of at most `fileRows` rows, one after the
 * other, each taken from `rows` only once the one before is written; then deletes the files an
 * earlier, longer write left past the last. No rows: no file. Returns how many rows it wrote.
 */
export async function writePromptsFiles(
  writer: PartWriter,
  store: BlobStore,
  target: PartName,
  rows: Iterable<PromptRow> | AsyncIterable<PromptRow>,
  options: WriteOptions,
  fileRows: number,
): Promise<number> {
  let files = 0;
  let written = 0;
  const write = async (run: Iterable<PromptRow> | AsyncIterable<PromptRow>): Promise<void> => {
    const part = await writer.writePart(store, { ...target, table: 'prompts', partName: promptsFileName(target.partName, files) }, run, options);
    files++;
    written += part.rows;
  };
  if (Symbol.asyncIterator in rows) for await (const run of asyncRunsOf(rows, fileRows)) await write(run);
  else for (const run of runsOf(rows, fileRows)) await write(run);
  await deletePromptsFiles(store, target, files);
  return written;
}

/** `rows` in runs of at most `size`: the next run's first row is asked for once the run before has been read to its end. */
function* runsOf<T>(rows: Iterable<T>, size: number): Generator<Iterable<T>> {
  const it = rows[Symbol.iterator]();
  for (;;) {
    const first = it.next();
    if (first.done) return;
    yield (function* () {
      yield first.value;
      for (let n = 1; n < size; n++) {
        const next = it.next();
        if (next.done) return;
        yield next.value;
      }
    })();
  }
}

/**
 * runsOf for rows that come asynchronously (a one-pass partition's, as its slices are asked). Two
 * functions, not one async: rows read through `for await` cost a promise each, and the writer reads
 * a synchronous source synchronously (ParquetWriter).
 */
async function* asyncRunsOf<T>(rows: AsyncIterable<T>, size: number): AsyncGenerator<AsyncIterable<T>> {
  const it = rows[Symbol.asyncIterator]();
  for (;;) {
    const first = await it.next();
    if (first.done) return;
    yield (async function* () {
      yield first.value;
      for (let n = 1; n < size; n++) {
        const next = await it.next();
        if (next.done) return;
        yield next.value;
      }
    })();
  }
}

/**
 * Where the digest of a prompts part is kept: outside the tables' locations (as the `_registered`
 * and `_shards` markers), so no query reads it.
 */
export function promptsDigestKey(campaign: string, phase: string, model: string, language: LanguageCode, partName: string): string {
  return `campaigns/${campaign}/${phase}/_prompts/model=${model}/language=${language}/${partName}.digest`;
}

/** A digest of what a prompts part holds that can change: each item's id (which hashes the request) and extras. */
function promptsDigest(items: readonly PromptItem[]): string {
  return itemsDigest(items);
}

/**
 * Writes the prompts part `partName` of a partition, unless the part already holds these items
 * (its digest says so). A changed design (a language, repeats, a template, the data's gold)
 * rewrites it, so that the analysis reads the design the campaign file has now; the replies of
 * items it dropped stay stored, and no query joins them to a prompt any more. A partition the
 * design left without items loses its prompts part. Returns whether the part was written.
 */
export async function ensurePrompts(
  writer: PartWriter,
  store: BlobStore,
  target: { readonly campaign: string; readonly phase: string; readonly model: string; readonly language: LanguageCode; readonly partName?: string },
  items: readonly PromptItem[],
  columns: PromptColumns,
  fileRows: number = DEFAULT_PART_ROWS,
): Promise<boolean> {
  const { campaign, phase, model, language } = target;
  const partName = target.partName ?? PROMPTS_PART;
  const part = { campaign, phase, model, language, partName };
  const key = partKey(campaign, phase, 'prompts', model, language, partName);
  const marker = promptsDigestKey(campaign, phase, model, language, partName);
  if (items.length === 0) {
    if (await store.exists(key)) await deletePromptsPart(store, part);
    return false;
  }
  const digest = promptsDigest(items);
  const held = await store.get(marker);
  if (held !== undefined && Buffer.from(held).toString('utf8') === digest && (await store.exists(key))) return false;
  // A role's items partition with the replies they read: the model under test, not the judge.
  // Streamed to the writer, as a sliced partition's rows are: held in one array, a whole
  // partition's rows, each with its messages' JSON, outlived the collector's young generation
  // (X-Value at 30,000 pairs on one thread: the first wave's peak RSS 547-552 MiB, not 616-635,
  // and 2% less CPU, though the writer no longer finds the columns every row shares).
  const rows = (function* () {
    for (const item of items) yield promptRow(item, columns, model);
  })();
  await writePromptsFiles(writer, store, part, rows, { trusted: true, columns: promptColumns(columns) }, fileRows);
  await store.put(marker, digest);
  return true;
}

/**
 * ensurePrompts for a partition given in slices (lib/run/slicedItems.ts): the same part, marker
 * and cases, but the rows come from the slices as each is expanded, never from the whole partition
 * at once, and the partition is indexed on the way (`items.index`). A part not there yet (a fresh
 * run) is written from the index pass itself; one that is there is compared by digest after it,
 * and written from a second pass over the slices when the design changed. `indexed` resolves once
 * the index is complete (the part may still be on its way to disk); `written`, as ensurePrompts.
 */
export function ensureSlicedPrompts(
  writer: PartWriter,
  store: BlobStore,
  target: { readonly campaign: string; readonly phase: string; readonly model: string; readonly language: LanguageCode },
  items: SlicedItems,
  maxCost: (item: PromptItem) => number,
  columns: PromptColumns,
  fileRows: number = DEFAULT_PART_ROWS,
): { readonly indexed: Promise<void>; readonly written: Promise<boolean> } {
  const { campaign, phase, model, language } = target;
  const partName = PROMPTS_PART;
  const key = partKey(campaign, phase, 'prompts', model, language, partName);
  const marker = promptsDigestKey(campaign, phase, model, language, partName);
  const part = { campaign, phase, model, language, partName };
  const options = { trusted: true, columns: promptColumns(columns) };
  let indexed!: () => void;
  let refused!: (err: unknown) => void;
  const index = new Promise<void>((resolve, reject) => ((indexed = resolve), (refused = reject)));
  function* rows(slices: Iterable<readonly PromptItem[]>, end?: () => void): Generator<PromptRow> {
    for (const slice of slices) for (const item of slice) yield promptRow(item, columns, model);
    end?.();
  }
  const written = (async (): Promise<boolean> => {
    if (!(await store.exists(key))) {
      await writePromptsFiles(writer, store, part, rows(items.index(maxCost), indexed), options, fileRows);
      return settlePromptsPart(store, part, items.size, items.digest);
    }
    for (const slice of items.index(maxCost)) void slice;
    indexed();
    if (items.size === 0) {
      await deletePromptsPart(store, part);
      return false;
    }
    const held = await store.get(marker);
    if (held !== undefined && Buffer.from(held).toString('utf8') === items.digest) return false;
    await writePromptsFiles(writer, store, part, rows(items.slices()), options, fileRows);
    await store.put(marker, items.digest);
    return true;
  })();
  written.catch(refused);
  return { indexed: index, written };
}

/**
 * The end of writing a partition's prompts part from its items, as they were taken: a partition
 * without items keeps no part (ensurePrompts writes none) and no marker; one with items gets the
 * marker with their digest, which says the part holds them. Returns whether a part stays.
 */
export async function settlePromptsPart(
  store: BlobStore,
  target: PartName,
  items: number,
  digest: string,
): Promise<boolean> {
  const { campaign, phase, model, language, partName } = target;
  if (items === 0) {
    await deletePromptsPart(store, target);
    return false;
  }
  await store.put(promptsDigestKey(campaign, phase, model, language, partName), digest);
  return true;
}
