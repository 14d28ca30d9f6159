/**
 * The campaign file: one zod schema, and the parser that applies its defaults, resolves its paths
 * and prices, and reports every problem at once (STYLE.md "Configuration").
 */
import path from 'node:path';
import { z } from 'zod';
import { CampaignFileError, formatIssues } from '../errors.js';
import type { FileIssue } from '../errors.js';
import { modelPriceSchema, PRICE_TABLE, priceFor } from '../pricing/pricing.js';
import type { ModelPrice } from '../pricing/pricing.js';
import { mergeSettings } from '../core/settings.js';
import type { GenerationSettings } from '../core/types.js';
import { ANSWER_CONSTRAINTS, LANGUAGES, QUESTION_FORMS } from '../batteries/far6/types.js';
import type { AnswerConstraint, Language, QuestionForm } from '../batteries/far6/types.js';

export const PROVIDERS = ['openai', 'anthropic', 'openai-compatible', 'simulated'] as const;
export type ProviderName = (typeof PROVIDERS)[number];

export const BATTERIES = ['far6'] as const;
export type Battery = (typeof BATTERIES)[number];
const PLANNED_BATTERIES: readonly string[] = ['xvalue', 'ptrue'];

/** Providers with a batch API at a discount; `mode: batch` is refused elsewhere. */
const BATCH_PROVIDERS: readonly ProviderName[] = ['openai', 'anthropic'];
const DEFAULT_API_KEY_ENV: Partial<Record<ProviderName, string>> = {
  openai: 'OPENAI_API_KEY',
  anthropic: 'ANTHROPIC_API_KEY',
};

/**
 * The lowest layer of generation settings, under the campaign's `defaults` and each model's
 * `settings`. Only `max_tokens` has one: the budget reserves prompt + max_tokens before every call,
 * so every model needs a bound; FAR-6 asks for one sentence, which 256 tokens covers.
 */
export const DEFAULT_GENERATION_SETTINGS: GenerationSettings = { max_tokens: 256 };
/** Where replies and results go when the campaign names no `data_dir`: `data` under the cwd. */
export const DEFAULT_DATA_DIR = 'data';

const SAFE_ID = /^[a-z0-9][a-z0-9._-]*$/;
const ENV_NAME = /^[A-Za-z_][A-Za-z0-9_]*$/;

export interface Far6Design {
  /** Absolute path of the stories file. */
  readonly stories: string;
  /** Absolute path of the concept-pairs file. */
  readonly concept_pairs: string;
  readonly languages: readonly Language[];
  readonly forms: readonly QuestionForm[];
  readonly constraints: readonly AnswerConstraint[];
  /** `fraction` of the prompts get `count` independent generations (seed 000 "Generation settings"). */
  readonly repeats: { readonly count: number; readonly fraction: number };
  /** Only the first N stories, for quick runs. */
  readonly story_limit?: number;
}

export interface ModelEntry {
  /** Campaign-local id, used in storage paths and on every PromptItem. */
  readonly id: string;
  readonly provider: ProviderName;
  /** The provider's own model name. */
  readonly model: string;
  /** Resolved: DEFAULT_GENERATION_SETTINGS < campaign `defaults` < the entry's `settings`. */
  readonly settings: GenerationSettings;
  readonly price: ModelPrice;
  /** `table` when the price came from lib/providers/prices.json (version in `Campaign.price_table`). */
  readonly price_source: 'campaign' | 'table';
  readonly mode: 'sync' | 'batch';
  readonly base_url?: string;
  /** Name of the environment variable holding the API key; never the key itself. */
  readonly api_key_env?: string;
  readonly rpm?: number;
  readonly tpm?: number;
  /** Simulated provider only: passed through here, validated by the simulator when the run starts. */
  readonly simulation?: Readonly<Record<string, unknown>>;
}

