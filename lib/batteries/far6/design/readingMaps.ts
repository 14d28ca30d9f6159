import type { Proposition, ReadingMap } from '../types.js';
import type { ConceptPair, LanguageTemplates } from './types.js';

/** The key form of an opening in a reading map: NFC, lower case (Same Judgment, Different Yes: the rule is case-blind). */
export function caseFold(text: string): string {
  return text.normalize('NFC').toLowerCase();
}

export const opposite = (side: Proposition): Proposition => (side === 'P' ? 'notP' : 'P');

/** Adds a folded token, and its typographic-apostrophe twin (j'approuve / j’approuve). */
function put(tokens: Record<string, Proposition>, surface: string, side: Proposition): void {
  const key = caseFold(surface);
  tokens[key] = side;
  if (key.includes("'")) tokens[key.replaceAll("'", '\u2019')] = side;
}

/**
 * The particles in the order an instruction lists them: order 0 puts yes first, order 1 no first;
 * the reverse particle (doch, si) stays last in both, so the two orders differ only in which of
 * yes and no comes first (Same Judgment, Different Yes "Answer instructions": the reverse particle order is tested).
 */
export function particleOrder(tpl: LanguageTemplates, order: number): string[] {
  const { yes, no, reverse } = tpl.particles;
  const pair = order === 0 ? [yes, no] : [no, yes];
  return reverse ? [...pair, reverse] : pair;
}

/**
 * The fixed token rule's map for a yes/no-first item (Same Judgment, Different Yes §3): yes, and German doch or
 * French si, affirm the term the question names; no affirms its opposite. The rule is the same
 * after a negative interrogative: it is the polarity-based mapping that §7 tests, not a reading
 * adjusted to the construction.
 */
export function particleReadingMap(tpl: LanguageTemplates, named: Proposition, order: number): ReadingMap {
  const { yes, no, reverse, yesVariants, noVariants } = tpl.particles;
  const tokens: Record<string, Proposition> = {};
  for (const t of [yes, ...yesVariants]) put(tokens, t, named);
  for (const t of [no, ...noVariants]) put(tokens, t, opposite(named));
  if (reverse) put(tokens, reverse, named);
  return {
    kind: 'particle',
    tokens,
    particles: { yes, no, ...(reverse ? { reverse } : {}), order: particleOrder(tpl, order) },
  };
}

/** Verdict-first items: every listed opening of each term reads as that term's side. */
export function verdictReadingMap(pair: ConceptPair): ReadingMap {
  const tokens: Record<string, Proposition> = {};
  for (const t of [pair.reference.verdict, ...pair.reference.verdict_forms]) put(tokens, t, 'P');
  for (const t of [pair.counterpart.verdict, ...pair.counterpart.verdict_forms]) put(tokens, t, 'notP');
  return { kind: 'verdict', tokens, verdicts: { P: pair.reference.verdict, notP: pair.counterpart.verdict } };
}

export const LETTERS = ['A', 'B'] as const;

/** The propositions in listed order: order 0 lists P first (as A), order 1 lists notP first. */
export function letterSides(order: number): readonly [Proposition, Proposition] {
  return order === 0 ? ['P', 'notP'] : ['notP', 'P'];
}

/** Proposition-label items: each letter stands for the proposition listed beside it. */
export function letterReadingMap(order: number): ReadingMap {
  const [first, second] = letterSides(order);
  return {
    kind: 'letter',
    tokens: { [caseFold(LETTERS[0])]: first, [caseFold(LETTERS[1])]: second },
    letters: [
      { letter: LETTERS[0], proposition: first },
      { letter: LETTERS[1], proposition: second },
    ],
  };
}

/** Free sentences have no opening to read; only the judge reads them. */
export const NO_READING: ReadingMap = { kind: 'none', tokens: {} };
