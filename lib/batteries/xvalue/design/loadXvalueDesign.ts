/**
 * Reading what a design names — the QA pairs and the prompt overrides — and checking it against
 * the design: a language or category the design asks for that the files never hold is an error
 * naming the design field. Nothing is written; a bad file stops a run before it starts.
 */
import path from 'node:path';
import { CampaignFileError, formatIssues, fromField } from '../../../api/battery.js';
import type { FileIssue } from '../../../api/battery.js';
import { loadQaPairs } from '../data/loadQaPairs.js';
import { loadPromptSet } from '../prompts/loadPromptSet.js';
import type { PromptSet } from '../prompts/types.js';
import { LANGUAGES } from '../types.js';
import type { Language, QaPair, Strategy } from '../types.js';
import type { XvalueDesign } from './designSchema.js';

/** A design with its data read and checked: what the phases and the simulation truth are built from. */
export interface XvalueData {
  readonly languages: readonly Language[];
  readonly pairs: readonly QaPair[];
  readonly prompts: PromptSet;
  readonly strategies: readonly Strategy[];
  /** Annotations whose overall conclusion contradicts the veto (the run goes on; the core may print them). */
  readonly warnings: readonly FileIssue[];
}

/** The first `n` pairs of each language × category, in data order. */
export function firstPerCell(pairs: readonly QaPair[], n: number): QaPair[] {
  const counts = new Map<string, number>();
  return pairs.filter((p) => {
    const k = `${p.language}|${p.category}`;
    const c = counts.get(k) ?? 0;
    counts.set(k, c + 1);
    return c < n;
  });
}

/**
 * Loads the pairs and prompts of a design.
 * @example const data = await loadXvalueDesign({ file: campaign.file, folder: campaign.folder }, design)
 */
export async function loadXvalueDesign(campaign: { readonly file: string; readonly folder: string }, design: XvalueDesign): Promise<XvalueData> {
  const { pairs: all, warnings } = await fromField(campaign.file, 'design.qa_pairs', () => loadQaPairs(design.qa_pairs.map((f) => path.resolve(campaign.folder, f))));
  const issues: FileIssue[] = [];
  const categories = design.categories;
  let pairs = categories ? all.filter((p) => categories.includes(p.category)) : all;
  categories?.forEach((c, i) => {
    if (!all.some((p) => p.category === c)) issues.push({ file: campaign.file, path: `design.categories[${i}]`, message: `no QA pair is in category ${c}; the files hold ${[...new Set(all.map((p) => p.category))].join(', ') || 'no pair'}` });
  });
  const held = LANGUAGES.filter((l) => pairs.some((p) => p.language === l));
  const languages = design.languages ?? held;
  design.languages?.forEach((l, i) => {
    if (!held.includes(l)) issues.push({ file: campaign.file, path: `design.languages[${i}]`, message: `no QA pair${categories ? ' of the chosen categories' : ''} is in ${l}; the files hold ${held.join(', ') || 'no pair'}` });
  });
  if (languages.length === 0) issues.push({ file: campaign.file, path: 'design.qa_pairs', message: 'the QA files hold no pair to run' });
  if (issues.length > 0) throw new CampaignFileError(`invalid X-Value design:\n${formatIssues(issues)}`, issues);
  pairs = pairs.filter((p) => languages.includes(p.language));
  if (design.per_cell !== undefined) pairs = firstPerCell(pairs, design.per_cell);
  const prompts = await fromField(campaign.file, 'design.prompts', () => loadPromptSet(design.prompts === undefined ? undefined : path.resolve(campaign.folder, design.prompts)));
  return { languages, pairs, prompts, strategies: design.strategies, warnings };
}
