/** The label tables the readers use, built once from the lexicon. */
import { CHECKPOINT_PREFIXES, NATURE_WORDS, QUESTION_WORDS, SCOPE_WORDS, VERDICT_WORDS } from './lexicon.js';
import { labelTable } from './matchValue.js';
import { keyOf } from './normalize.js';
import type { Checkpoint } from '../types.js';

export const VERDICT_TABLE = labelTable(VERDICT_WORDS);
export const SCOPE_TABLE = labelTable(SCOPE_WORDS);
export const NATURE_TABLE = labelTable(NATURE_WORDS);
export const QUESTION_TABLE = labelTable(QUESTION_WORDS);

/** checkpointKeys of each letter, built on first use: the readers ask for them for every reply. */
const CHECKPOINT_KEYS = new Map<Checkpoint, ReadonlySet<string>>();

/** The keys that name one checkpoint: "B", "Checkpoint B", "checkpoint_b", "检查点B", … */
export function checkpointKeys(letter: Checkpoint): ReadonlySet<string> {
  let keys = CHECKPOINT_KEYS.get(letter);
  if (keys === undefined) {
    const l = keyOf(letter);
    CHECKPOINT_KEYS.set(letter, (keys = new Set([l, ...CHECKPOINT_PREFIXES.map((p) => `${p}${l}`)])));
  }
  return keys;
}
