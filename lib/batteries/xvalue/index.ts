/**
 * X-Value (Towards Cross-lingual Values Judgment, "X-Value: A Benchmark for Cross-lingual Value Judgments"): question–answer
 * pairs in 14 languages judged for value alignment, definition-only (§6.1) or by the two-stage
 * rubric (step 1 scope and nature, step 2 the checkpoint list, step 3 the question's quality,
 * §6.2); verdicts against the gold annotations, accuracy per language and category, checkpoint
 * metrics and step-1 agreement. README.md beside this file goes through the paper section by section.
 */
import { defineBattery } from '../../api/battery.js';
import { xvalueAnalysis } from './analysisSpec.js';
import { xvalueByo } from './byoSpec.js';
import { loadXvalueDesign, xvalueDataFiles, xvalueDesignSchema } from './design/index.js';
import type { XvalueDesign } from './design/index.js';
import { xvaluePhases } from './phases.js';
import { XVALUE_PROMPT_COLUMNS } from './promptColumns.js';
import { XVALUE_VOCABULARY } from './read/index.js';
import { xvalueSimulationTruth, xvalueSimulator } from './simulate/index.js';
import { LANGUAGES } from './types.js';
import { xvalueView } from './view.js';

export const xvalue = defineBattery<XvalueDesign>({
  name: 'xvalue',
  title: 'X-Value from "Towards Cross-lingual Values Judgment": values judgment of QA pairs, definition-only and the rubric',
  languages: LANGUAGES,
  design: xvalueDesignSchema,
  roles: {},
  dataFiles: xvalueDataFiles,
  async load(campaign, design, scope) {
    const data = await loadXvalueDesign(campaign, design);
    // A partition thread keeps only its languages' pairs (at 100,000 pairs the design is most of
    // a thread's heap). Its items are the same: a partition reads only its own language's pairs.
    // The simulation truth is over every pair, so a scoped design has none (a thread never writes it).
    const scoped = scope ? { ...data, pairs: data.pairs.filter((p) => scope.languages.includes(p.language)) } : data;
    return {
      languages: data.languages,
      phases: xvaluePhases(scoped),
      warnings: data.warnings.map((w) => `${w.file}${w.path ? `: ${w.path}` : ''}: ${w.message}`),
      ...(scope ? {} : { simulationTruth: (models) => xvalueSimulationTruth(models, data.pairs, campaign.file) }),
    };
  },
  prompts: XVALUE_PROMPT_COLUMNS,
  vocabulary: XVALUE_VOCABULARY,
  phaseCatalog: [
    { name: 'defonly', answeredBy: 'subject', after: [], readers: ['parse'], description: 'definition-only prompt: the value definition and the pair, a Pass/Fail verdict (§6.1)', optional: true },
    { name: 'step1', answeredBy: 'subject', after: [], readers: ['parse'], description: 'rubric step 1: core issue, scope and nature (§4, App. J)', optional: true },
    { name: 'step3', answeredBy: 'subject', after: [], readers: ['parse'], description: 'rubric step 3: one fine-grained checkpoint E–H with the offending sentences (§4, App. J)', optional: true },
    { name: 'step2', answeredBy: 'subject', after: ['step1'], readers: ['parse'], description: "rubric step 2: holistic checkpoints A–D with the criteria of step 1's nature (§4, App. J)", optional: true },
  ],
  analysis: xvalueAnalysis,
  simulator: xvalueSimulator,
  byo: xvalueByo,
  view: xvalueView,
});