/** The sentence judge (seed 000 "Sentence judging"). */
export interface JudgeEntry extends ModelEntry {
  /**
   * Share of the yes/no-first replies to the alternative and or-not questions and of the
   * label replies that are judged; free, verdict and plain/negint yes/no replies are always judged
   * (seed 000 "Judged coverage").
   */
  readonly sample_rate: number;
  /** The judge audit (seed 000 "Sentence judging"); absent when the campaign asks for none. */
  readonly audit?: JudgeAudit;
}

/**
 * Seed 000 "Sentence judging": a seeded sample of judged replies, stratified by model × language ×
 * answer constraint, re-judged by a second judge model and by the same judge again (test–retest).
 */
export interface JudgeAudit {
  /** Replies drawn per stratum (fewer where the stratum holds fewer judged replies). */
  readonly per_stratum: number;
  /** Seed of the draw: the campaign's seed unless the file names one. */
  readonly seed: number;
  /** Whether the primary judge reads the sample a second time. */
  readonly retest: boolean;
  /** The second judge model; resolved like a models[] entry (settings over the campaign defaults). */
  readonly second_judge?: ModelEntry;
}

/** Seed 000 "Sentence judging": 4,590 audited replies over 153 strata, 30 per stratum. */
export const DEFAULT_AUDIT_PER_STRATUM = 30;

export interface Campaign {
  /** Absolute path of the campaign file. */
  readonly file: string;
  readonly name: string;
  readonly description?: string;
  readonly seed: number;
  readonly budget_usd: number;
  /** Absolute. */
  readonly data_dir: string;
  readonly concurrency: number;
  readonly battery: Battery;
  readonly design: Far6Design;
  /** The campaign's `defaults` over DEFAULT_GENERATION_SETTINGS. */
  readonly defaults: GenerationSettings;
  readonly models: readonly ModelEntry[];
  readonly judge: JudgeEntry;
  /** Version of the price table the table prices came from. */
  readonly price_table: string;
}

/** A FileIssue plus where it sits in the document, so a loader can add the YAML line. */
export interface CampaignIssue extends FileIssue {
  readonly segments: readonly (string | number)[];
}

export type CampaignCheck =
  | { readonly ok: true; readonly campaign: Campaign }
  | { readonly ok: false; readonly issues: readonly CampaignIssue[] };

export interface ParseCampaignOptions {
  /** Folder that `file` and the default data_dir are relative to; process.cwd() by default. */
  readonly cwd?: string;
}

// ---- messages ------------------------------------------------------------------------------

/** A value as a message shows it: strings quoted and shortened, containers by kind. */
function show(value: unknown): string {
  if (value === undefined) return 'nothing';
  if (value === null) return 'null';
  if (typeof value === 'string') {
    const s = JSON.stringify(value);
    return s.length > 42 ? `${s.slice(0, 40)}…"` : s;
  }
  if (typeof value === 'number' || typeof value === 'boolean') return String(value);
  if (Array.isArray(value)) return 'a list';
  if (typeof value === 'object') return 'a mapping';
  return typeof value;
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
const genericError: z.core.$ZodErrorMap = (iss) => {
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

function enumOf<const T extends readonly [string, ...string[]]>(values: T, noun: string) {
  const list = values.join(', ');
  return z.enum(values, {
    error: (iss) =>
      iss.input === undefined ? `is required; use one of ${list}` : `${show(iss.input)} is not a known ${noun}; use one of ${list}`,
  });
}

function safeId(example: string) {
  const rule = `lowercase letters, digits, ".", "_" and "-", starting with a letter or digit (e.g. "${example}")`;
  return z
    .string({ error: (iss) => (iss.input === undefined ? `is required; expected an id of ${rule}` : `expected an id of ${rule}, got ${show(iss.input)}`) })
    .max(64)
    .regex(SAFE_ID, { error: (iss) => `${show(iss.input)} is not a safe id; use ${rule}` });
}

function relativePath(example: string) {
  return z
    .string({ error: (iss) => (iss.input === undefined ? `is required; expected a file path such as "${example}"` : `expected a file path, got ${show(iss.input)}`) })
    .min(1)
    .meta({ description: "Relative to the campaign file's folder" });
}

// ---- the schema ----------------------------------------------------------------------------

/** GenerationSettings as the campaign file writes them (lib/design/types.ts). */
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
});

