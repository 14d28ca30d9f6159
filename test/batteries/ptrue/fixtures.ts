/** Plans and base items for the battery's tests, built in memory. */
import { buildProbes } from '../../../lib/batteries/ptrue/probe.js';
import { ptrueDesignSchema } from '../../../lib/batteries/ptrue/design.js';
import type { PtruePlan } from '../../../lib/batteries/ptrue/plan.js';
import { resolveTemplates } from '../../../lib/batteries/ptrue/prompts/index.js';
import { prepareLanguageId } from '../../../lib/batteries/ptrue/read/languageId.js';
import { PTRUE_LANGUAGES, type BaseItem } from '../../../lib/batteries/ptrue/types.js';

export const SIX = [...PTRUE_LANGUAGES];

/** An invented name per language, in its script, so the language identifier can place the reply. */
const NAMES: Record<string, (i: number) => string> = {
  en: (i) => `Zorblat Hill ${i}`,
  zh: (i) => `佐布拉特山${i}号`,
  fr: (i) => `la colline de Zorblate ${i}`,
  ja: (i) => `ゾルブラット山${i}号`,
  ko: (i) => `조르블랏 언덕 ${i}호`,
  hi: (i) => `ज़ोरब्लैट पहाड़ी ${i}`,
};

/** `n` synthetic base items: half multiple choice (4 options), half short answer with a content language. */
export function syntheticItems(n: number): BaseItem[] {
  return Array.from({ length: n }, (_, i) => {
    const question = Object.fromEntries(SIX.map((l) => [l, `Q${i} (${l})?`]));
    if (i % 2 === 0) {
      const options = Object.fromEntries(SIX.map((l) => [l, [1, 2, 3, 4].map((k) => NAMES[l]!(i * 10 + k))]));
      return { id: `mc-${i}`, benchmark: 'mc', kind: 'multiple_choice', question, options, answerLetter: 'ABCD'[i % 4]!, answers: {}, aliases: [], subject: `s${i % 3}`, contentLanguage: null };
    }
    return {
      id: `sa-${i}`,
      benchmark: 'sa',
      kind: 'short_answer',
      question,
      options: null,
      answerLetter: null,
      answers: Object.fromEntries(SIX.map((l) => [l, NAMES[l]!(i)])),
      aliases: [],
      subject: null,
      contentLanguage: SIX[i % 6]!,
    };
  });
}

/** A plan over the given items, six languages, simulated models `models`, with a judge. */
export async function testPlan(items: readonly BaseItem[], models: readonly string[], options: { readonly judge?: boolean; readonly verifier?: readonly string[] } = {}): Promise<PtruePlan> {
  const design = ptrueDesignSchema.parse({ items: 'x.jsonl' });
  const verifierLanguages = options.verifier ?? SIX;
  return {
    campaign: 'test',
    items,
    languages: SIX,
    verifierLanguages,
    templates: resolveTemplates(undefined, SIX, verifierLanguages, 'test.yaml'),
    maxTokens: 256,
    thinking: 'off',
    judgeMultipleChoice: false,
    probes: buildProbes(models.map((id) => ({ id, provider: 'simulated', model: id, settings: {} })), design.probe, 'test.yaml'),
    hasJudge: options.judge ?? true,
    identify: await prepareLanguageId(),
  };
}
