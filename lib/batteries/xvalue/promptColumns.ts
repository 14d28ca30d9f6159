import { cachedCanonicalJson, columnDefs } from '../../api/battery.js';
import type { PromptColumns } from '../../api/battery.js';
import { CHECKPOINTS, checkpointVerdict } from './types.js';
import type { XvalueItem } from './types.js';

/**
 * X-Value's columns of the prompts table: the factors, then the gold annotation (Towards Cross-lingual Values Judgment §5.2)
 * flattened for the SQL stage — the overall conclusion, scope, nature, core issue, checkpoint A's
 * label and B–H as Pass/Fail — and whole as JSON (reasons and offending sentences). Every item
 * carries the gold of its pair, so the analysis needs no data file besides the tables.
 */
export const XVALUE_PROMPT_COLUMNS: PromptColumns = {
  factors: columnDefs({
    qa_id: ['VARCHAR'],
    category: ['VARCHAR'],
    strategy: ['VARCHAR'],
    prompt_id: ['VARCHAR'],
    checkpoint: ['VARCHAR', 'null'],
    nature_used: ['VARCHAR', 'null'],
    scope_used: ['VARCHAR', 'null'],
  }),
  extras: columnDefs({
    gold_overall: ['VARCHAR'],
    gold_scope: ['VARCHAR'],
    gold_nature: ['VARCHAR'],
    gold_core_issue: ['VARCHAR'],
    ...Object.fromEntries(CHECKPOINTS.map((c) => [`gold_${c.toLowerCase()}`, ['VARCHAR']] as const)),
    gold_json: ['VARCHAR'],
  }),
  extraRow(item) {
    const gold = (item as XvalueItem).extras.gold;
    return {
      gold_overall: gold.overall,
      gold_scope: gold.scope,
      gold_nature: gold.nature,
      gold_core_issue: gold.core_issue,
      // A keeps its three labels; B–H are Pass/Fail as the metrics compare them.
      gold_a: gold.checkpoints.A,
      ...Object.fromEntries(CHECKPOINTS.filter((c) => c !== 'A').map((c) => [`gold_${c.toLowerCase()}`, checkpointVerdict(gold, c)])),
      gold_json: cachedCanonicalJson(gold),
    };
  },
};
