import { makeJudgeItem, needsJudge, parseJudgeOutput, readOpening, readOpeningPlus } from './read/index.js';
import type { LoadedBattery, RuleReading } from '../../design/battery.js';
import type { Campaign } from '../../design/campaign.js';
import { expandFar6, loadConceptPairs, loadStories, type ConceptPair, type Far6Design } from './design/index.js';
import type { Far6Item, Language } from './types.js';
import type { PromptItem } from '../../core/types.js';
import { FAR6_PROMPT_COLUMNS } from './promptColumns.js';
import { far6Simulator } from './simulate/index.js';

/**
 * FAR-6 (seed 000 §3): the stories and concept pairs of the campaign, expanded per model and
 * language; replies read by the fixed token rule (R, and R+ for verdict openings) and, for the
 * judged strata, by the sentence judge.
 */
export async function loadFar6Battery(campaign: Campaign): Promise<LoadedBattery> {
  const d = campaign.design;
  const languages = [...d.languages];
  const allStories = await loadStories(d.stories, languages);
  const stories = d.story_limit ? allStories.slice(0, d.story_limit) : allStories;
  const pairs = loadConceptPairs(d.concept_pairs, languages);
  const design: Far6Design = { languages, forms: [...d.forms], constraints: [...d.constraints], repeats: d.repeats };
  const pairsByLanguage = new Map<Language, ConceptPair[]>();
  for (const p of pairs) pairsByLanguage.set(p.language, [...(pairsByLanguage.get(p.language) ?? []), p]);
  const sampleRate = campaign.judge?.sample_rate ?? 0;

  const far6 = (item: PromptItem): Far6Item => item as Far6Item;
  return {
    name: 'far6',
    languages,
    stories: stories.map((s) => ({ id: s.id, group: s.group })),
    prompts: FAR6_PROMPT_COLUMNS,
    simulator: far6Simulator,
    expand: (model, language) =>
      expandFar6({
        campaign: campaign.name,
        seed: campaign.seed,
        phase: 'generate',
        model,
        design: { ...design, languages: [language as Language] },
        stories,
        pairs: pairsByLanguage.get(language as Language) ?? [],
      }),
    ruleReadings(item, text) {
      const map = far6(item).extras.reading_map;
      if (map.kind === 'none') return [];
      const out: RuleReading[] = [{ reader: 'rule', ...readOpening(text, map) }];
      if (map.kind === 'verdict') out.push({ reader: 'rule+', ...readOpeningPlus(text, map, item.language as Language) });
      return out;
    },
    needsJudge: (item) => needsJudge(far6(item), campaign.seed, sampleRate),
    judgeItem: (source, reply, judge) => makeJudgeItem(far6(source), reply, judge),
    readJudge: (text) => parseJudgeOutput(text),
  };
}
