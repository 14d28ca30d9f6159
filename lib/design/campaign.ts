/**
 * The campaign file: the core's fields (name, seed, budget, models, …) and the battery's (its
 * `design:` section and its roles, such as FAR-6's judge), one schema per battery, and the parser
 * that applies their defaults, resolves paths and prices, and reports every problem at once
 * (STYLE.md "Configuration").
 */
import path from 'node:path';
import { z } from 'zod';
import { CampaignFileError, formatIssues } from '../errors.js';
import { kindOf } from '../core/fileText.js';
import { enumOf, generationSettingsSchema, genericError, modelEntrySchema, modelShape, safeId, show } from '../battery/schemas.js';
import type { ProviderName } from '../battery/schemas.js';
import type { Battery, CampaignCore, ModelRef } from '../battery/types.js';
import { allBatteries, batteryNamed, batteryNames, builtInBatteries } from '../batteries/index.js';
import type { BatterySource } from '../batteries/external.js';
import { mergeSettings } from '../core/settings.js';
import type { GpuSettings } from '../gpu/settings.js';
import type { GenerationSettings } from '../core/types.js';
import { PRICE_TABLE, priceFor } from '../pricing/pricing.js';
import type { ModelPrice } from '../pricing/pricing.js';
import { crossFieldIssues, DEFAULT_GENERATION_SETTINGS, isRecord, roleLocation, valueAt } from './crossField.js';
import { zodIssues } from './issues.js';
import { simulationIssues } from './simulationIssues.js';
import type { CampaignIssue, LocatedIssue } from './issues.js';

export { PROVIDERS } from '../battery/schemas.js';
export type { ProviderName } from '../battery/schemas.js';
export { closest, formatPath } from './issues.js';
export type { CampaignIssue } from './issues.js';
export { DEFAULT_GENERATION_SETTINGS } from './crossField.js';

const DEFAULT_API_KEY_ENV: Partial<Record<ProviderName, string>> = {
  openai: 'OPENAI_API_KEY',
  anthropic: 'ANTHROPIC_API_KEY',
};

/** Where replies and results go when the campaign names no `data_dir`: `data` under the cwd. */
export const DEFAULT_DATA_DIR = 'data';

export interface ModelEntry extends ModelRef {
  readonly provider: ProviderName;
  /** Resolved: DEFAULT_GENERATION_SETTINGS < campaign `defaults` < the entry's `settings`. */
  readonly settings: GenerationSettings;
  /** The entry's own `settings` as written (the layer above a phase's own settings). */
  readonly own_settings: GenerationSettings;
  /** Per phase of the battery: settings over everything else (`phase_settings.verify`). */
  readonly phase_settings?: Readonly<Record<string, GenerationSettings>>;
  readonly price: ModelPrice;
  /**
   * `table` when the price came from lib/pricing/prices.json (version in `Campaign.price_table`);
   * `gpu` for a runs_on: gpu model, whose `price` is a zero placeholder: it is charged per prompt
   * for its GPU hours, per phase (lib/run/context.ts `priceIn`).
   */
  readonly price_source: 'campaign' | 'table' | 'gpu';
  readonly mode: 'sync' | 'batch';
  readonly base_url?: string;
  /** Name of the environment variable holding the API key; never the key itself. */
  readonly api_key_env?: string;
  /** Provider bedrock: the AWS region (AWS_REGION when absent). */
  readonly region?: string;
  /** Provider bedrock with mode: batch: where its jobs keep their files, and the service role Bedrock uses. */
  readonly bedrock_batch?: { readonly s3_uri: string; readonly role_arn: string };
  readonly rpm?: number;
  readonly tpm?: number;
  /** Seconds one attempt may take (lib/run/callWithRetry.ts `timeoutMs`); the run's default when absent. */
  readonly timeout_s?: number;
  /**
   * On AWS: `lambda` (the default, and what absent means) calls the model from the Lambda worker;
   * `gpu` serves it with vLLM in an AWS Batch GPU job configured by `gpu`, and prices it by GPU
   * hours (lib/gpu). Set only for `gpu`.
   */
  readonly runs_on?: 'lambda' | 'gpu';
  /** Present exactly when `runs_on` is `gpu`, with its defaults applied. */
  readonly gpu?: GpuSettings;
}

