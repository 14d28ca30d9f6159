/**
 * A partition no run has begun, asked in one pass over its slices (runPartitionInOnePass).
 *
 * Why: the two-pass way first registers and indexes the whole partition — its ids for the
 * ledger, its prompts part, the digests that say which design it was run under — and only then
 * asks it. A root partition is then held whole while it is asked (X-Value's step-3 partitions at
 * 100,000 pairs: ~28,600 rendered prompts, ~100 MB of a thread's heap; FAR-6's generate
 * partitions grow with its stories), and a dependent partition in slices (lib/run/slicedItems.ts)
 * is expanded twice, once to index it and once to ask it. What the first pass is for — finding
 * what an earlier run registered, journaled, stored or read under another design — has nothing to
 * find in a partition no run has begun. So such a partition is registered, staged into its prompts
 * part and asked a slice at a time, and its digests are recorded at the end, from the slices that
 * went by. A run killed in the middle leaves items registered: the next one takes the two-pass
 * way, which adopts the journals, registers the rest and writes the prompts part.
 */
import { createHash } from 'node:crypto';
import { readdir } from 'node:fs/promises';
import type { PhaseSpec } from '../battery/types.js';
import type { LanguageCode, PromptItem } from '../core/types.js';
import { partKey, partitionPrefix } from '../store/layout.js';
import { addToIdsDigest } from '../store/orphans.js';
import type { PartWriter } from '../store/parquetParts.js';
import { promptColumns, promptRow } from '../store/schemas.js';
import type { PromptColumns, PromptRow } from '../store/schemas.js';
import type { BlobStore, Ledger } from '../store/types.js';
import { PROMPTS_PART, settlePromptsPart, writePromptsFiles } from './promptsPart.js';
import type { PartitionOutcome, PartitionSpec } from './partitionTypes.js';
import { addToItemsDigest } from './readings.js';
import { markReadingsCurrent } from './refreshReadings.js';
import { runPartitionInOnePass } from './runPartition.js';

/** Where a partition lives, as the one-pass run checks and records it. */
export interface OnePassTarget {
  readonly store: BlobStore;
  readonly ledger: Ledger;
  readonly campaign: string;
  readonly phase: Pick<PhaseSpec, 'name' | 'readerVersion' | 'readingsOf'>;
  readonly model: string;
  readonly language: LanguageCode;
  /** The partition's journal folder (partitionSpec.ts journalDir). */
  readonly journalDir: string;
}

/**
 * Whether no run has begun the partition: no item in the ledger, no journal, no prompts part and
 * no replies part. False where the ledger cannot say (Ledger.hasItems).
 */
export async function unbegun(t: OnePassTarget): Promise<boolean> {
  if (t.ledger.hasItems === undefined || t.ledger.recordPartition === undefined) return false;
  if (await t.ledger.hasItems(t.campaign, { phase: t.phase.name, model: t.model, language: t.language })) return false;
  // A journal left with no item registered: one copied in by hand, or an earlier sondage's.
  if ((await readdir(t.journalDir).catch(() => [] as string[])).length > 0) return false;
  if (await t.store.exists(partKey(t.campaign, t.phase.name, 'prompts', t.model, t.language, PROMPTS_PART))) return false;
  return (await t.store.list(partitionPrefix(t.campaign, t.phase.name, 'replies', t.model, t.language))).length === 0;
}

/**
 * Runs an unbegun partition (`unbegun`) given as `slices` in one pass: each slice's prompt rows go
 * to the partition's prompts part as the slice is asked; at the end the part's digest, the
 * readings' digest (every reading of the partition was made by this pass) and the partition's
 * record go to the store and the ledger, as the two-pass way writes them before it asks.
 */
export async function runOnePass(
  t: OnePassTarget,
  spec: PartitionSpec,
  slices: Iterable<readonly PromptItem[]>,
  prompts: { readonly writer: PartWriter; readonly columns: PromptColumns },
): Promise<{ outcome: PartitionOutcome; items: number }> {
  const { store, campaign, model, language } = t;
  const phase = t.phase.name;
  // Each item's row is made as the writer takes it, not a slice's rows at once: held in one array,
  // a whole partition's rows (a dependent partition not cut into slices is one slice) outlive the
  // collector's young generation (ensurePrompts says what that cost).
  const rows = new RowChannel<PromptItem, PromptRow>((item) => promptRow(item, prompts.columns, model));
  const target = { campaign, phase, model, language, partName: PROMPTS_PART };
  const written = writePromptsFiles(prompts.writer, store, target, rows, { trusted: true, columns: promptColumns(prompts.columns) }, spec.partRows);
  // Caught here and awaited below: a failure before then must not go unhandled.
  written.catch(() => undefined);
  const itemsHash = createHash('sha256');
  const idsHash = createHash('sha256');
  let ran: { outcome: PartitionOutcome; items: number };
  try {
    ran = await runPartitionInOnePass(spec, slices, (items, ids) => {
      addToItemsDigest(itemsHash, items);
      addToIdsDigest(idsHash, ids);
      rows.push(items);
    });
  } catch (err) {
    rows.fail(err);
    await written.catch(() => undefined);
    throw err;
  }
  rows.end();
  await written;
  const itemsDigest = itemsHash.digest('hex');
  await settlePromptsPart(store, target, ran.items, itemsDigest);
  await markReadingsCurrent(t, itemsDigest);
  await t.ledger.recordPartition!(campaign, { phase, model, language }, ran.items, idsHash.digest('hex'));
  return ran;
}

/** A partition's root items a slice of `size` at a time, expanded as they are taken. */
export function* slicesOf(items: Iterable<PromptItem>, size: number): Generator<PromptItem[]> {
  let slice: PromptItem[] = [];
  for (const item of items) {
    slice.push(item);
    if (slice.length === size) {
      yield slice;
      slice = [];
    }
  }
  if (slice.length > 0) yield slice;
}

/**
 * Items handed over a slice at a time and read as rows one at a time: the prompts part's writer
 * appends them while the pass goes on, so no more than the slices not yet appended are held.
 */
class RowChannel<I, T> implements AsyncIterable<T> {
  private readonly queue: (readonly I[])[] = [];
  private ended = false;
  private failure: { readonly err: unknown } | undefined;
  private wake: (() => void) | undefined;

  constructor(private readonly rowOf: (item: I) => T) {}

  push(items: readonly I[]): void {
    this.queue.push(items);
    this.wake?.();
  }

  end(): void {
    this.ended = true;
    this.wake?.();
  }

  fail(err: unknown): void {
    this.failure = { err };
    this.wake?.();
  }

  async *[Symbol.asyncIterator](): AsyncGenerator<T> {
    for (;;) {
      if (this.failure) throw this.failure.err;
      const items = this.queue.shift();
      if (items !== undefined) {
        for (const item of items) yield this.rowOf(item);
        continue;
      }
      if (this.ended) return;
      await new Promise<void>((resolve) => (this.wake = resolve));
      this.wake = undefined;
    }
  }
}
