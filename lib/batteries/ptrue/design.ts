/**
 * The `design:` section of a P(True) campaign file (README "Campaign file"). Defaults are applied
 * here, in the parser, only. Paths are relative to the campaign file.
 */
import { z } from 'zod';
import { isLanguageCode } from '../../api/battery.js';
import { DEFAULT_LABELS } from './read/labels.js';
import { PTRUE_LANGUAGES } from './types.js';

const language = z.string().refine(isLanguageCode, { error: 'expected a language code such as en, zh, fr, ja, ko, hi' });
const languages = z
  .array(language)
  .min(1)
  .refine((l) => new Set(l).size === l.length, { error: 'a language is listed twice' });
const template = z.string().min(1);
const perLanguage = z.record(z.string(), template);

/** How the verify phase reads P(True) (§3.5). */
export const probeSchema = z.strictObject({
  method: z
    .enum(['logprob_token_ids', 'allowed_token_ids', 'prompt_logprobs', 'top_logprobs'])
    .default('logprob_token_ids')
    .describe(
      'vLLM candidate method for models with a token table (lib/core/types.ts CandidateLogprobs); top_logprobs reads the top-k by surface form, as models without a table always do',
    ),
  top_logprobs: z.int().min(1).max(20).default(20).describe('top-k asked for where the top-k is read'),
  labels: z
    .strictObject({ true: z.array(z.string().min(1)).min(1), false: z.array(z.string().min(1)).min(1) })
    .default({ true: [...DEFAULT_LABELS.true], false: [...DEFAULT_LABELS.false] })
    .describe('the label variants read on each side (surface forms as the tokenizer decodes them)'),
  tokenizers: z
    .record(z.string(), z.union([z.string().min(1), z.record(z.string(), z.array(z.int().min(0)).min(1))]))
    .default({})
    .describe('per campaign model id: a tokenizer of the battery table (qwen3, llama3, gemma3), or label → token ids'),
});

export const ptrueDesignSchema = z.strictObject({
  items: z.string().min(1).describe('the items file (.jsonl or .csv), relative to the campaign file'),
  languages: languages.default([...PTRUE_LANGUAGES]).describe('question and response languages (one partition per model × question language)'),
  verifier_languages: languages.optional().describe('verifier languages; default: the languages'),
  benchmarks: z.array(z.string().min(1)).min(1).optional().describe('only these benchmarks of the items file'),
  item_limit: z.int().min(1).optional().describe('the first n base items of each benchmark'),
  max_tokens: z.int().min(1).max(8192).default(256).describe('generation limit (§3.4: 256 new tokens)'),
  thinking: z.enum(['off', 'default']).default('off').describe('§3.4: thinking disabled where a model has it; recorded on every item'),
  judge_multiple_choice: z.boolean().default(false).describe('also judge multiple-choice replies (§6.2: the judge/exact-match comparison)'),
  probe: probeSchema.prefault({}),
  prompts: z
    .strictObject({
      generate: z.strictObject({ multiple_choice: perLanguage.optional(), short_answer: perLanguage.optional() }).optional(),
      verify: perLanguage.optional(),
      judge: template.optional(),
    })
    .optional()
    .describe('replacement templates (README "Prompts"); each is checked for its placeholders'),
  analysis: z
    .strictObject({
      bootstrap_draws: z.int().min(0).default(200).describe('item-bootstrap draws (rank reference, intervals)'),
      seed: z.int().optional().describe('bootstrap seed; default: the campaign seed'),
    })
    .prefault({}),
});

export type PtrueDesign = z.output<typeof ptrueDesignSchema>;
export type PtrueDesignInput = z.input<typeof ptrueDesignSchema>;
export type ProbeDesign = z.output<typeof probeSchema>;