/** A role's entry (FAR-6's judge): a model entry, the role it plays, and the battery's fields for it. */
export interface RoleModelEntry extends ModelEntry {
  readonly role: string;
  /** Where it sits in the campaign file (`['judge']`, `['judge', 'audit', 'second_judge']`). */
  readonly at: readonly string[];
  readonly extras: Readonly<Record<string, unknown>>;
}

export interface Campaign extends CampaignCore {
  /** Absolute path of the campaign file. */
  readonly file: string;
  readonly folder: string;
  readonly name: string;
  readonly description?: string;
  readonly seed: number;
  readonly budget_usd: number;
  /** Absolute. */
  readonly data_dir: string;
  readonly concurrency: number;
  /** The battery's name (lib/batteries). */
  readonly battery: string;
  /** Where the battery was loaded from when it is not built in (`battery: ./studies/likert/`). */
  readonly battery_source?: BatterySource;
  /** The battery's parsed `design:` section (paths as written, relative to `folder`). */
  readonly design: unknown;
  /** The campaign's `defaults` over DEFAULT_GENERATION_SETTINGS. */
  readonly defaults: GenerationSettings;
  readonly models: readonly ModelEntry[];
  readonly roles: Readonly<Record<string, RoleModelEntry>>;
  /** Version of the price table the table prices came from. */
  readonly price_table: string;
  /** How the campaign runs on AWS (`sondage start --aws`); the local run ignores it. */
  readonly aws: AwsRunSettings;
}

/** The campaign's `aws:` settings, defaults filled in. */
export interface AwsRunSettings {
  /** Percentage of a wave's worker batches that may fail without failing the wave (Distributed Map ToleratedFailurePercentage). */
  readonly tolerated_failure_percentage: number;
  /** Longest Retry-After a worker sits out before a retry, in seconds; a longer one stops that model's calls until the next start. */
  readonly max_wait_seconds: number;
  /** Least time, in seconds, that must be left before a worker's deadline for a call (or a retry) to start (lib/run/runShards.ts). */
  readonly min_call_seconds: number;
}

/**
 * Default of `aws.tolerated_failure_percentage`: a wave goes on while at most 5 % of its shards are
 * in batches that failed after their retries (a transient S3 / DynamoDB fault is retried first;
 * Step Functions counts every shard of a failed batch failed). A wave of fewer than twenty shards
 * still fails at its first failed batch; a wave of hundreds of batches is not failed by one bad
 * one. The failed batches' items are recorded failed, the report counts them so, and the next
 * `sondage start --aws` asks them again.
 */
export const DEFAULT_TOLERATED_FAILURE_PERCENTAGE = 5;

/**
 * Default and ceiling of `aws.max_wait_seconds`, a worker's `--max-wait`: five minutes, as the local
 * run. No more than ten: a worker lives 15 minutes and stops a minute before, and a wait past that
 * is Lambda time paid for nothing — a longer Retry-After stops the model's calls, records when to
 * resume, and the next `sondage start --aws` picks them up.
 */
export const DEFAULT_AWS_MAX_WAIT_SECONDS = 300;
export const MAX_AWS_MAX_WAIT_SECONDS = 600;

/**
 * Default and ceiling of `aws.min_call_seconds`. A worker aborts its calls in flight at its deadline
 * (a minute before its 15-minute timeout) and counts each possibly billed at its reservation; so it
 * starts a call only while its attempt timeout, or this window where shorter, is left. 120 s, the
 * former default attempt timeout: a call that ends within two minutes is never cut, as before the
 * default went above the SDKs' 600 s, while a worker still starts calls until two minutes before
 * its deadline. No more than ten minutes: a worker has fourteen in which to call.
 */
