/**
 * A partition's prompts part: the table the analysis joins replies to, written from the items the
 * design gives, with a digest beside it that says which items it holds, so that a changed design
 * rewrites it and an unchanged one is not written again.
 */
import type { LanguageCode, PromptItem } from '../core/types.js';
import { partKey } from '../store/layout.js';
import type { PartWriter } from '../store/parquetParts.js';
import { promptColumns, promptRow } from '../store/schemas.js';
import type { PromptColumns, PromptRow } from '../store/schemas.js';
import type { BlobStore } from '../store/types.js';
import { itemsDigest } from './readings.js';
import type { SlicedItems } from './slicedItems.js';

/** The prompts part of every partition: one, written from the plan's items. */
export const PROMPTS_PART = 'part-plan.parquet';

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
): Promise<boolean> {
  const { campaign, phase, model, language } = target;
  const partName = target.partName ?? PROMPTS_PART;
  const key = partKey(campaign, phase, 'prompts', model, language, partName);
  const marker = promptsDigestKey(campaign, phase, model, language, partName);
  if (items.length === 0) {
    if (await store.exists(key)) {
      await store.delete(key);
      await store.delete(marker);
    }
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
  await writer.writePart(store, { campaign, phase, table: 'prompts', model, language, partName }, rows, { trusted: true, columns: promptColumns(columns) });
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
): { readonly indexed: Promise<void>; readonly written: Promise<boolean> } {
  const { campaign, phase, model, language } = target;
  const partName = PROMPTS_PART;
  const key = partKey(campaign, phase, 'prompts', model, language, partName);
  const marker = promptsDigestKey(campaign, phase, model, language, partName);
  const part = { campaign, phase, table: 'prompts' as const, model, language, partName };
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
      await writer.writePart(store, part, rows(items.index(maxCost), indexed), options);
      return settlePromptsPart(store, part, items.size, items.digest);
    }
    for (const slice of items.index(maxCost)) void slice;
    indexed();
    if (items.size === 0) {
      await store.delete(key);
      await store.delete(marker);
      return false;
    }
    const held = await store.get(marker);
    if (held !== undefined && Buffer.from(held).toString('utf8') === items.digest) return false;
    await writer.writePart(store, part, rows(items.slices()), options);
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
  target: { readonly campaign: string; readonly phase: string; readonly model: string; readonly language: LanguageCode; readonly partName: string },
  items: number,
  digest: string,
): Promise<boolean> {
  const { campaign, phase, model, language, partName } = target;
  if (items === 0) {
    await store.delete(partKey(campaign, phase, 'prompts', model, language, partName));
    await store.delete(promptsDigestKey(campaign, phase, model, language, partName));
    return false;
  }
  await store.put(promptsDigestKey(campaign, phase, model, language, partName), digest);
  return true;
}
