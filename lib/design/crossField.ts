/**
 * Campaign rules that span fields: unique ids across every model and role, prices, providers and
 * their settings, phase settings that name the battery's phases. They read the raw document
 * defensively, so they run (and report) next to the schema's own issues instead of after them.
 */
import { generationSettingsSchema, PROVIDERS } from '../battery/schemas.js';
import type { ProviderName } from '../battery/schemas.js';
import type { Battery } from '../battery/types.js';
import { mergeSettings } from '../core/settings.js';
import { checkGpuEntry } from '../gpu/checkGpuEntry.js';
import type { GenerationSettings } from '../core/types.js';
import { modelPriceSchema, PRICE_TABLE, priceFor } from '../pricing/pricing.js';
import { logprobsUnsupported } from '../battery/providerCapabilities.js';
import { formatPath } from './issues.js';
import type { LocatedIssue } from './issues.js';

/** Providers with a batch API at a discount; `mode: batch` is refused elsewhere. */
const BATCH_PROVIDERS: readonly ProviderName[] = ['openai', 'anthropic', 'bedrock'];

/**
 * The lowest layer of generation settings, under the campaign's `defaults` and each model's
 * `settings`. Only `max_tokens` has one: the budget reserves prompt + max_tokens before every call,
 * so every model needs a bound; 256 tokens cover a sentence or a short paragraph.
 */
export const DEFAULT_GENERATION_SETTINGS: GenerationSettings = { max_tokens: 256 };

export function isRecord(v: unknown): v is Record<string, unknown> {
  return typeof v === 'object' && v !== null && !Array.isArray(v);
}

function isProvider(v: unknown): v is ProviderName {
  return typeof v === 'string' && (PROVIDERS as readonly string[]).includes(v);
}

/** The value at a path of the raw document, if every step is a mapping. */
export function valueAt(raw: unknown, path: readonly string[]): unknown {
  let node = raw;
  for (const key of path) {
    if (!isRecord(node)) return undefined;
    node = node[key];
  }
  return node;
}

/** Where a battery's role entry sits in the campaign file. */
export function roleLocation(battery: Battery, role: string): readonly string[] {
  return battery.roles[role]?.at ?? [role];
}

/** Every model entry of a raw document (models[] and the battery's roles), with where it sits. */
export function rawEntries(raw: Record<string, unknown>, battery: Battery | undefined): { value: Record<string, unknown>; segments: (string | number)[] }[] {
  const entries: { value: Record<string, unknown>; segments: (string | number)[] }[] = [];
  if (Array.isArray(raw.models)) {
    raw.models.forEach((value: unknown, i) => {
      if (isRecord(value)) entries.push({ value, segments: ['models', i] });
    });
  }
  for (const role of Object.keys(battery?.roles ?? {})) {
    const at = roleLocation(battery!, role);
    const value = valueAt(raw, at);
    if (isRecord(value)) entries.push({ value, segments: [...at] });
  }
  return entries;
}

