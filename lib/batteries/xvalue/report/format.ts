import { fmtNumber } from '../../../report/markdown.js';
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
