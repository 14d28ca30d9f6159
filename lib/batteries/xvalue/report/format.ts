import { fmtNumber } from '../../../api/battery.js';
import type { Strategy } from '../types.js';

/** A share as the paper prints it: a percentage with two decimals; "–" when undefined. */
export function pct(x: number | null | undefined): string {
  return x === null || x === undefined || !Number.isFinite(x) ? '–' : fmtNumber(x * 100, 2);
}

/** The strategies as Towards Cross-lingual Values Judgment names them. */
export const STRATEGY_TITLE: Readonly<Record<Strategy, string>> = {
  defonly: 'Judgment with Definition-only Prompt',
  rubric: 'Judgment with Rubric Prompt',
};

/**
 * A lowest cell's rank with its tie marked: "1" alone, "1 (tied with 3 others)" when other cells
 * share its accuracy.
 * @example rankText({ rank: 1, ties: 2 }) === '1 (tied with 2 others)'
 */
export function rankText(c: { readonly rank: number; readonly ties: number }): string {
  return c.ties === 0 ? String(c.rank) : `${c.rank} (tied with ${c.ties} other${c.ties === 1 ? '' : 's'})`;
}