const modelShape = {
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
    .url({ protocol: /^https?$/, error: (iss) => `${show(iss.input)} is not an http(s) URL; e.g. http://localhost:8000/v1` })
    .optional(),
  // Never echo the value: a key pasted here by mistake must not reach a log.
  api_key_env: z
    .string({ error: 'expected the name of an environment variable such as OPENAI_API_KEY' })
    .regex(ENV_NAME, { error: 'expected the name of an environment variable such as OPENAI_API_KEY, not the key itself' })
    .optional()
    .meta({ description: 'Environment variable holding the API key' }),
  rpm: z.int().min(1).optional().meta({ description: 'Requests per minute' }),
  tpm: z.int().min(1).optional().meta({ description: 'Tokens per minute' }),
  // Loose on purpose: the simulated provider owns its configuration schema and checks it when a
  // run builds the provider; the parser only makes sure it is a mapping on a simulated model.
  simulation: z
    .record(z.string(), z.unknown())
    .optional()
    .meta({ description: 'Simulated provider only; checked by the simulator when the run starts' }),
};

const modelEntrySchema = z.strictObject(modelShape);

const judgeAuditSchema = z
  .strictObject({
    per_stratum: z
      .int()
      .min(1)
      .max(1_000_000)
      .default(DEFAULT_AUDIT_PER_STRATUM)
      .meta({ description: 'Judged replies drawn per stratum (model × language × answer constraint)' }),
    seed: z
      .int()
      .min(0)
      .max(2 ** 32 - 1)
      .optional()
      .meta({ description: "Seed of the sample; default: the campaign's seed" }),
    retest: z.boolean().default(true).meta({ description: 'The primary judge reads the sample again (test–retest)' }),
    second_judge: modelEntrySchema.optional().meta({ description: 'A second judge model that reads the same sample' }),
  })
  .meta({ description: 'Judge audit (seed 000 "Sentence judging"): a second judge and a retest on a seeded, stratified sample' });

const judgeEntrySchema = z.strictObject({
  ...modelShape,
  sample_rate: z
    .number()
    .min(0)
    .max(1)
    .default(0.04)
    .meta({ description: 'Share of the other yes/no-first and label replies that are judged (seed 000 "Judged coverage")' }),
  audit: judgeAuditSchema.optional(),
});

const far6DesignSchema = z.strictObject({
  stories: relativePath('stories.yaml'),
  concept_pairs: relativePath('concept-pairs.yaml'),
  // Uniqueness is checked in crossFieldIssues (to name the repeated entry); uniqueItems tells editors.
  languages: z.array(enumOf(LANGUAGES, 'language')).min(1).meta({ uniqueItems: true }),
  forms: z
    .array(enumOf(QUESTION_FORMS, 'question form'))
    .min(1)
    .default([...QUESTION_FORMS])
    .meta({ uniqueItems: true }),
  constraints: z
    .array(enumOf(ANSWER_CONSTRAINTS, 'answer constraint'))
    .min(1)
    .default([...ANSWER_CONSTRAINTS])
    .meta({ uniqueItems: true }),
  repeats: z
    .strictObject({
      count: z.int().min(1).max(100).meta({ description: 'Generations of each repeated prompt' }),
      fraction: z.number().min(0).max(1).meta({ description: 'Share of prompts that are repeated' }),
    })
    .default({ count: 3, fraction: 0.25 }),
  story_limit: z.int().min(1).optional().meta({ description: 'Only the first N stories, for quick runs' }),
});

const ROOT_KEYS = 'name, seed, budget_usd, battery, design, models, judge';

