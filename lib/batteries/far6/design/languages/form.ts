import type { TermForms } from '../types.js';

/**
 * A term's word form. Pairs are checked against each template's form list before any template
 * runs (`checkPairForms`), so a missing required form here is a programming error.
 */
export function form(term: TermForms, key: string): string {
  const value = term[key];
  if (value === undefined) throw new Error(`concept term lacks form "${key}" (pairs must pass checkPairForms first)`);
  return value;
}

/** First letter upper-cased (sentence-initial verb forms stored in lower case). */
export function capitalise(text: string): string {
  return text.length === 0 ? text : text[0]!.toUpperCase() + text.slice(1);
}

/**
 * The words a reply may start with, each quoted, the last joined by `or` ("„ja“ oder „nein“",
 * "« oui » ou « non »"); a single word is quoted alone.
 */
export function quotedChoice(order: readonly string[], open: string, close: string, or: string): string {
  const q = order.map((p) => `${open}${p}${close}`);
  return q.length <= 1 ? q.join('') : `${q.slice(0, -1).join(', ')} ${or} ${q[q.length - 1]}`;
}