export const DEFAULT_AWS_MIN_CALL_SECONDS = 120;
export const MAX_AWS_MIN_CALL_SECONDS = 600;

const awsSettingsSchema = z
  .strictObject({
    tolerated_failure_percentage: z
      .number()
      .min(0)
      .max(100)
      .default(DEFAULT_TOLERATED_FAILURE_PERCENTAGE)
      .meta({
        description:
          `Percentage (0–100) of a wave's shards whose worker batches may fail (after their retries) while the wave goes on; default ${DEFAULT_TOLERATED_FAILURE_PERCENTAGE} ` +
          '(a wave of fewer than 20 shards fails at its first failed batch; 0: any failed batch fails the execution). The items of a failed batch are recorded failed in the ledger and counted failed by the report; ' +
          '`sondage start --aws` (with or without --retry-failed) asks them again',
      }),
    max_wait_seconds: z
      .number()
      .int()
      .min(0)
      .max(MAX_AWS_MAX_WAIT_SECONDS)
      .default(DEFAULT_AWS_MAX_WAIT_SECONDS)
      .meta({
        description:
          `Longest wait, in whole seconds (0–${MAX_AWS_MAX_WAIT_SECONDS}), that a worker sits out when a provider asks for one (Retry-After) before retrying; default ${DEFAULT_AWS_MAX_WAIT_SECONDS}, as \`sondage run --max-wait\` locally. ` +
          "A longer wait stops that model's calls in the execution and records when to resume; its items stay pending for the next `sondage start --aws`",
      }),
    min_call_seconds: z
      .number()
      .int()
      .min(1)
      .max(MAX_AWS_MIN_CALL_SECONDS)
      .default(DEFAULT_AWS_MIN_CALL_SECONDS)
      .meta({
        description:
          `Least time, in whole seconds (1–${MAX_AWS_MIN_CALL_SECONDS}), left before a worker's deadline for a call or a retry to start; default ${DEFAULT_AWS_MIN_CALL_SECONDS}. ` +
          "A model whose `timeout_s` is shorter needs only that much. A call still running at the deadline is cut and counted possibly billed at its reservation; its item is asked again by the next invocation, which reserves again",
      }),
  })
  .prefault({})
  .meta({ description: 'How the campaign runs on AWS (`sondage start --aws`); the local run ignores it' });

export type CampaignCheck =
  | { readonly ok: true; readonly campaign: Campaign }
  | { readonly ok: false; readonly issues: readonly CampaignIssue[] };

export interface ParseCampaignOptions {
  /** Folder that `file` and the default data_dir are relative to; process.cwd() by default. */
  readonly cwd?: string;
}

/** Every model entry of a campaign: the models under test, then the role entries (each id once). */
export function campaignEntries(campaign: Campaign): ModelEntry[] {
  const seen = new Set<string>();
  return [...campaign.models, ...Object.values(campaign.roles)].filter((e) => !seen.has(e.id) && (seen.add(e.id), true));
}

/**
 * The settings an entry is sent in one phase: DEFAULT_GENERATION_SETTINGS < campaign `defaults` <
 * the phase's own < the entry's `settings` < the entry's `phase_settings[phase]`. With no phase
 * layer and no phase_settings this is exactly `entry.settings`.
 */
export function phaseSettings(campaign: Campaign, entry: ModelEntry, phase: string, phaseLayer?: GenerationSettings): GenerationSettings {
  const own = entry.phase_settings?.[phase];
  if (!phaseLayer && !own) return entry.settings;
  return mergeSettings(mergeSettings(mergeSettings(campaign.defaults, phaseLayer), entry.own_settings), own);
}

// ---- the schema ----------------------------------------------------------------------------

const ROOT_KEYS = 'name, seed, budget_usd, battery, design, models';

