import { cachedCanonicalJson, columnDefs } from '../../api/battery.js';
import type { PromptColumns } from '../../api/battery.js';
import type { Far6Item } from './types.js';

/**
 * FAR-6's columns of the prompts table (Same Judgment, Different Yes §3): the nine design factors, then the reading
 * map (JSON) and the two proposition sentences that the readers and the analysis use.
 */
export const FAR6_PROMPT_COLUMNS: PromptColumns = {
  factors: columnDefs({
    story: ['VARCHAR'],
    story_group: ['VARCHAR'],
    concept_pair: ['VARCHAR'],
    form: ['VARCHAR'],
    constraint: ['VARCHAR'],
    named: ['VARCHAR'],
    option_order: ['INTEGER'],
    repeat: ['INTEGER'],
    construction: ['VARCHAR'],
  }),
  extras: columnDefs({ reading_map_json: ['VARCHAR'], prop_p: ['VARCHAR'], prop_notp: ['VARCHAR'] }),
  extraRow(item) {
    const { reading_map, propositions } = (item as Far6Item).extras;
    return { reading_map_json: cachedCanonicalJson(reading_map), prop_p: propositions.P, prop_notp: propositions.notP };
  },
};