/** The campaign file's schema. Cross-field rules (unique ids, prices, ...) live in `checkCampaign`. */
export const campaignSchema = z
  .strictObject(
    {
      name: safeId('far6-demo'),
      description: z.string().optional(),
      seed: z.int().min(0).max(2 ** 32 - 1).meta({ description: '32-bit seed of every random draw' }),
      budget_usd: z.number().gt(0).meta({ description: 'Hard spending cap in USD' }),
      data_dir: z
        .string()
        .min(1)
        .optional()
        .meta({ description: "Relative to the campaign file's folder; default: data under the working directory" }),
      concurrency: z.int().min(1).max(1024).default(16),
      battery: z.enum(BATTERIES, {
        error: (iss) =>
          typeof iss.input === 'string' && PLANNED_BATTERIES.includes(iss.input)
            ? `"${iss.input}" is not implemented yet; only far6 runs now`
            : iss.input === undefined
              ? 'is required; use far6'
              : `${show(iss.input)} is not a known battery; use far6 (xvalue and ptrue are planned)`,
      }),
      design: far6DesignSchema,
      defaults: generationSettingsSchema.optional().meta({ description: 'Generation settings for every model and the judge' }),
      models: z.array(modelEntrySchema).min(1),
      judge: judgeEntrySchema,
    },
    {
      error: (iss) =>
        iss.code !== 'invalid_type'
          ? undefined
          : iss.input == null
            ? `the file is empty; expected a campaign mapping with ${ROOT_KEYS}`
            : `expected a campaign mapping with ${ROOT_KEYS}, got ${show(iss.input)}`,
    },
  )
  .meta({ title: 'sondage campaign', description: 'A sondage measurement campaign (YAML)' });

type ParsedCampaign = z.output<typeof campaignSchema>;
type ParsedModel = z.output<typeof modelEntrySchema>;

/**
 * The JSON Schema of the campaign file, in input form (fields with defaults are optional), for
 * editors and for `sondage schema`.
 */
export function campaignJsonSchema(): Record<string, unknown> {
  return z.toJSONSchema(campaignSchema, { io: 'input', target: 'draft-2020-12' });
}

/** `campaignJsonSchema()` as the committed schema/campaign.schema.json holds it. */
export function campaignJsonSchemaText(): string {
  return `${JSON.stringify(campaignJsonSchema(), null, 2)}\n`;
}

// ---- issues --------------------------------------------------------------------------------

/** `models[2].provider` from `['models', 2, 'provider']`. */
export function formatPath(segments: readonly PropertyKey[]): string {
  let out = '';
  for (const seg of segments) {
    if (typeof seg === 'number') out += `[${seg}]`;
    else {
      const key = String(seg);
      out += /^[A-Za-z_][\w-]*$/.test(key) ? (out ? `.${key}` : key) : `[${JSON.stringify(key)}]`;
    }
  }
  return out;
}

/** Optimal string alignment distance: a swapped pair of letters counts as one edit. */
function editDistance(a: string, b: string): number {
  const d: number[][] = Array.from({ length: a.length + 1 }, (_, i) =>
    Array.from({ length: b.length + 1 }, (_, j) => (i === 0 ? j : j === 0 ? i : 0)),
  );
  const at = (i: number, j: number): number => d[i]?.[j] ?? Infinity;
  for (let i = 1; i <= a.length; i++) {
    for (let j = 1; j <= b.length; j++) {
      const cost = a[i - 1] === b[j - 1] ? 0 : 1;
      let v = Math.min(at(i - 1, j) + 1, at(i, j - 1) + 1, at(i - 1, j - 1) + cost);
      if (i > 1 && j > 1 && a[i - 1] === b[j - 2] && a[i - 2] === b[j - 1]) v = Math.min(v, at(i - 2, j - 2) + 1);
      (d[i] as number[])[j] = v;
    }
  }
  return at(a.length, b.length);
}

/** The known word closest to `word`, when it is close enough to be a likely typo. */
export function closest(word: string, known: readonly string[]): string | undefined {
  const limit = Math.max(1, Math.min(3, Math.floor(word.length / 3)));
  let best: string | undefined;
  let bestDistance = Infinity;
  for (const candidate of known) {
    const d = editDistance(word.toLowerCase(), candidate.toLowerCase());
    if (d < bestDistance) [best, bestDistance] = [candidate, d];
  }
  return bestDistance <= limit ? best : undefined;
}

