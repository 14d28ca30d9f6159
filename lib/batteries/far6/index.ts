/**
 * FAR-6 ("Same Judgment, Different Yes"): moral vignettes asked as polar, negative,
 * alternative and or-not questions under four answer constraints, in six languages; every reply
 * read by a fixed token rule and, for the judged strata, by a sentence judge; judgment profiles,
 * readout convergence, model identity, answer habits and polarity shares. README.md beside this
 * file goes through the paper section by section.
 */
import { defineBattery } from '../../api/battery.js';
import { far6Analysis } from './analysisSpec.js';
import { far6Byo } from './byoSpec.js';
import { far6DataFiles, far6DesignSchema, FAR6_ROLES, loadFar6Data } from './design.js';
import type { Far6DesignSpec } from './design.js';
import { far6Phases } from './phases.js';
import { FAR6_PROMPT_COLUMNS } from './promptColumns.js';
import { far6Simulator, simulationTruth } from './simulate/index.js';
import { LANGUAGES, READING_LABELS } from './types.js';
import { far6View } from './view.js';

export const far6 = defineBattery<Far6DesignSpec>({
  name: 'far6',
  title: 'FAR-6 from "Same Judgment, Different Yes": moral judgments read by a token rule and a sentence judge',
  languages: LANGUAGES,
  design: far6DesignSchema,
  roles: FAR6_ROLES,
  dataFiles: far6DataFiles,
  async load(campaign, design) {
    const data = await loadFar6Data(campaign, design);
    return {
      languages: data.languages,
      phases: far6Phases(campaign, data),
      simulationTruth: (models) => ({
        note: 'simulated respondents: the true parameters the generator used',
        models: models.map((m) =>
          simulationTruth({
            seed: campaign.seed,
            model: { id: m.id, simulation: m.simulation },
            stories: data.stories.map((s) => ({ id: s.id, group: s.group })),
            languages: data.languages,
          }),
        ),
      }),
    };
  },
  prompts: FAR6_PROMPT_COLUMNS,
  vocabulary: { rule: READING_LABELS, 'rule+': READING_LABELS, 'judge:*': READING_LABELS },
  phaseCatalog: [
    { name: 'generate', answeredBy: 'subject', after: [], readers: ['rule', 'rule+'], description: 'the vignette as a polar, negative, alternative or or-not question under an answer constraint (§3); read by the fixed token rule R and its extension R+ (§3, App. A11)' },
    { name: 'judge', answeredBy: { role: 'judge' }, after: ['generate'], readers: ['judge:*'], description: 'the sentence judge reads the proposition each judged reply asserts (§3); its readings are stored with generate' },
    { name: 'audit-second', answeredBy: { role: 'second_judge' }, after: ['generate', 'judge'], readers: ['judge:*'], description: 'a stratified sample of judged replies read by a second judge ("Sentence judging")', optional: true },
    { name: 'audit-retest', answeredBy: { role: 'judge' }, after: ['generate', 'judge'], readers: ['judge:*'], description: 'the same sample read again by the judge (test–retest)', optional: true },
  ],
  analysis: far6Analysis,
  simulator: far6Simulator,
  byo: far6Byo,
  view: far6View,
});
