/**
 * Keys of a campaign's files, identical on disk and in S3 (DESIGN.md "Data contracts"):
 * `campaigns/<campaign>/<phase>/{prompts,replies,readings}/model=<m>/language=<l>/part-<n>.parquet`,
 * plus `manifest.json`, `plan.json` and `results/…` beside the phases. Hive-style partitions let
 * Athena (partition projection) and DuckDB (`hive_partitioning`) read the same files.
 */
import { isLanguageCode } from '../core/languages.js';
import { SondageError } from '../errors.js';
import type { LanguageCode } from '../core/types.js';
import type { TableName } from './types.js';

export const TABLES: readonly TableName[] = ['prompts', 'replies', 'readings'];

/** Phase names that would collide with the files kept beside the phases. */
const RESERVED_PHASES = new Set(['results', 'input']);

const SAFE_SEGMENT = /^[A-Za-z0-9._-]+$/;

/** True when `value` can name one folder or file on every backend: letters, digits, `.`, `_`, `-`. */
export function isSafeSegment(value: string): boolean {
  return SAFE_SEGMENT.test(value) && value !== '.' && value !== '..';
}

/**
 * Throws unless `value` is a safe path segment. `what` names the value in the message.
 * @example assertSafeSegment('model id', 'gpt-4o-mini') // ok; 'openai/gpt' throws
 */
export function assertSafeSegment(what: string, value: string): void {
  if (typeof value !== 'string' || !isSafeSegment(value)) {
    throw new SondageError(
      `${what} ${JSON.stringify(value)} is not a safe path segment; use only letters, digits, '.', '_' or '-' ` +
        `(it names a folder on disk and in S3)`,
    );
  }
}

function assertPhase(phase: string): void {
  assertSafeSegment('phase', phase);
  if (RESERVED_PHASES.has(phase)) {
    throw new SondageError(`phase ${JSON.stringify(phase)} is reserved (it holds the campaign's ${phase}); choose another name`);
  }
}

function assertTable(table: string): asserts table is TableName {
  if (!(TABLES as readonly string[]).includes(table)) {
    throw new SondageError(`table ${JSON.stringify(table)} is not a campaign table; use one of ${TABLES.join(', ')}`);
  }
}

function assertLanguage(language: string): asserts language is LanguageCode {
  if (!isLanguageCode(language)) {
    throw new SondageError(`language ${JSON.stringify(language)} is not a language code; use lowercase ISO 639 letters such as "en", "zh" or "pt"`);
  }
}

/** `campaigns/<campaign>/` */
export function campaignPrefix(campaign: string): string {
  assertSafeSegment('campaign id', campaign);
  return `campaigns/${campaign}/`;
}

/** `campaigns/<campaign>/<phase>/` */
export function phasePrefix(campaign: string, phase: string): string {
  assertPhase(phase);
  return `${campaignPrefix(campaign)}${phase}/`;
}

/** `campaigns/<campaign>/<phase>/<table>/`: every partition of one table. */
export function tablePrefix(campaign: string, phase: string, table: TableName): string {
  assertTable(table);
  return `${phasePrefix(campaign, phase)}${table}/`;
}

/**
 * `campaigns/<campaign>/<phase>/<table>/model=<model>/language=<language>/`
 * @example partitionPrefix('demo', 'generate', 'replies', 'alpha', 'de')
 *   // 'campaigns/demo/generate/replies/model=alpha/language=de/'
 */
export function partitionPrefix(
  campaign: string,
  phase: string,
  table: TableName,
  model: string,
  language: LanguageCode,
): string {
  assertSafeSegment('model id', model);
  assertLanguage(language);
  return `${tablePrefix(campaign, phase, table)}model=${model}/language=${language}/`;
}

/**
 * Key of one Parquet part file; `partName` must end in `.parquet` (readers glob `*.parquet`, so
 * any other name would be silently left out of the analysis).
 */
export function partKey(
  campaign: string,
  phase: string,
  table: TableName,
  model: string,
  language: LanguageCode,
  partName: string,
): string {
  assertSafeSegment('part name', partName);
  if (!partName.endsWith('.parquet') || partName.startsWith('.')) {
    throw new SondageError(`part name ${JSON.stringify(partName)} must end in ".parquet" and not start with "."`);
  }
  return `${partitionPrefix(campaign, phase, table, model, language)}${partName}`;
}

/** The parts of a part key; undefined when `key` is not one. */
export interface ParsedPartKey {
  readonly campaign: string;
  readonly phase: string;
  readonly table: TableName;
  readonly model: string;
  readonly language: LanguageCode;
  readonly partName: string;
}

const PART_KEY = /^campaigns\/([^/]+)\/([^/]+)\/([^/]+)\/model=([^/]+)\/language=([^/]+)\/([^/]+\.parquet)$/;

/**
 * Reads a part key back into its fields (to adopt part files found on disk after a crash).
 * @example parsePartKey('campaigns/demo/generate/replies/model=alpha/language=de/part-1.parquet')?.model // 'alpha'
 */
export function parsePartKey(key: string): ParsedPartKey | undefined {
  const m = PART_KEY.exec(key);
  if (!m) return undefined;
  const [, campaign, phase, table, model, language, partName] = m as unknown as [string, string, string, string, string, string, string];
  if (!isSafeSegment(campaign) || !isSafeSegment(phase) || RESERVED_PHASES.has(phase)) return undefined;
  if (!(TABLES as readonly string[]).includes(table) || !isSafeSegment(model) || !isSafeSegment(partName)) return undefined;
  if (!isLanguageCode(language)) return undefined;
  return { campaign, phase, table: table as TableName, model, language: language as LanguageCode, partName };
}

/** `campaigns/<campaign>/results/<name>`; `name` may have sub-folders (`tables/shares.csv`). */
export function resultsKey(campaign: string, name: string): string {
  const segments = name.split('/');
  for (const s of segments) assertSafeSegment('results file name', s);
  return `${campaignPrefix(campaign)}results/${segments.join('/')}`;
}

/** `campaigns/<campaign>/plan.json` */
export function planKey(campaign: string): string {
  return `${campaignPrefix(campaign)}plan.json`;
}

/** `campaigns/<campaign>/manifest.json` */
export function manifestKey(campaign: string): string {
  return `${campaignPrefix(campaign)}manifest.json`;
}

/** `campaigns/<campaign>/run.lock`, relative to the data directory. */
export function runLockKey(campaign: string): string {
  return `${campaignPrefix(campaign)}run.lock`;
}
