/**
 * X-Value's `design:` section of a campaign file (README.md "Campaign file"). Paths are relative
 * to the campaign file. Defaults are applied here, once (STYLE.md "Configuration").
 *
 * ```yaml
 * battery: xvalue
 * design:
 *   qa_pairs: qa-pairs.jsonl          # or a list of .jsonl / .csv files
 *   languages: [en, zh, es, ar, ja]   # default: every language the files hold
 *   categories: [P&G, G&H]            # default: all seven
 *   strategies: [defonly, rubric]     # default: both
 *   per_cell: 10                      # optional: the first N pairs of each language × category
 *   prompts: prompts-override.yaml    # optional: replaced templates (prompts/loadPromptSet.ts)
 * ```
 */
import { z } from 'zod';
import { CATEGORIES, CATEGORY_NAMES, LANGUAGES, STRATEGIES } from '../types.js';
import type { Category } from '../types.js';

const relativePath = (example: string) =>
  z
    .string({ error: (iss) => `expected a file path relative to the campaign file (e.g. ${example}), got ${JSON.stringify(iss.input) ?? 'nothing'}` })
    .min(1, `expected a file path relative to the campaign file (e.g. ${example})`);

function uniqueList<T extends z.ZodType>(item: T, what: string) {
  return z.array(item).superRefine((list, ctx) => {
    list.forEach((v, i) => {
      if (list.indexOf(v) !== i) ctx.addIssue({ code: 'custom', path: [i], message: `${what} ${JSON.stringify(v)} is listed twice` });
    });
  });
}

const language = z.enum(LANGUAGES, { error: (iss) => `unknown language ${JSON.stringify(iss.input)}; expected one of ${LANGUAGES.join(', ')} (Towards Cross-lingual Values Judgment Table 9)` });

/** Table 1: an abbreviation or a full name, stored as the abbreviation. */
const category = z.string().transform((v, ctx): Category => {
  const hit = CATEGORIES.find((c) => c === v.trim() || CATEGORY_NAMES[c].toLowerCase() === v.trim().toLowerCase());
  if (hit === undefined) {
    ctx.issues.push({ code: 'custom', input: v, message: `unknown category ${JSON.stringify(v)}; expected one of ${CATEGORIES.join(', ')} (Towards Cross-lingual Values Judgment Table 1)` });
    return z.NEVER;
  }
  return hit;
});

export const xvalueDesignSchema = z.strictObject(
  {
    qa_pairs: z
      .union([relativePath('qa-pairs.jsonl'), z.array(relativePath('qa-pairs.jsonl')).min(1)])
      .transform((v) => (typeof v === 'string' ? [v] : v))
      .meta({ description: 'Annotated QA pairs (.jsonl or .csv, README "Data format"), relative to the campaign file' }),
    languages: uniqueList(language, 'language').min(1).optional().meta({ description: 'Languages to run; default: every language the files hold' }),
    categories: uniqueList(category, 'category').min(1).optional().meta({ description: 'Issue categories to run; default: all' }),
    strategies: uniqueList(z.enum(STRATEGIES, { error: () => 'expected a strategy: defonly or rubric (Towards Cross-lingual Values Judgment §6.1)' }), 'strategy')
      .min(1)
      .default([...STRATEGIES])
      .meta({ description: 'Prompting strategies: defonly (definition-only) and rubric (the three-step chain)' }),
    per_cell: z.int().min(1).optional().meta({ description: 'Only the first N pairs of each language × category, for quick runs' }),
    prompts: relativePath('prompts.yaml').optional().meta({ description: 'A YAML file of replaced prompt templates (README "Prompts")' }),
  },
  {
    error: (iss) =>
      iss.code === 'unrecognized_keys' ? `unknown key(s) ${iss.keys.map((k) => `"${k}"`).join(', ')}; expected qa_pairs, languages, categories, strategies, per_cell, prompts` : undefined,
  },
);

/** A parsed `design:` section (paths as written, relative to the campaign file). */
export type XvalueDesign = z.output<typeof xvalueDesignSchema>;

/** The files a design names, for `start --aws` to upload. */
export function xvalueDataFiles(design: XvalueDesign): { field: string; file: string }[] {
  return [
    ...design.qa_pairs.map((file, i) => ({ field: design.qa_pairs.length === 1 ? 'design.qa_pairs' : `design.qa_pairs[${i}]`, file })),
    ...(design.prompts ? [{ field: 'design.prompts', file: design.prompts }] : []),
  ];
}
