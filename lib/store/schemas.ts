/**
 * Column schemas of the three campaign tables (DESIGN.md "Data contracts"). The partition columns
 * `model` and `language` live in the path (`model=<m>/language=<l>/`), never inside the files:
 * Athena rejects a table whose partition keys repeat a data column, and DuckDB adds them back
 * from the path with `hive_partitioning`.
 */
import { SondageError } from '../errors.js';
import { cachedCanonicalJson, listCanonicalJson } from '../core/hash.js';
import type { FactorValue, LanguageCode, PromptItem, TableName } from '../core/types.js';
import type { ReadingRow, ReplyRow } from './types.js';

export type ColumnType = 'VARCHAR' | 'INTEGER' | 'BIGINT' | 'DOUBLE' | 'BOOLEAN';

export interface ColumnDef {
  readonly name: string;
  /** DuckDB type; `athenaType` gives the Glue/Athena name. */
  readonly type: ColumnType;
  readonly nullable: boolean;
}

/** Partition columns, in path order. */
export const PARTITION_COLUMNS = ['model', 'language'] as const;

/**
 * A battery's part of the prompts table: its design factors as typed columns, then its extras
 * (FAR-6: the reading map and the two propositions), which `extraRow` takes from an item. Both
 * lists are the battery's Parquet and Glue columns; a factor a phase does not set is nullable.
 */
export interface PromptColumns {
  readonly factors: readonly ColumnDef[];
  readonly extras: readonly ColumnDef[];
  extraRow(item: PromptItem): Readonly<Record<string, FactorValue>>;
}

/** One row of the prompts table: a PromptItem flattened (partition columns included, as the writer takes them). */
export type PromptRow = Readonly<Record<string, FactorValue>> & {
  readonly item_id: string;
  readonly prompt_key: string;
  readonly campaign: string;
  readonly phase: string;
  /** Partition column: in the path, not in the file. */
  readonly model: string;
  /** Partition column: in the path, not in the file. */
  readonly language: LanguageCode;
  readonly battery: string;
  readonly messages_json: string;
  readonly settings_json: string;
  readonly source_item_id: string | null;
};

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

/**
 * Typed column declarations: `{ story: ['VARCHAR'], repeat: ['INTEGER'], note: ['VARCHAR', 'null'] }`
 * in file order. For a battery's factor and extra columns.
 */
export function columnDefs(defs: Readonly<Record<string, readonly [ColumnType, 'null'?]>>): readonly ColumnDef[] {
  return Object.entries(defs).map(([name, [type, n]]) => ({ name, type, nullable: n === 'null' }));
}

const PROMPT_HEAD = columnDefs({ item_id: ['VARCHAR'], prompt_key: ['VARCHAR'], campaign: ['VARCHAR'], phase: ['VARCHAR'], battery: ['VARCHAR'] });
const PROMPT_REQUEST = columnDefs({ messages_json: ['VARCHAR'], settings_json: ['VARCHAR'] });
const PROMPT_TAIL = columnDefs({ source_item_id: ['VARCHAR', 'null'] });

/**
 * The stored columns of a battery's prompts table, in file order: the core head (item_id,
 * prompt_key, campaign, phase, battery), the battery's factors, the request (messages_json,
 * settings_json), the battery's extras, and source_item_id.
 */
export function promptColumns(spec: Pick<PromptColumns, 'factors' | 'extras'>): readonly ColumnDef[] {
  return [...PROMPT_HEAD, ...spec.factors, ...PROMPT_REQUEST, ...spec.extras, ...PROMPT_TAIL];
}

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
  facet: ['VARCHAR', 'null'],
  value: ['DOUBLE', 'null'],
  read_with: ['VARCHAR', 'null'],
});

/** Stored columns of the tables every battery shares, in file order (partition columns excluded). */
export const TABLE_SCHEMAS: Readonly<Record<Exclude<TableName, 'prompts'>, readonly ColumnDef[]>> = {
  replies: REPLY_COLUMNS,
  readings: READING_COLUMNS,
};

/**
 * The stored columns of a table: the prompts table's are the battery's (`prompts`), the others'
 * are the same for every battery.
 */
export function tableColumns(table: TableName, prompts?: Pick<PromptColumns, 'factors' | 'extras'>): readonly ColumnDef[] {
  if (table !== 'prompts') return TABLE_SCHEMAS[table];
  if (!prompts) throw new SondageError('the prompts table has the columns of its battery; pass them');
  return promptColumns(prompts);
}

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

/**
 * Flattens a PromptItem into a prompts row: the core columns, the item's factors, and the
 * battery's extras. JSON columns use canonical JSON (sorted keys), so the same item always gives
 * the same bytes. `model` is the partition's (a role's items are stored with the model they read).
 * @example promptRow(item, battery.prompts).messages_json // '[{"content":"…","role":"user"}]'
 */
export function promptRow(item: PromptItem, spec: PromptColumns, model: string = item.model): PromptRow {
  return {
    item_id: item.item_id,
    prompt_key: item.prompt_key,
    campaign: item.campaign,
    phase: item.phase,
    model,
    language: item.language,
    battery: item.battery,
    ...item.factors,
    messages_json: listCanonicalJson(item.messages),
    settings_json: cachedCanonicalJson(item.settings),
    ...spec.extraRow(item),
    source_item_id: item.source_item_id ?? null,
  };
}