interface JsonNode {
  properties?: Record<string, JsonNode>;
  items?: JsonNode;
  anyOf?: JsonNode[];
}

let inputJsonSchema: JsonNode | undefined;

/** Keys the schema allows in the mapping at `segments`, read off the JSON Schema. */
function knownKeysAt(segments: readonly PropertyKey[]): string[] {
  inputJsonSchema ??= campaignJsonSchema() as JsonNode;
  const expand = (n: JsonNode): JsonNode[] => (n.anyOf ? n.anyOf.flatMap(expand) : [n]);
  let nodes = [inputJsonSchema];
  for (const seg of segments) {
    nodes = nodes.flatMap(expand).flatMap((n) => {
      const next = typeof seg === 'number' ? n.items : n.properties?.[String(seg)];
      return next ? [next] : [];
    });
  }
  return [...new Set(nodes.flatMap(expand).flatMap((n) => Object.keys(n.properties ?? {})))];
}

function unknownKeyMessage(key: string, known: readonly string[]): string {
  const near = closest(key, known);
  if (near) return `unknown key "${key}"; did you mean "${near}"?`;
  return `unknown key "${key}"; known keys here: ${known.join(', ')}`;
}

function zodIssues(issues: readonly z.core.$ZodIssue[]): Omit<CampaignIssue, 'file'>[] {
  return issues.flatMap((iss) => {
    const segments = iss.path.filter((s): s is string | number => typeof s !== 'symbol');
    if (iss.code === 'unrecognized_keys') {
      const known = knownKeysAt(segments);
      return iss.keys.map((key) => ({
        path: formatPath(segments),
        segments: [...segments, key],
        message: unknownKeyMessage(key, known),
      }));
    }
    return [{ path: formatPath(segments), segments, message: iss.message }];
  });
}

// ---- cross-field rules ---------------------------------------------------------------------

function isRecord(v: unknown): v is Record<string, unknown> {
  return typeof v === 'object' && v !== null && !Array.isArray(v);
}

function isProvider(v: unknown): v is ProviderName {
  return typeof v === 'string' && (PROVIDERS as readonly string[]).includes(v);
}

/**
 * Rules that span fields. They read the raw document defensively, so they run (and report) next
 * to the schema's own issues instead of after them.
 */
