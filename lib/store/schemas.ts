/**
 * Column schemas of the three campaign tables (DESIGN.md "Data contracts"). The partition columns
 * `model` and `language` live in the path (`model=<m>/language=<l>/`), never inside the files:
 * Athena rejects a table whose partition keys repeat a data column, and DuckDB adds them back
 * from the path with `hive_partitioning`.
 */
import { canonicalJson } from '../core/hash.js';
import type { Language, PromptItem } from '../design/types.js';
import type { ReadingRow, ReplyRow, TableName } from './types.js';

export type ColumnType = 'VARCHAR' | 'INTEGER' | 'BIGINT' | 'DOUBLE' | 'BOOLEAN';

export interface ColumnDef {
  readonly name: string;
  /** DuckDB type; `athenaType` gives the Glue/Athena name. */
  readonly type: ColumnType;
  readonly nullable: boolean;
}

/** Partition columns, in path order. */
export const PARTITION_COLUMNS = ['model', 'language'] as const;

/** One row of the prompts table: a PromptItem flattened. */
export interface PromptRow {
  readonly item_id: string;
  readonly prompt_key: string;
  readonly campaign: string;
  readonly phase: string;
  /** Partition column: in the path, not in the file. */
  readonly model: string;
  /** Partition column: in the path, not in the file. */
  readonly language: Language;
  readonly battery: string;
  readonly story: string;
  readonly story_group: string;
  readonly concept_pair: string;
  readonly form: string;
  readonly constraint: string;
  readonly named: string;
  readonly option_order: number;
  readonly repeat: number;
  readonly construction: string;
  readonly messages_json: string;
  readonly settings_json: string;
  readonly reading_map_json: string;
  readonly prop_p: string;
  readonly prop_notp: string;
  readonly source_item_id: string | null;
}

/** Row type of each table, partition columns included (the writer checks and drops them). */
export interface TableRows {
  readonly prompts: PromptRow;
  readonly replies: ReplyRow;
  readonly readings: ReadingRow;
}

type Stored<R> = Exclude<keyof R, (typeof PARTITION_COLUMNS)[number]> & string;

// A mapped type over the row's fields: the compiler rejects a schema that forgets or invents a column.
function columns<R>(defs: { readonly [K in Stored<R>]: readonly [ColumnType, 'null'?] }): readonly ColumnDef[] {
  return Object.entries(defs as Record<string, readonly [ColumnType, 'null'?]>).map(([name, [type, n]]) => ({
    name,
    type,
    nullable: n === 'null',
  }));
}

export const PROMPT_COLUMNS = columns<PromptRow>({
  item_id: ['VARCHAR'],
  prompt_key: ['VARCHAR'],
  campaign: ['VARCHAR'],
  phase: ['VARCHAR'],
  battery: ['VARCHAR'],
  story: ['VARCHAR'],
  story_group: ['VARCHAR'],
  concept_pair: ['VARCHAR'],
  form: ['VARCHAR'],
  constraint: ['VARCHAR'],
  named: ['VARCHAR'],
  option_order: ['INTEGER'],
  repeat: ['INTEGER'],
  construction: ['VARCHAR'],
  messages_json: ['VARCHAR'],
  settings_json: ['VARCHAR'],
  reading_map_json: ['VARCHAR'],
  prop_p: ['VARCHAR'],
  prop_notp: ['VARCHAR'],
  source_item_id: ['VARCHAR', 'null'],
});

export const REPLY_COLUMNS = columns<ReplyRow>({
  item_id: ['VARCHAR'],
  campaign: ['VARCHAR'],
  phase: ['VARCHAR'],
  attempt: ['INTEGER'],
  status: ['VARCHAR'],
  text: ['VARCHAR', 'null'],
  finish_reason: ['VARCHAR', 'null'],
  input_tokens: ['INTEGER'],
  output_tokens: ['INTEGER'],
  cached_input_tokens: ['INTEGER', 'null'],
  cost_usd: ['DOUBLE'],
  latency_ms: ['DOUBLE'],
  logprobs_json: ['VARCHAR', 'null'],
  logprobs_exact: ['BOOLEAN', 'null'],
  error_class: ['VARCHAR', 'null'],
  error_message: ['VARCHAR', 'null'],
  settings_json: ['VARCHAR'],
  provider: ['VARCHAR'],
  simulated: ['BOOLEAN'],
  created_at: ['VARCHAR'],
});

export const READING_COLUMNS = columns<ReadingRow>({
  item_id: ['VARCHAR'],
  campaign: ['VARCHAR'],
  phase: ['VARCHAR'],
  reader: ['VARCHAR'],
  label: ['VARCHAR'],
  raw: ['VARCHAR', 'null'],
  judge_item_id: ['VARCHAR', 'null'],
});

/** Stored columns of each table, in file order (partition columns excluded). */
export const TABLE_SCHEMAS: Readonly<Record<TableName, readonly ColumnDef[]>> = {
  prompts: PROMPT_COLUMNS,
  replies: REPLY_COLUMNS,
  readings: READING_COLUMNS,
};

const ATHENA_TYPES: Readonly<Record<ColumnType, string>> = {
  VARCHAR: 'string',
  INTEGER: 'int',
  BIGINT: 'bigint',
  DOUBLE: 'double',
  BOOLEAN: 'boolean',
};

/** Glue/Athena name of a column type (for the table definitions in infra/). */
export function athenaType(type: ColumnType): string {
  return ATHENA_TYPES[type];
}

// Settings and reading maps are shared by many items of a partition: serialize each object once.
const jsonCache = new WeakMap<object, string>();
function cachedCanonicalJson(value: object): string {
  let json = jsonCache.get(value);
  if (json === undefined) jsonCache.set(value, (json = canonicalJson(value)));
  return json;
}

/**
 * Flattens a PromptItem into a prompts row. JSON columns use canonical JSON (sorted keys), so the
 * same item always gives the same bytes.
 * @example promptRow(item).messages_json // '[{"content":"…","role":"user"}]'
 */
export function promptRow(item: PromptItem): PromptRow {
  const f = item.factors;
  return {
    item_id: item.item_id,
    prompt_key: item.prompt_key,
    campaign: item.campaign,
    phase: item.phase,
    model: item.model,
    language: item.language,
    battery: item.battery,
    story: f.story,
    story_group: f.story_group,
    concept_pair: f.concept_pair,
    form: f.form,
    constraint: f.constraint,
    named: f.named,
    option_order: f.option_order,
    repeat: f.repeat,
    construction: f.construction,
    messages_json: canonicalJson(item.messages),
    settings_json: cachedCanonicalJson(item.settings),
    reading_map_json: cachedCanonicalJson(item.reading_map),
    prop_p: item.propositions.P,
    prop_notp: item.propositions.notP,
    source_item_id: item.source_item_id ?? null,
  };
}
