/**
 * Schemas of the campaign file's fields that the core and every battery share: generation
 * settings, model entries, and the helpers that make their messages say what is wrong, the bad
 * value and the fix (STYLE.md "Errors"). A battery builds its `design:` schema and its roles'
 * extras from these, so that every campaign reads and fails the same way.
 */
import { z } from 'zod';
import { looksLikeSecret } from '../core/fileText.js';
import { gpuSettingsSchema } from '../gpu/settings.js';
import { modelPriceSchema } from '../pricing/pricing.js';
import { DEFAULT_ATTEMPT_TIMEOUT_S, MAX_ATTEMPT_TIMEOUT_S } from '../providers/attemptTimeouts.js';

export const PROVIDERS = ['openai', 'anthropic', 'openai-compatible', 'bedrock', 'simulated'] as const;
export type ProviderName = (typeof PROVIDERS)[number];

const SAFE_ID = /^[a-z0-9][a-z0-9._-]*$/;
const ENV_NAME = /^[A-Za-z_][A-Za-z0-9_]*$/;

// ---- messages ------------------------------------------------------------------------------

/** A value as a message shows it: strings quoted and shortened, containers by kind. */
export function show(value: unknown): string {
  if (value === undefined) return 'nothing';
  if (value === null) return 'null';
  if (typeof value === 'string') {
    // A key pasted into the wrong field (provider: sk-…) is never quoted back, not even cut.
    if (looksLikeSecret(value)) return `text that looks like a secret (${value.length} characters, not shown)`;
    const s = JSON.stringify(value);
    return s.length > 42 ? `${s.slice(0, 40)}…"` : s;
  }
  if (typeof value === 'number' || typeof value === 'boolean') return String(value);
  if (Array.isArray(value)) return 'a list';
  if (typeof value === 'object') return 'a mapping';
  return typeof value;
}

