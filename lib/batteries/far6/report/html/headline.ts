/**
 * The readout comparisons of Same Judgment, Different Yes §4 worth a glance (Figure 2a): sentence vs label, the same
 * replies read twice (token rule vs judge) under plain and negative questions, and the
 * negative-interrogative token against the plain one. `judge:*` matches any judge.
 */
export const HEADLINE_PAIRS: readonly (readonly [string, string])[] = [
  ['plain/free/judge:*', 'plain/label/rule'],
  ['plain/free/judge:*', 'plain/verdict/judge:*'],
  ['plain/yesno/judge:*', 'plain/yesno/rule'],
  ['negint/yesno/judge:*', 'negint/yesno/rule'],
  ['negint/yesno/judge:*', 'plain/free/judge:*'],
  ['negint/yesno/rule', 'plain/yesno/rule'],
];

/** A readout against a pattern whose trailing `*` matches any rest. */
export function matchesReadout(readout: string, pattern: string): boolean {
  return pattern.endsWith('*') ? readout.startsWith(pattern.slice(0, -1)) : readout === pattern;
}

/** Index of the headline pair a readout pair matches (either order), or -1. */
export function headlineIndex(a: string, b: string): number {
  return HEADLINE_PAIRS.findIndex(
    ([x, y]) => (matchesReadout(a, x) && matchesReadout(b, y)) || (matchesReadout(a, y) && matchesReadout(b, x)),
  );
}