function rootShape(battery: z.ZodType, design: z.ZodType) {
  return {
    name: safeId('my-campaign'),
    description: z.string().optional(),
    seed: z.int().min(0).max(2 ** 32 - 1).meta({ description: '32-bit seed of every random draw' }),
    budget_usd: z.number().gt(0).meta({ description: 'Hard spending cap in USD' }),
    data_dir: z
      .string()
      .min(1)
      .optional()
      .meta({ description: "Relative to the campaign file's folder; default: data under the working directory" }),
    concurrency: z.int().min(1).max(1024).default(16),
    aws: awsSettingsSchema,
    battery,
    design,
    defaults: generationSettingsSchema.optional().meta({ description: 'Generation settings for every model and role' }),
    models: z.array(modelEntrySchema).min(1),
  };
}

const rootError = (iss: z.core.$ZodRawIssue): string | undefined =>
  iss.code !== 'invalid_type'
    ? undefined
    : iss.input == null
      ? `the file is empty; expected a campaign mapping with ${ROOT_KEYS}`
      : // The kind only: a file that is not a campaign (a .env given by mistake) is never quoted.
        `expected a campaign mapping with ${ROOT_KEYS}, got ${kindOf(iss.input)}; is this the campaign file?`;

const schemas = new Map<string, z.ZodType>();

/**
 * The campaign file's schema for one battery: the core fields, its `design:` and its root roles
 * (a role's model entry plus the fields the battery declares for it). Cross-field rules (unique
 * ids, prices, …) live in crossField.ts.
 */
export function campaignSchemaFor(battery: Battery) {
  const cached = schemas.get(battery.name);
  if (cached) return cached;
  const roles: Record<string, z.ZodType> = {};
  for (const [role, spec] of Object.entries(battery.roles)) {
    const at = spec.at ?? [role];
    if (at.length !== 1) continue; // nested roles are part of their parent's extras
    const entry = z.strictObject({ ...modelShape, ...spec.extras }).meta({ description: spec.description });
    roles[at[0]!] = spec.required ? entry : entry.optional();
  }
  const schema = z
    .strictObject(
      {
        ...rootShape(z.literal(battery.name), battery.design),
        ...roles,
      },
      { error: rootError },
    )
    .meta({ title: `sondage campaign (battery ${battery.name})`, description: battery.title });
  schemas.set(battery.name, schema);
  return schema;
}

/**
 * The schema's alternative for a battery of one's own (lib/batteries/external.ts): `battery:` a
 * path (the same test as batterySourceOf: starts with `.` or `/`, or holds a `/` or `\`) or
 * `{ module }` / `{ path }`; its design and roles are the battery's, checked when it is loaded.
 */
function ownBatterySchema() {
  const battery = z.union([
    z.string().regex(/^[./]|[/\\]/).meta({ description: 'A battery of your own: a folder or module file, relative to the campaign file (./studies/likert/)' }),
    z.strictObject({ module: z.string().min(1).meta({ description: 'An installed package whose default export is a battery' }) }),
    z.strictObject({ path: z.string().min(1).meta({ description: 'A folder or module file, relative to the campaign file' }) }),
  ]).meta({ description: 'A folder or module file relative to the campaign file (./studies/likert/), { module: "<package>" } or { path: "<folder or file>" }' });
  const design = z.record(z.string(), z.unknown()).meta({ description: "The battery's own design: section, checked by the battery when the campaign is loaded" });
  return z
    .looseObject(rootShape(battery, design))
    .meta({ title: 'sondage campaign (a battery of your own)', description: 'A battery from the user\'s folder or a package (docs/writing-a-battery.md); its roles are its own fields' });
}

/**
 * The JSON Schema of the campaign file, in input form (fields with defaults are optional): one
 * alternative per battery, told apart by `battery`. For editors and `sondage schema`.
 */