/** `http://user:pw@host/v1` → `http://…@host/v1`: a URL as a message may show it. */
function withoutCredentials(url: string): string {
  return url.replace(/^([a-z][a-z0-9+.-]*:\/\/)[^/?#]*@/i, '$1…@');
}

const EXPECTED: Readonly<Record<string, string>> = {
  string: 'a string',
  number: 'a number',
  int: 'an integer',
  boolean: 'true or false',
  object: 'a mapping',
  record: 'a mapping',
  array: 'a list',
};

function bound(kind: 'min' | 'max', value: unknown, inclusive: boolean | undefined): string {
  if (kind === 'min') return inclusive === false ? `greater than ${String(value)}` : `at least ${String(value)}`;
  return inclusive === false ? `less than ${String(value)}` : `at most ${String(value)}`;
}

function count(n: unknown, one: string, many: string): string {
  return `${String(n)} ${n === 1 ? one : many}`;
}

/** Messages for issues whose schema gives none of its own: what was expected, what was found. */
export const genericError: z.core.$ZodErrorMap = (iss) => {
  switch (iss.code) {
    case 'invalid_type': {
      const expected = EXPECTED[iss.expected] ?? iss.expected;
      return iss.input === undefined ? `is required; expected ${expected}` : `expected ${expected}, got ${show(iss.input)}`;
    }
    case 'too_small':
      if (iss.origin === 'array') return `needs at least ${count(iss.minimum, 'entry', 'entries')}`;
      if (iss.origin === 'string')
        return iss.minimum === 1 ? 'must not be empty' : `needs at least ${count(iss.minimum, 'character', 'characters')}`;
      return `must be ${bound('min', iss.minimum, iss.inclusive)}, got ${show(iss.input)}`;
    case 'too_big':
      if (iss.origin === 'array') return `takes at most ${count(iss.maximum, 'entry', 'entries')}`;
      if (iss.origin === 'string') return `must be at most ${count(iss.maximum, 'character', 'characters')} long`;
      return `must be ${bound('max', iss.maximum, iss.inclusive)}, got ${show(iss.input)}`;
    case 'invalid_value':
      return `${show(iss.input)} is not allowed; use one of ${iss.values.map(String).join(', ')}`;
    case 'invalid_format':
      return `${show(iss.input)} is not a valid ${iss.format}`;
    case 'invalid_union':
      return `${show(iss.input)} does not fit any of the allowed forms`;
    default:
      return undefined;
  }
};

/** An enum whose message lists the allowed values and names what they are (`question form`). */
export function enumOf<const T extends readonly [string, ...string[]]>(values: T, noun: string) {
  const list = values.join(', ');
  return z.enum(values, {
    error: (iss) =>
      iss.input === undefined ? `is required; use one of ${list}` : `${show(iss.input)} is not a known ${noun}; use one of ${list}`,
  });
}

/** An id that names folders and S3 keys. */
export function safeId(example: string) {
  const rule = `lowercase letters, digits, ".", "_" and "-", starting with a letter or digit (e.g. "${example}")`;
  return z
    .string({ error: (iss) => (iss.input === undefined ? `is required; expected an id of ${rule}` : `expected an id of ${rule}, got ${show(iss.input)}`) })
    .max(64)
    .regex(SAFE_ID, { error: (iss) => `${show(iss.input)} is not a safe id; use ${rule}` });
}

/** A file path relative to the campaign file's folder. */
export function relativePath(example: string) {
  return z
    .string({ error: (iss) => (iss.input === undefined ? `is required; expected a file path such as "${example}"` : `expected a file path, got ${show(iss.input)}`) })
    .min(1)
    .meta({ description: "Relative to the campaign file's folder" });
}

// ---- the schema ----------------------------------------------------------------------------

/** GenerationSettings as the campaign file writes them (lib/core/types.ts). */
export const generationSettingsSchema = z.strictObject({
  temperature: z.number().min(0).max(2).optional(),
  top_p: z.number().min(0).max(1).optional(),
  max_tokens: z.int().min(1).optional().meta({ description: 'Output bound; the budget reserves it for every call' }),
  seed: z.int().optional(),
  stop: z.array(z.string().min(1)).optional(),
  reasoning_effort: enumOf(['none', 'minimal', 'low', 'medium', 'high'], 'reasoning effort').optional(),
  thinking: z
    .union([z.literal('off'), z.strictObject({ budget_tokens: z.int().min(1) })], {
      error: (iss) => `expected "off" or { budget_tokens: <integer ≥ 1> }, got ${show(iss.input)}`,
    })
    .optional(),
  logprobs: z.boolean().optional(),
  top_logprobs: z.int().min(0).max(20).optional(),
  candidate_logprobs: z
    .strictObject({
      tokens: z
        .record(z.string().min(1), z.int().min(0))
        .refine((t) => Object.keys(t).length > 0, { message: 'expected at least one candidate, e.g. { " Yes": 7414, " No": 2360 }' })
        .meta({ description: 'Surface form stored on the reply → the model tokenizer\'s token id' }),
      method: enumOf(['logprob_token_ids', 'allowed_token_ids', 'prompt_logprobs'], 'candidate logprob method').default('logprob_token_ids'),
    })
    .optional()
    .meta({ description: 'vLLM (provider openai-compatible) only: first-token logprobs of these candidate tokens' }),
  chat_template_kwargs: z
    .record(z.string().min(1), z.union([z.string(), z.number(), z.boolean()]))
    .optional()
    .meta({ description: 'vLLM (provider openai-compatible) only: keyword arguments of the chat template, e.g. { enable_thinking: false }; thinking: off sends that one by itself' }),
});

/** The fields of a model entry (`models[]`, and every role such as the judge). */
export const modelShape = {
  id: safeId('alpha').meta({ description: 'Campaign-local id, used in storage paths' }),
  provider: enumOf(PROVIDERS, 'provider'),
  model: z
    .string({ error: (iss) => (iss.input === undefined ? "is required; the provider's model name, e.g. gpt-4.1-mini" : `expected the provider's model name, got ${show(iss.input)}`) })
    .min(1)
    .meta({ description: "The provider's model name" }),
  settings: generationSettingsSchema.optional().meta({ description: "Overlays the campaign's defaults" }),
  price: modelPriceSchema
    .optional()
    .meta({ description: 'List price; defaults to the bundled price table, required where it has no entry' }),
  mode: enumOf(['sync', 'batch'], 'mode').default('sync'),
  base_url: z
    .url({ protocol: /^https?$/, error: (iss) => `${show(typeof iss.input === 'string' ? withoutCredentials(iss.input) : iss.input)} is not an http(s) URL; e.g. http://localhost:8000/v1` })
    // fetch refuses a URL with credentials, and a password here would be printed and stored:
    // refused here, never echoed.
    .refine((u) => !/^[a-z][a-z0-9+.-]*:\/\/[^/?#]*@/i.test(u), {
      error: 'holds a user name or password (user:pass@host), which sondage never sends nor prints; remove them and put the key in the environment variable api_key_env names',
    })
    .optional(),
  // Never echo the value: a key pasted here by mistake must not reach a log.
  api_key_env: z
    .string({ error: 'expected the name of an environment variable such as OPENAI_API_KEY' })
    .regex(ENV_NAME, { error: 'expected the name of an environment variable such as OPENAI_API_KEY, not the key itself' })
    .optional()
    .meta({ description: 'Environment variable holding the API key' }),
  region: z
    .string({ error: 'expected an AWS region such as us-east-1' })
    .regex(/^[a-z]{2}(-[a-z]+)+-\d+$/, { error: 'expected an AWS region such as us-east-1' })
    .optional()
    .meta({ description: 'Provider bedrock only: the AWS region where the model is enabled; AWS_REGION when absent' }),
  bedrock_batch: z
    .strictObject({
      s3_uri: z
        .string()
        .regex(/^s3:\/\/[a-z0-9.-]{3,63}(\/.*)?$/, { error: 'expected s3://bucket/prefix, where the batch jobs keep their input and output JSONL' })
        .meta({ description: 'Where the jobs keep their files: s3://bucket/prefix' }),
      role_arn: z
        .string()
        .regex(/^arn:aws[a-z-]*:iam::\d{12}:role\/.+$/, { error: 'expected an IAM role ARN, arn:aws:iam::123456789012:role/…' })
        .meta({ description: 'The service role Bedrock assumes to read the input and write the output' }),
    })
    .optional()
    .meta({ description: 'Provider bedrock with mode: batch only: the S3 location and service role of its batch inference jobs' }),
  rpm: z.int().min(1).optional().meta({ description: 'Requests per minute' }),
  tpm: z.int().min(1).optional().meta({ description: 'Tokens per minute' }),
  timeout_s: z
    .number()
    .gt(0)
    // The SDK's timeout and its transport's follow this one, a little above it (lib/providers/attemptTimeouts.ts).
    .max(MAX_ATTEMPT_TIMEOUT_S)
    .optional()
    .meta({ description: `Seconds one attempt of a call may take before it is abandoned and counted as possibly billed; ${DEFAULT_ATTEMPT_TIMEOUT_S} when absent (above the OpenAI and Anthropic SDKs' own 600). On AWS the worker's deadline may end an attempt earlier` }),
  // Loose here: each battery owns its simulation schema. The campaign loader checks the block
  // with the battery's own simulator (lib/design/simulationIssues.ts), so plan refuses it too.
  simulation: z
    .record(z.string(), z.unknown())
    .optional()
    .meta({ description: "Simulated provider only; checked by the battery's simulator when the campaign is loaded" }),
  phase_settings: z
    .record(z.string(), generationSettingsSchema)
    .optional()
    .meta({ description: "Settings for one phase of the battery (e.g. P(True)'s verify), over the entry's settings" }),
  runs_on: enumOf(['lambda', 'gpu'], 'place to run')
    .default('lambda')
    .meta({ description: 'On AWS: called from the Lambda worker (an API), or served by vLLM in an AWS Batch GPU job (gpu: …)' }),
  gpu: gpuSettingsSchema.optional(),
};

export const modelEntrySchema = z.strictObject(modelShape);

/**
 * A list whose entries must differ: a repeated entry is reported at its own index, naming it
 * (`"en" is listed twice; list each language once`). `uniqueItems` tells editors the same.
 */
export function uniqueList<T extends z.ZodType<string>>(item: T, noun: string) {
  return z
    .array(item)
    .meta({ uniqueItems: true })
    .superRefine((list, ctx) => {
      list.forEach((value, i) => {
        if (list.indexOf(value) < i) ctx.addIssue({ code: 'custom', path: [i], message: `"${value}" is listed twice; list each ${noun} once`, input: value });
      });
    });
}
