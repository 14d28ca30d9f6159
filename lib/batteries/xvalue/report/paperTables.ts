/**
 * The paper's accuracy tables as text cells, one table per strategy, for summary.md and report.html
 * alike, so that both print the same columns: Towards Cross-lingual Values Judgment Table 2 (overall,
 * Acc0, Acc1, their gap, the categories and their spread) and Table 3 (the languages and their
 * spread). Shares in % with two decimals, "–" for undefined.
 */
import type { XvalueResults } from '../analysis/types.js';
import { CATEGORIES, LANGUAGES } from '../types.js';
import type { Category, Language, Strategy } from '../types.js';
import { pct } from './format.js';

export interface TextTable {
  readonly header: readonly string[];
  readonly rows: readonly (readonly string[])[];
}

/** The categories with at least one verdict, in the paper's order. */
export function categoriesIn(r: XvalueResults): Category[] {
  return CATEGORIES.filter((c) => r.byCategory.some((x) => x.category === c));
}

/** The languages with at least one verdict, in the paper's order. */
export function languagesIn(r: XvalueResults): Language[] {
  return LANGUAGES.filter((l) => r.byLanguage.some((x) => x.language === l));
}

/** Table 2 for one strategy: a row per model. */
export function overallTable(r: XvalueResults, strategy: Strategy): TextTable {
  const categories = categoriesIn(r);
  return {
    header: ['Model', 'n', 'Acc', 'Acc0', 'Acc1', 'Acc0−Acc1', ...categories, 'avg.', 'std.', 'range'],
    rows: r.overall
      .filter((o) => o.strategy === strategy)
      .map((o) => [
        o.model,
        String(o.n),
        pct(o.accuracy),
        pct(o.accuracy_negative),
        pct(o.accuracy_positive),
        pct(o.accuracy_gap),
        ...categories.map((c) => pct(r.byCategory.find((x) => x.model === o.model && x.strategy === strategy && x.category === c)?.accuracy)),
        pct(o.category_avg),
        pct(o.category_std),
        pct(o.category_range),
      ]),
  };
}

/** Table 3 for one strategy: a row per model. */
export function languageTable(r: XvalueResults, strategy: Strategy): TextTable {
  const languages = languagesIn(r);
  return {
    header: ['Model', ...languages, 'avg.', 'std.', 'range'],
    rows: r.overall
      .filter((o) => o.strategy === strategy)
      .map((o) => [
        o.model,
        ...languages.map((l) => pct(r.byLanguage.find((x) => x.model === o.model && x.strategy === strategy && x.language === l)?.accuracy)),
        pct(o.language_avg),
        pct(o.language_std),
        pct(o.language_range),
      ]),
  };
}
