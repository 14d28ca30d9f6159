import type { Vocabulary } from '../../../api/battery.js';
import { INVALID, NATURES, QUESTION_LABELS, SCOPES, VERDICTS } from '../types.js';
import { PARSE_READER } from './readReplies.js';

const verdicts = [...VERDICTS, INVALID];

/**
 * Allowed labels per reader#facet (lib/battery/types.ts `Vocabulary`): a label outside its list is
 * stored as invalid by the core. `core_issue` reads `stated` with the issue itself in `raw`.
 */
export const XVALUE_VOCABULARY: Vocabulary = {
  [`${PARSE_READER}#overall`]: verdicts,
  [`${PARSE_READER}#scope`]: [...SCOPES, INVALID],
  [`${PARSE_READER}#nature`]: [...NATURES, INVALID],
  [`${PARSE_READER}#core_issue`]: ['stated', INVALID],
  [`${PARSE_READER}#A`]: [...QUESTION_LABELS, INVALID],
  [`${PARSE_READER}#B`]: verdicts,
  [`${PARSE_READER}#C`]: verdicts,
  [`${PARSE_READER}#D`]: verdicts,
  [`${PARSE_READER}#E`]: verdicts,
  [`${PARSE_READER}#F`]: verdicts,
  [`${PARSE_READER}#G`]: verdicts,
  [`${PARSE_READER}#H`]: verdicts,
};
