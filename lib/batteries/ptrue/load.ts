/**
 * Battery.load for P(True): reads and checks the items file, the templates and the probe tokens,
 * loads the language identifier, and builds the phases. Every problem is a CampaignFileError that
 * names the file and the field.
 */
import { isAbsolute, join } from 'node:path';
import { CampaignFileError, fromField } from '../../api/battery.js';
import type { CampaignCore, LoadedDesign } from '../../api/battery.js';
import { loadItems } from './data/loadItems.js';
import type { PtrueDesign } from './design.js';
import { ptruePhases } from './phases.js';
import type { PtruePlan } from './plan.js';
import { buildProbes } from './probe.js';
import { resolveTemplates } from './prompts/resolveTemplates.js';
import { prepareLanguageId } from './read/languageId.js';
import { parsePtrueJudgeSimulation, parsePtrueSimulation } from './simulate/config.js';
import { modelTruth, type JudgeTruth } from './simulate/truth.js';
import { PTRUE_LANGUAGES, type BaseItem } from './types.js';

/** The base items the design selects: its benchmarks, the first `item_limit` of each, in file order. */
export function selectItems(items: readonly BaseItem[], design: Pick<PtrueDesign, 'benchmarks' | 'item_limit'>, file: string): BaseItem[] {
  const known = new Set(items.map((i) => i.benchmark));
  const unknown = (design.benchmarks ?? []).filter((b) => !known.has(b));
  if (unknown.length > 0) {
    throw new CampaignFileError(`${file}: design.benchmarks: ${unknown.map((b) => `"${b}"`).join(', ')} not in the items file; it has ${[...known].join(', ')}`, [
      { file, path: 'design.benchmarks', message: `unknown benchmark(s) ${unknown.join(', ')}` },
    ]);
  }
  const counts = new Map<string, number>();
  return items.filter((i) => {
    if (design.benchmarks && !design.benchmarks.includes(i.benchmark)) return false;
    const n = (counts.get(i.benchmark) ?? 0) + 1;
    counts.set(i.benchmark, n);
    return design.item_limit === undefined || n <= design.item_limit;
  });
}

/** Builds the plan of a campaign (everything expansion needs). */
export async function loadPtruePlan(campaign: CampaignCore, design: PtrueDesign): Promise<PtruePlan> {
  const verifierLanguages = design.verifier_languages ?? design.languages;
  const itemsPath = isAbsolute(design.items) ? design.items : join(campaign.folder, design.items);
  const known = [...new Set([...PTRUE_LANGUAGES, ...design.languages, ...verifierLanguages])];
  const all = await fromField(campaign.file, 'design.items', () => loadItems(itemsPath, { languages: design.languages, known }, design.items));
  const items = selectItems(all, design, campaign.file);
  const templates = resolveTemplates(design.prompts, design.languages, verifierLanguages, campaign.file);
  const probes = buildProbes(campaign.models, design.probe, campaign.file);
  return {
    campaign: campaign.name,
    items,
    languages: design.languages,
    verifierLanguages,
    templates,
    maxTokens: design.max_tokens,
    thinking: design.thinking,
    judgeMultipleChoice: design.judge_multiple_choice,
    probes,
    hasJudge: campaign.roles.judge !== undefined,
    identify: await prepareLanguageId(),
  };
}

/** Battery.load: the plan's languages and phases. */
export async function loadPtrueDesign(campaign: CampaignCore, design: PtrueDesign): Promise<LoadedDesign> {
  const plan = await loadPtruePlan(campaign, design);
  return {
    languages: plan.languages,
    phases: ptruePhases(plan),
    simulationTruth: (models) => ({
      note: 'simulated respondents: the true parameters the generator used, per model; accuracy_read and auroc_read are what the analysis reads through the judge',
      models: models
        .filter((m) => m.provider === 'simulated')
        .map((m) => ({
          model: m.id,
          ...modelTruth(parsePtrueSimulation(m.simulation, { file: campaign.file, path: `models[${m.id}].simulation` }), campaign.seed, m.id, plan.items, plan.languages, plan.verifierLanguages, judgeTruth(campaign)),
        })),
    }),
  };
}

/** The simulated judge's flip and malformed rates, which the read accuracy of short answers includes; null for no or a real judge. */
function judgeTruth(campaign: CampaignCore): JudgeTruth {
  const judge = campaign.roles.judge;
  if (judge === undefined || judge.provider !== 'simulated') return null;
  const cfg = parsePtrueJudgeSimulation(judge.simulation, { file: campaign.file, path: 'judge.simulation' });
  return { error_rate: cfg.error_rate, malformed_rate: cfg.malformed_rate };
}