function crossFieldIssues(raw: unknown): Omit<CampaignIssue, 'file'>[] {
  const out: Omit<CampaignIssue, 'file'>[] = [];
  const add = (segments: (string | number)[], message: string): void => {
    out.push({ path: formatPath(segments), segments, message });
  };
  if (!isRecord(raw)) return out;

  if (isRecord(raw.design)) {
    for (const [key, noun] of [
      ['languages', 'language'],
      ['forms', 'question form'],
      ['constraints', 'answer constraint'],
    ] as const) {
      const list = raw.design[key];
      if (!Array.isArray(list)) continue;
      list.forEach((value, i) => {
        if (typeof value === 'string' && list.indexOf(value) < i)
          add(['design', key, i], `"${value}" is listed twice; list each ${noun} once`);
      });
    }
  }

  const entries: { value: Record<string, unknown>; segments: (string | number)[] }[] = [];
  if (Array.isArray(raw.models)) {
    raw.models.forEach((value: unknown, i) => {
      if (isRecord(value)) entries.push({ value, segments: ['models', i] });
    });
  }
  if (isRecord(raw.judge)) {
    entries.push({ value: raw.judge, segments: ['judge'] });
    const audit = raw.judge['audit'];
    if (isRecord(audit)) {
      // The second judge is priced, checked and given its own id like every other model.
      if (isRecord(audit['second_judge'])) entries.push({ value: audit['second_judge'], segments: ['judge', 'audit', 'second_judge'] });
      if (audit['retest'] === false && audit['second_judge'] === undefined)
        add(['judge', 'audit'], 'asks for nothing: set retest: true, add a second_judge, or remove the audit block');
    }
  }

  const defaults = generationSettingsSchema.optional().safeParse(raw.defaults);
  // Entries that campaign-wide candidate_logprobs reaches but cannot serve: one issue names them all.
  const candidatesFromDefaults: string[] = [];
  const owners = new Map<string, string>();
  for (const { value: m, segments } of entries) {
    const at = (key: string): (string | number)[] => [...segments, key];
    if (typeof m.id === 'string') {
      const owner = owners.get(m.id);
      if (owner) add(at('id'), `"${m.id}" is already the id of ${owner}; give every model and the judge its own id`);
      else owners.set(m.id, formatPath(segments));
    }

    const provider = m.provider;
    if (!isProvider(provider)) continue;
    if (m.simulation !== undefined && provider !== 'simulated')
      add(at('simulation'), `only a simulated model takes simulation settings; remove it or set provider: simulated (provider is ${provider})`);
    if (provider === 'simulated') {
      for (const key of ['base_url', 'api_key_env'])
        if (m[key] !== undefined) add(at(key), `a simulated model makes no network calls; remove ${key}`);
    }
    if (provider === 'openai-compatible' && m.base_url === undefined)
      add(at('base_url'), "is required for provider openai-compatible; the server's URL, e.g. http://localhost:8000/v1");

    const ownPrice = modelPriceSchema.safeParse(m.price);
    const price =
      typeof m.model === 'string' && (m.price === undefined || ownPrice.success)
        ? priceFor({ provider, model: m.model, price: ownPrice.data })
        : undefined;
    if (m.price === undefined && typeof m.model === 'string' && !price)
      add(
        at('price'),
        `no list price is known for ${provider}/${m.model} (price table ${PRICE_TABLE.version}); add price: { input_per_mtok: …, output_per_mtok: … }`,
      );

    if (m.mode === 'batch') {
      if (!BATCH_PROVIDERS.includes(provider))
        add(at('mode'), `batch needs a provider with a batch API (${BATCH_PROVIDERS.join(', ')}); use sync for ${provider}`);
      else if (price && price.batch_discount === undefined)
        add(at('price'), 'has no batch_discount, which batch mode needs; add price.batch_discount (0.5 for most providers)');
    }

    const own = generationSettingsSchema.optional().safeParse(m.settings);
    if (defaults.success && own.success) {
      const s = mergeSettings(mergeSettings(DEFAULT_GENERATION_SETTINGS, defaults.data), own.data);
      // candidate_logprobs is carried by vLLM's extra body fields; any other provider would fail on
      // every call, so refuse it here, where the file and the path can still be named.
      if (s.candidate_logprobs !== undefined && provider !== 'openai-compatible') {
        if (own.data?.candidate_logprobs !== undefined)
          add(
            [...segments, 'settings', 'candidate_logprobs'],
            `only openai-compatible endpoints (vLLM) take candidate_logprobs; remove it, or serve the model with vLLM as provider openai-compatible (provider is ${provider})`,
          );
        else candidatesFromDefaults.push(`${formatPath(segments)} (${provider})`);
      }
      // Anthropic counts thinking inside max_tokens and refuses a budget that leaves no room.
      if (typeof s.thinking === 'object' && s.max_tokens !== undefined && s.thinking.budget_tokens >= s.max_tokens)
        add(
          at('settings'),
          `thinking.budget_tokens (${s.thinking.budget_tokens}) must be below max_tokens (${s.max_tokens}); raise max_tokens`,
        );
    }
  }
  if (candidatesFromDefaults.length > 0)
    add(
      ['defaults', 'candidate_logprobs'],
      `reaches ${candidatesFromDefaults.join(', ')}, but only openai-compatible endpoints (vLLM) take candidate_logprobs; set it in the settings of the openai-compatible models instead`,
    );
  return out;
}

