import { columnDefs } from '../../api/battery.js';
import type { PromptColumns } from '../../api/battery.js';
import type { PtrueItem } from './types.js';

/**
 * The P(True) columns of the prompts table (`ptrue_prompts`): the factors of every phase (verify
 * items fill verifier_language and label_prefix), then the extras the SQL stage and readers use.
 */
export const PTRUE_PROMPT_COLUMNS: PromptColumns = {
  factors: columnDefs({
    benchmark: ['VARCHAR'],
    kind: ['VARCHAR'],
    base_item: ['VARCHAR'],
    stratum: ['VARCHAR', 'null'],
    content_language: ['VARCHAR', 'null'],
    question_language: ['VARCHAR'],
    response_language: ['VARCHAR'],
    verifier_language: ['VARCHAR', 'null'],
    thinking: ['VARCHAR'],
    label_prefix: ['BOOLEAN', 'null'],
  }),
  extras: columnDefs({ gold_letter: ['VARCHAR', 'null'], option_count: ['INTEGER', 'null'], reference: ['VARCHAR', 'null'] }),
  extraRow(item) {
    const x = (item as PtrueItem).extras;
    return { gold_letter: x.gold_letter, option_count: x.option_count, reference: x.reference };
  },
};
