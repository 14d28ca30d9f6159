/**
 * A dependent phase's partition in the local run, asked a slice of its source items at a time.
 *
 * Why: P(True)'s verify partition at the paper's size is 103,680 probes, each with its prompt text
 * (the question and the reply inside the verifier template), and the two partition threads ran
 * four partitions at once; expanded whole, their items and what the run built from them held most
 * of the run's 3.9 GB peak. Here the whole partition is kept as its ids only — what the ledger's
 * registration and pending lookups, the adoption of a killed run's journals and the readings check
 * need — with each item's maximum cost (a killed run's orphaned reservations are resolved at it)
 * and the digest of the items (the prompts part's and the readings' marker). The items themselves
 * are expanded again a slice at a time: when the slice is asked, when the prompts part is written,
 * when a journal or a stored part names one of its items.
 *
 * A slice is `[start, end)` of the source phase's items in expansion order, as the Lambda worker's
 * shards of a phase cut by source (lib/run/upstreamSlice.ts): the slices' items, one slice after
 * the other, are the partition's items in its order, so what is asked, stored and charged is what
 * the whole partition gives.
 */
import { createHash } from 'node:crypto';
import type { PhaseSpec } from '../battery/types.js';
import type { PromptItem } from '../core/types.js';
import { addToItemsDigest } from './readings.js';

/** Source items per slice: a P(True) verify slice of 2,048 generate replies is 12,288 probes. */
export const SLICE_SOURCE_ITEMS = 2048;

/** The items of a partition as the adoption of journals and the readings check read them: a Map of id to item will do. */
export interface ItemLookup {
  keys(): Iterable<string>;
  has(id: string): boolean;
  get(id: string): PromptItem | undefined;
}

/** The items of a partition, whole or in slices, by id. */
export function lookupOf(items: readonly PromptItem[] | SlicedItems): ItemLookup {
  return items instanceof SlicedItems ? items : new Map(items.map((i) => [i.item_id, i]));
}

/**
 * Whether a dependent phase's partition may be asked in slices of its source items: a phase cut
 * by source (the default), whose items from a slice of its source items are that slice's share of
 * the whole partition's; a phase cut by partition (its items need the whole of it) may not.
 */
export function sliceableBySource(phase: Pick<PhaseSpec, 'after' | 'shard'>): boolean {
  return phase.after.length > 0 && (phase.shard ?? 'by-source') === 'by-source';
}

export class SlicedItems implements ItemLookup {
  private readonly ids: string[] = [];
  private readonly costs: number[] = [];
  /** Position of each id in `ids`. */
  private readonly position = new Map<string, number>();
  /** Position in `ids` of each slice's first item; the last entry is the count. */
  private readonly starts: number[] = [0];
  private itemsDigest: string | undefined;
  /** The slice last expanded for a lookup: journals and parts name items in the order they were asked. */
  private cached: { readonly slice: number; readonly byId: ReadonlyMap<string, PromptItem> } | undefined;

  /**
   * @param expandSlice the items of slice `k` (`0 <= k < sliceCount`), expanded anew at each call
   * @param sliceCount how many slices the source items make
   */
  constructor(
    private readonly expandSlice: (k: number) => readonly PromptItem[],
    readonly sliceCount: number,
  ) {}

  /**
   * Expands every slice once and keeps what the whole partition needs: ids, maximum costs, the
   * digest. Yields each slice's items as it goes (the prompts part is written from them); the
   * index is complete once the iteration ends.
   */
  *index(maxCost: (item: PromptItem) => number): Generator<readonly PromptItem[]> {
    if (this.itemsDigest !== undefined) throw new Error('SlicedItems.index: the partition is indexed already');
    const h = createHash('sha256');
    for (let k = 0; k < this.sliceCount; k++) {
      const items = this.expandSlice(k);
      addToItemsDigest(h, items);
      for (const item of items) {
        this.position.set(item.item_id, this.ids.length);
        this.ids.push(item.item_id);
        this.costs.push(maxCost(item));
      }
      this.starts.push(this.ids.length);
      yield items;
    }
    this.itemsDigest = h.digest('hex');
  }

  /** The digest itemsDigest (lib/run/readings.ts) gives of the whole partition's items. */
  get digest(): string {
    this.indexedIds();
    return this.itemsDigest!;
  }

  /** How many items the partition has. */
  get size(): number {
    return this.indexedIds().length;
  }

  /** The items of each slice in turn, expanded anew. */
  *slices(): Generator<readonly PromptItem[]> {
    for (let k = 0; k < this.sliceCount; k++) yield this.expandSlice(k);
  }

  /**
   * The items of each slice that holds one of `wanted` (the pending ids), in turn, expanded anew;
   * a slice with none is not expanded (a resumed or complete partition's done slices).
   */
  *slicesHolding(wanted: ReadonlySet<string>): Generator<readonly PromptItem[]> {
    const ids = this.indexedIds();
    for (let k = 0; k < this.sliceCount; k++) {
      let holds = false;
      for (let at = this.starts[k]!; at < this.starts[k + 1]! && !holds; at++) holds = wanted.has(ids[at]!);
      if (holds) yield this.expandSlice(k);
    }
  }

  keys(): Iterable<string> {
    return this.indexedIds();
  }

  has(id: string): boolean {
    return this.position.has(id);
  }

  /** The item `id`, from its slice (expanded unless it is the one last expanded here). */
  get(id: string): PromptItem | undefined {
    const at = this.position.get(id);
    if (at === undefined) return undefined;
    const slice = this.sliceAt(at);
    if (this.cached?.slice !== slice) this.cached = { slice, byId: new Map(this.expandSlice(slice).map((i) => [i.item_id, i])) };
    return this.cached.byId.get(id);
  }

  /** The maximum cost of item `id` when indexed; undefined for an id not in the partition. */
  maxCostOf(id: string): number | undefined {
    const at = this.position.get(id);
    return at === undefined ? undefined : this.costs[at];
  }

  private indexedIds(): readonly string[] {
    if (this.itemsDigest === undefined) throw new Error('SlicedItems: the partition is not indexed yet (run index() to its end first)');
    return this.ids;
  }

  /** The slice holding position `at`: the last start at or before it. */
  private sliceAt(at: number): number {
    let lo = 0;
    let hi = this.sliceCount - 1;
    while (lo < hi) {
      const mid = (lo + hi + 1) >> 1;
      if (this.starts[mid]! <= at) lo = mid;
      else hi = mid - 1;
    }
    return lo;
  }
}