export function campaignJsonSchema(): Record<string, unknown> {
  // Built in only: a battery a test or a campaign registered at run time is not part of the committed schema.
  const alternatives = [...builtInBatteries().map((b) => campaignSchemaFor(b)), ownBatterySchema()].map((s) => z.toJSONSchema(s, { io: 'input', target: 'draft-2020-12' }));
  return {
    $schema: 'https://json-schema.org/draft/2020-12/schema',
    title: 'sondage campaign',
    description: 'A sondage measurement campaign (YAML); `battery` picks the study and with it the `design:` section',
    oneOf: alternatives.map(({ $schema: _, ...rest }) => rest),
  };
}

/** `campaignJsonSchema()` as the committed schema/campaign.schema.json holds it. */
export function campaignJsonSchemaText(): string {
  return `${JSON.stringify(campaignJsonSchema(), null, 2)}\n`;
}

// ---- the parser ----------------------------------------------------------------------------

function compact<T extends object>(value: T): T {
  return Object.fromEntries(Object.entries(value).filter(([, v]) => v !== undefined)) as T;
}

type ParsedModel = z.output<typeof modelEntrySchema>;

/** The `price` of a runs_on: gpu entry: never charged as such (see ModelEntry.price_source). */
const GPU_PLACEHOLDER_PRICE = { input_per_mtok: 0, output_per_mtok: 0 } as const;

function buildCampaign(data: Record<string, unknown>, battery: Battery, file: string, cwd: string): Campaign {
  const absFile = path.resolve(cwd, file);
  const folder = path.dirname(absFile);
  const defaults = mergeSettings(DEFAULT_GENERATION_SETTINGS, data.defaults as GenerationSettings | undefined);

  const entry = (m: ParsedModel): ModelEntry => {
    const onGpu = m.runs_on === 'gpu';
    const price = onGpu ? GPU_PLACEHOLDER_PRICE : priceFor(m);
    // crossFieldIssues reports a missing price before building.
    if (!price) throw new Error(`unreachable: no price for ${m.provider}/${m.model}`);
    return compact({
      id: m.id,
      provider: m.provider,
      model: m.model,
      settings: mergeSettings(defaults, m.settings),
      own_settings: m.settings ?? {},
      phase_settings: m.phase_settings,
      price: { ...price },
      price_source: onGpu ? 'gpu' : m.price ? 'campaign' : 'table',
      mode: m.mode,
      base_url: m.base_url,
      api_key_env: m.api_key_env ?? DEFAULT_API_KEY_ENV[m.provider],
      region: m.region,
      bedrock_batch: m.bedrock_batch,
      rpm: m.rpm,
      tpm: m.tpm,
      timeout_s: m.timeout_s,
      simulation: m.simulation,
      runs_on: onGpu ? 'gpu' : undefined,
      gpu: onGpu ? (m.gpu as GpuSettings | undefined) : undefined,
    });
  };

  const roles: Record<string, RoleModelEntry> = {};
  for (const [role, spec] of Object.entries(battery.roles)) {
    const at = roleLocation(battery, role);
    const value = valueAt(data, at);
    if (!isRecord(value)) continue;
    // A root role's entry holds the battery's extra fields beside the model's.
    const extras = at.length === 1 ? Object.fromEntries(Object.entries(value).filter(([k]) => !Object.hasOwn(modelShape, k) && Object.hasOwn(spec.extras ?? {}, k))) : {};
    roles[role] = { ...entry(value as ParsedModel), role, at, extras };
  }

  const models = (data.models as ParsedModel[]).map(entry);
  return compact({
    file: absFile,
    folder,
    name: data.name as string,
    description: data.description as string | undefined,
    seed: data.seed as number,
    budget_usd: data.budget_usd as number,
    data_dir: data.data_dir === undefined ? path.resolve(cwd, DEFAULT_DATA_DIR) : path.resolve(folder, data.data_dir as string),
    concurrency: data.concurrency as number,
    aws: data.aws as AwsRunSettings,
    battery: battery.name,
    design: data.design,
    defaults,
    models,
    roles,
    price_table: PRICE_TABLE.version,
  });
}

