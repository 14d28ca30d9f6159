/**
 * The design's pairs by language and by id, built once per list of pairs. A partition's expansion
 * asked for them on every call: filtering 100,000 pairs per root expansion, and a Map of every
 * pair per step-2 slice (a step-2 partition is expanded a slice at a time, twice), which took a
 * sixth of step 2's time at 100,000 pairs. The design is loaded once per run and never edited, so
 * the index of a list stays right for as long as the list lives.
 */
import type { Language, QaPair } from '../types.js';

interface PairIndex {
  readonly byLanguage: ReadonlyMap<Language, readonly QaPair[]>;
  readonly byId: ReadonlyMap<string, QaPair>;
}

const indexes = new WeakMap<readonly QaPair[], PairIndex>();

function indexOf(pairs: readonly QaPair[]): PairIndex {
  let index = indexes.get(pairs);
  if (index === undefined) {
    const byLanguage = new Map<Language, QaPair[]>();
    const byId = new Map<string, QaPair>();
    for (const pair of pairs) {
      let list = byLanguage.get(pair.language);
      if (list === undefined) byLanguage.set(pair.language, (list = []));
      list.push(pair);
      byId.set(pair.id, pair);
    }
    index = { byLanguage, byId };
    indexes.set(pairs, index);
  }
  return index;
}

/** The pairs of `language`, in data order. */
export function pairsIn(pairs: readonly QaPair[], language: Language): readonly QaPair[] {
  return indexOf(pairs).byLanguage.get(language) ?? [];
}

/** The pair with id `id`, or undefined. */
export function pairById(pairs: readonly QaPair[], id: string): QaPair | undefined {
  return indexOf(pairs).byId.get(id);
}
