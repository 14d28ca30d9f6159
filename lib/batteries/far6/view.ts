/**
 * Which replies stand behind a cell of a FAR-6 result table, for `sondage view`: the subject's
 * replies of `generate`, narrowed by the row's model, language and factors, and by the readout
 * (`form/constraint/reader`) where the row names one.
 */
import type { BatteryView, ReplySelection } from '../../api/battery.js';

/** Result columns that are prompt columns of `generate` under the same name. */
const FACTORS = ['story', 'story_group', 'concept_pair', 'form', 'constraint', 'construction'] as const;

/** Clicked columns that count replies of one label (cell_summary.csv: `n_p`, the P verdicts). */
const LABEL_COLUMNS: Readonly<Record<string, string>> = { n_p: 'P' };

/** Clicked columns that count replies on which two readers disagree (reply_disagreement.csv). */
const DISAGREE_COLUMNS = new Set(['n_disagree', 'disagreement']);

export const far6View: BatteryView = {
  cellReplies(_table, row, column): ReplySelection | undefined {
    const factors: Record<string, string> = {};
    for (const f of FACTORS) if (row[f]) factors[f] = row[f];
    // A readout names form, constraint and reader: `alternative/free/judge:judge`.
    const readout = row['readout']?.split('/');
    let reader = row['reader'] || undefined;
    if (readout?.length === 3) {
      factors['form'] ??= readout[0]!;
      factors['constraint'] ??= readout[1]!;
      reader ??= readout[2];
    }
    const model = row['model'] || undefined;
    const language = row['language'] || undefined;
    // A row over every model and language (a convergence summary) has no replies of its own.
    if (!model && !language && Object.keys(factors).length === 0) return undefined;
    const label = LABEL_COLUMNS[column];
    const disagree = DISAGREE_COLUMNS.has(column);
    return {
      phases: ['generate'],
      ...(model ? { model } : {}),
      ...(language ? { language } : {}),
      ...(Object.keys(factors).length > 0 ? { factors } : {}),
      ...(reader ? { reader } : {}),
      ...(label ? { label } : {}),
      ...(disagree ? { disagree: true } : {}),
    };
  },
};
