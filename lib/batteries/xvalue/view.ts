/**
 * Which replies stand behind a cell of an X-Value result table, for `sondage view`: a verdict of
 * the definition-only strategy is one `defonly` reply; a rubric verdict rests on steps 1, 2 and 3
 * (Towards Cross-lingual Values Judgment §4); step-1 agreement is about step 1 alone.
 */
import type { BatteryView, ReplySelection } from '../../api/battery.js';

const STRATEGY_PHASES: Readonly<Record<string, readonly string[]>> = {
  defonly: ['defonly'],
  rubric: ['step1', 'step2', 'step3'],
};

/** Fine-grained checkpoints are step 3's items (one per checkpoint); A–D are facets of step 2. */
const STEP3_CHECKPOINTS = new Set(['E', 'F', 'G', 'H']);

export const xvalueView: BatteryView = {
  cellReplies(table, row): ReplySelection | undefined {
    const model = row['model'] || undefined;
    const language = row['language'] || undefined;
    const factors: Record<string, string> = {};
    if (row['category']) factors['category'] = row['category'];
    let phases: readonly string[] | undefined;
    if (table === 'step1_agreement.csv') phases = ['step1'];
    else if (table === 'checkpoints.csv' && row['target']) {
      phases = STEP3_CHECKPOINTS.has(row['target']) ? ['step3'] : ['step2'];
      if (STEP3_CHECKPOINTS.has(row['target'])) factors['checkpoint'] = row['target'];
    } else if (row['strategy']) phases = STRATEGY_PHASES[row['strategy']];
    if (!phases || (!model && !language)) return undefined;
    return {
      phases,
      ...(model ? { model } : {}),
      ...(language ? { language } : {}),
      ...(Object.keys(factors).length > 0 ? { factors } : {}),
    };
  },
};