// ---- the parser ----------------------------------------------------------------------------

function compact<T extends object>(value: T): T {
  return Object.fromEntries(Object.entries(value).filter(([, v]) => v !== undefined)) as T;
}

function buildCampaign(data: ParsedCampaign, file: string, cwd: string): Campaign {
  const absFile = path.resolve(cwd, file);
  const folder = path.dirname(absFile);
  const defaults = mergeSettings(DEFAULT_GENERATION_SETTINGS, data.defaults);

  const entry = (m: ParsedModel): ModelEntry => {
    const price = priceFor(m);
    // checkCampaign reports a missing price before building.
    if (!price) throw new Error(`unreachable: no price for ${m.provider}/${m.model}`);
    return compact({
      id: m.id,
      provider: m.provider,
      model: m.model,
      settings: mergeSettings(defaults, m.settings),
      price: { ...price },
      price_source: m.price ? 'campaign' : 'table',
      mode: m.mode,
      base_url: m.base_url,
      api_key_env: m.api_key_env ?? DEFAULT_API_KEY_ENV[m.provider],
      rpm: m.rpm,
      tpm: m.tpm,
      simulation: m.simulation,
    });
  };

  const d = data.design;
  return compact({
    file: absFile,
    name: data.name,
    description: data.description,
    seed: data.seed,
    budget_usd: data.budget_usd,
    data_dir: data.data_dir === undefined ? path.resolve(cwd, DEFAULT_DATA_DIR) : path.resolve(folder, data.data_dir),
    concurrency: data.concurrency,
    battery: data.battery,
    design: compact({
      stories: path.resolve(folder, d.stories),
      concept_pairs: path.resolve(folder, d.concept_pairs),
      languages: d.languages,
      forms: d.forms,
      constraints: d.constraints,
      repeats: d.repeats,
      story_limit: d.story_limit,
    }),
    defaults,
    models: data.models.map(entry),
    judge: compact({
      ...entry(data.judge),
      sample_rate: data.judge.sample_rate,
      audit: data.judge.audit
        ? compact({
            per_stratum: data.judge.audit.per_stratum,
            seed: data.judge.audit.seed ?? data.seed,
            retest: data.judge.audit.retest,
            second_judge: data.judge.audit.second_judge ? entry(data.judge.audit.second_judge) : undefined,
          })
        : undefined,
    }),
    price_table: PRICE_TABLE.version,
  });
}

/**
 * Checks a parsed campaign document and, when it is sound, builds the Campaign. Every issue is
 * returned, schema and cross-field alike; `loadCampaign` uses the segments to add YAML lines.
 */
export function checkCampaign(raw: unknown, file: string, options: ParseCampaignOptions = {}): CampaignCheck {
  const cwd = options.cwd ?? process.cwd();
  const parsed = campaignSchema.safeParse(raw, { error: genericError });
  const found = [...(parsed.success ? [] : zodIssues(parsed.error.issues)), ...crossFieldIssues(raw)];
  if (found.length > 0 || !parsed.success) {
    const seen = new Set<string>();
    const issues = found
      .map((i) => ({ ...i, file }))
      .filter((i) => {
        const key = `${i.path}\u0000${i.message}`;
        return seen.has(key) ? false : (seen.add(key), true);
      });
    return { ok: false, issues };
  }
  return { ok: true, campaign: buildCampaign(parsed.data, file, cwd) };
}

/**
 * Parses a campaign document (already read from YAML) into a Campaign with defaults applied,
 * paths made absolute and prices resolved. Throws one CampaignFileError listing every issue.
 * @example parseCampaign(YAML.parse(text), 'demo.yaml').models[0]?.settings.max_tokens
 */
export function parseCampaign(raw: unknown, file: string, options: ParseCampaignOptions = {}): Campaign {
  const result = checkCampaign(raw, file, options);
  if (!result.ok) throw new CampaignFileError(formatIssues(result.issues), result.issues);
  return result.campaign;
}