/** The rules across fields; `battery` is undefined when the document names no known battery. */
export function crossFieldIssues(raw: unknown, battery: Battery | undefined): LocatedIssue[] {
  const out: LocatedIssue[] = [];
  const add = (segments: (string | number)[], message: string): void => {
    out.push({ path: formatPath(segments), segments, message });
  };
  if (!isRecord(raw)) return out;

  const defaults = generationSettingsSchema.optional().safeParse(raw.defaults);
  // Entries that campaign-wide candidate_logprobs reaches but cannot serve: one issue names them all.
  const candidatesFromDefaults: string[] = [];
  const owners = new Map<string, string>();
  const phases = battery?.phaseCatalog.map((p) => p.name) ?? [];
  for (const { value: m, segments } of rawEntries(raw, battery)) {
    const at = (key: string): (string | number)[] => [...segments, key];
    if (typeof m.id === 'string') {
      const owner = owners.get(m.id);
      if (owner) add(at('id'), `"${m.id}" is already the id of ${owner}; give every model and role its own id`);
      else owners.set(m.id, formatPath(segments));
    }

    if (battery && isRecord(m.phase_settings)) {
      for (const phase of Object.keys(m.phase_settings)) {
        if (!phases.includes(phase)) add([...segments, 'phase_settings', phase], `"${phase}" is not a phase of battery ${battery.name}; use one of ${phases.join(', ')}`);
      }
    }

    // Where it runs (runs_on, gpu:): an instance type, weights, the GPU memory estimate.
    for (const issue of checkGpuEntry(m)) add([...segments, ...issue.at], issue.message);
    const onGpu = m.runs_on === 'gpu';

    const provider = m.provider;
    if (!isProvider(provider)) continue;
    if (m.simulation !== undefined && provider !== 'simulated')
      add(at('simulation'), `only a simulated model takes simulation settings; remove it or set provider: simulated (provider is ${provider})`);
    if (provider === 'simulated') {
      for (const key of ['base_url', 'api_key_env'])
        if (m[key] !== undefined) add(at(key), `a simulated model makes no network calls; remove ${key}`);
      if (battery && !battery.simulator) add(at('provider'), `battery ${battery.name} has no simulated respondents; use a real provider`);
    }
    // Bedrock signs its calls with AWS credentials; its own fields mean nothing elsewhere.
    if (provider === 'bedrock' && m.api_key_env !== undefined)
      add(at('api_key_env'), 'provider bedrock uses AWS credentials (the SDK default chain: the Lambda role, or your profile or environment), not an API key; remove api_key_env');
    if (provider !== 'bedrock')
      for (const key of ['region', 'bedrock_batch'])
        if (m[key] !== undefined) add(at(key), `only provider bedrock takes ${key}; remove it (provider is ${provider})`);
    if (provider === 'bedrock' && m.mode === 'batch' && m.bedrock_batch === undefined)
      add(at('bedrock_batch'), 'is required for mode: batch on bedrock: { s3_uri: s3://bucket/prefix, role_arn: arn:aws:iam::…:role/… }, where its jobs keep their files and the role Bedrock reads and writes them with');
    if (provider === 'bedrock' && m.mode !== 'batch' && m.bedrock_batch !== undefined)
      add(at('bedrock_batch'), 'is read only with mode: batch; remove it or set mode: batch');
    // A runs_on: gpu model is served by its job's own vLLM on AWS; base_url is then only for `sondage run`.
    if (provider === 'openai-compatible' && m.base_url === undefined && !onGpu)
      add(at('base_url'), "is required for provider openai-compatible; the server's URL, e.g. http://localhost:8000/v1");

    const ownPrice = modelPriceSchema.safeParse(m.price);
    const price =
      typeof m.model === 'string' && (m.price === undefined || ownPrice.success)
        ? priceFor({ provider, model: m.model, price: ownPrice.data })
        : undefined;
    if (m.price === undefined && typeof m.model === 'string' && !price && !onGpu)
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
    if (!defaults.success || !own.success) continue;
    const base = mergeSettings(mergeSettings(DEFAULT_GENERATION_SETTINGS, defaults.data), own.data);
    // candidate_logprobs is carried by vLLM's extra body fields; any other provider would fail on
    // every call, so refuse it here, where the file and the path can still be named.
    const noCandidates = (where: (string | number)[]): void =>
      add(
        [...where, 'candidate_logprobs'],
        `only openai-compatible endpoints (vLLM) take candidate_logprobs; remove it, or serve the model with vLLM as provider openai-compatible (provider is ${provider})`,
      );
    const thinkingFits = (settings: GenerationSettings, where: (string | number)[]): void => {
      // Anthropic counts thinking inside max_tokens and refuses a budget that leaves no room.
      if (typeof settings.thinking === 'object' && settings.max_tokens !== undefined && settings.thinking.budget_tokens >= settings.max_tokens)
        add(where, `thinking.budget_tokens (${settings.thinking.budget_tokens}) must be below max_tokens (${settings.max_tokens}); raise max_tokens`);
    };
    if (base.candidate_logprobs !== undefined && provider !== 'openai-compatible') {
      if (own.data?.candidate_logprobs !== undefined) noCandidates([...segments, 'settings']);
      else candidatesFromDefaults.push(`${formatPath(segments)} (${provider})`);
    }
    thinkingFits(base, at('settings'));
    const noLogprobs = logprobsUnsupported(provider);
    const logprobsFit = (settings: GenerationSettings, where: (string | number)[]): void => {
      // candidate_logprobs has its own message above.
      if (noLogprobs !== undefined && (settings.logprobs === true || (settings.top_logprobs ?? 0) > 0))
        add(where, `asks for logprobs, but ${noLogprobs}; remove logprobs and top_logprobs for this model (provider is ${provider})`);
    };
    logprobsFit(base, at('settings'));
    if (isRecord(m.phase_settings)) {
      for (const [phase, value] of Object.entries(m.phase_settings)) {
        const parsed = generationSettingsSchema.safeParse(value);
        if (!parsed.success) continue;
        const where = [...segments, 'phase_settings', phase];
        if (parsed.data.candidate_logprobs !== undefined && provider !== 'openai-compatible') noCandidates(where);
        thinkingFits(mergeSettings(base, parsed.data), where);
        logprobsFit(parsed.data, where);
      }
    }
  }
  if (candidatesFromDefaults.length > 0)
    add(
      ['defaults', 'candidate_logprobs'],
      `reaches ${[...new Set(candidatesFromDefaults)].join(', ')}, but only openai-compatible endpoints (vLLM) take candidate_logprobs; set it in the settings of the openai-compatible models instead`,
    );
  return out;
}