/** For a document whose battery is missing or unknown: the core fields only, anything else let through. */
function batterylessSchema() {
  const names = batteryNames();
  const battery = z.string({ error: (iss) => (iss.input === undefined ? `is required; use one of ${names.join(', ')}` : `expected a battery name, got ${show(iss.input)}`) });
  return z.looseObject(rootShape(battery, z.unknown()), { error: rootError });
}

/** An unknown root key that another battery uses as a role: say so, instead of listing the known keys. */
function roleOfAnotherBattery(battery: Battery): (segments: readonly (string | number)[], key: string) => string | undefined {
  return (segments, key) => {
    if (segments.length > 0) return undefined;
    const owners = allBatteries().filter((b) => b !== battery && Object.hasOwn(b.roles, key));
    return owners.length > 0 ? `battery ${battery.name} has no ${key} role (${owners.map((b) => b.name).join(', ')} has); remove ${key}` : undefined;
  };
}

/**
 * Checks a parsed campaign document and, when it is sound, builds the Campaign. Every issue is
 * returned, schema and cross-field alike; `loadCampaign` uses the segments to add YAML lines.
 */
export function checkCampaign(raw: unknown, file: string, options: ParseCampaignOptions = {}): CampaignCheck {
  const cwd = options.cwd ?? process.cwd();
  const name = isRecord(raw) ? raw.battery : undefined;
  const battery = typeof name === 'string' ? batteryNamed(name) : undefined;
  let found: LocatedIssue[];
  let data: Record<string, unknown> | undefined;
  if (battery) {
    const schema = campaignSchemaFor(battery);
    const parsed = schema.safeParse(raw, { error: genericError });
    if (parsed.success) data = parsed.data as Record<string, unknown>;
    found = parsed.success ? [] : zodIssues(parsed.error.issues, z.toJSONSchema(schema, { io: 'input' }), roleOfAnotherBattery(battery));
  } else {
    const parsed = batterylessSchema().safeParse(raw, { error: genericError });
    found = parsed.success ? [] : zodIssues(parsed.error.issues, {});
    if (typeof name === 'string') {
      // On AWS the uploaded campaign names a battery of one's own by its name: the stack carries it or not.
      const own = `; a battery of your own is named by its folder (battery: ./${name}/), and a deployed stack runs those it was deployed with (-c sondage:batteries)`;
      found.push({ path: 'battery', segments: ['battery'], message: `${enumMessage(name, batteryNames())}${own}` });
    }
  }
  found.push(...crossFieldIssues(raw, battery));
  found.push(...simulationIssues(raw, battery, file));
  found.push(...dataDirIssues(raw, file, cwd));
  if (found.length > 0 || !data || !battery) {
    const seen = new Set<string>();
    const issues = found
      .map((i) => ({ ...i, file }))
      .filter((i) => {
        const key = `${i.path}\u0000${i.message}`;
        return seen.has(key) ? false : (seen.add(key), true);
      });
    return { ok: false, issues };
  }
  return { ok: true, campaign: buildCampaign(data, battery, file, cwd) };
}

/**
 * A data_dir that names the campaign file itself: `run` would try to make a folder of it. Refused
 * by `plan` already, before anything is written.
 */
function dataDirIssues(raw: unknown, file: string, cwd: string): LocatedIssue[] {
  if (!isRecord(raw) || typeof raw.data_dir !== 'string' || raw.data_dir === '') return [];
  const absFile = path.resolve(cwd, file);
  if (path.resolve(path.dirname(absFile), raw.data_dir) !== absFile) return [];
  return [{ path: 'data_dir', segments: ['data_dir'], message: `${show(raw.data_dir)} is this campaign file itself; expected a folder for the replies and results (such as data), relative to the campaign file's folder` }];
}

function enumMessage(value: string, names: readonly string[]): string {
  // The same words as every other enum of the file.
  const probe = enumOf(names as [string, ...string[]], 'battery').safeParse(value);
  return probe.success ? '' : (probe.error.issues[0]?.message ?? `${show(value)} is not a known battery`);
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
