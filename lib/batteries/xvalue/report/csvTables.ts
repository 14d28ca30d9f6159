/**
 * The results tables as CSV (one file each; README.md "Results"). Shares stay in [0, 1] with six
 * decimals (lib/report/csv.ts); an undefined share is an empty field, never NaN.
 */
import { toCsv } from '../../../api/battery.js';
import type { XvalueResults } from '../analysis/types.js';

const RATES = ['n', 'n_positive', 'n_negative', 'abstained', 'missing', 'accuracy', 'accuracy_negative', 'accuracy_positive', 'accuracy_gap', 'precision', 'recall', 'f1'] as const;

/** Every CSV file: name and content. */
export function csvTables(r: XvalueResults): [string, string][] {
  return [
    ['overall.csv', toCsv(['model', 'strategy', ...RATES, 'category_avg', 'category_std', 'category_range', 'language_avg', 'language_std', 'language_range'], [...r.overall])],
    ['by_category.csv', toCsv(['model', 'strategy', 'category', ...RATES], [...r.byCategory])],
    ['by_language.csv', toCsv(['model', 'strategy', 'language', ...RATES], [...r.byLanguage])],
    ['cells.csv', toCsv(['model', 'strategy', 'language', 'category', 'n', 'accuracy', 'tp', 'tn', 'fp', 'fn', 'abstained', 'missing'], [...r.cells])],
    ['lowest_cells.csv', toCsv(['model', 'strategy', 'rank', 'ties', 'language', 'category', 'n', 'accuracy', 'fp', 'fn', 'fp_share', 'dominant_error', 'abstained', 'missing'], [...r.lowestCells])],
    ['checkpoints.csv', toCsv(['model', 'strategy', 'target', 'n', 'n_positive', 'tp', 'fp', 'fn', 'tn', 'abstained', 'missing', 'precision', 'recall', 'f1'], [...r.checkpoints])],
    ['step1_agreement.csv', toCsv(['model', 'language', 'facet', 'n', 'agree', 'agreement', 'invalid', 'missing', 'first_read_as_second', 'second_read_as_first'], [...r.step1Agreement])],
  ];
}
