/**
 * Test fixtures for the analysis: an in-memory DuckDB behind the `Queryable` interface, and tiny
 * Parquet tables written in the campaign layout `<table>/model=<m>/language=<l>/part-0.parquet`
 * (partition columns live in the path only, as the store writes them).
 */
import { mkdir, mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { DuckDBInstance } from '@duckdb/node-api';
import type { DuckDBConnection } from '@duckdb/node-api';
import { parquetSource } from '../../../../lib/query/sql.js';
import type { Queryable, TableSources } from '../../../../lib/batteries/far6/analysis/types.js';

type Value = string | number | boolean | null;
type Schema = readonly (readonly [string, string])[];

export const PROMPT_SCHEMA: Schema = [
  ['item_id', 'VARCHAR'], ['prompt_key', 'VARCHAR'], ['campaign', 'VARCHAR'], ['phase', 'VARCHAR'],
  ['battery', 'VARCHAR'], ['story', 'VARCHAR'], ['story_group', 'VARCHAR'], ['concept_pair', 'VARCHAR'],
  ['form', 'VARCHAR'], ['constraint', 'VARCHAR'], ['named', 'VARCHAR'], ['option_order', 'INTEGER'],
  ['repeat', 'INTEGER'], ['construction', 'VARCHAR'], ['messages_json', 'VARCHAR'], ['settings_json', 'VARCHAR'],
  ['reading_map_json', 'VARCHAR'], ['prop_p', 'VARCHAR'], ['prop_notp', 'VARCHAR'], ['source_item_id', 'VARCHAR'],
];
export const REPLY_SCHEMA: Schema = [
  ['item_id', 'VARCHAR'], ['campaign', 'VARCHAR'], ['phase', 'VARCHAR'], ['attempt', 'INTEGER'], ['status', 'VARCHAR'],
  ['text', 'VARCHAR'], ['finish_reason', 'VARCHAR'], ['input_tokens', 'INTEGER'], ['output_tokens', 'INTEGER'],
  ['cost_usd', 'DOUBLE'], ['latency_ms', 'INTEGER'], ['logprobs_json', 'VARCHAR'], ['error_class', 'VARCHAR'],
  ['error_message', 'VARCHAR'], ['settings_json', 'VARCHAR'], ['provider', 'VARCHAR'], ['simulated', 'BOOLEAN'],
  ['created_at', 'VARCHAR'],
];
export const READING_SCHEMA: Schema = [
  ['item_id', 'VARCHAR'], ['campaign', 'VARCHAR'], ['phase', 'VARCHAR'], ['reader', 'VARCHAR'], ['label', 'VARCHAR'],
  ['raw', 'VARCHAR'], ['judge_item_id', 'VARCHAR'], ['facet', 'VARCHAR'], ['value', 'DOUBLE'],
];
const SCHEMAS = { prompts: PROMPT_SCHEMA, replies: REPLY_SCHEMA, readings: READING_SCHEMA } as const;

export interface PromptSpec {
  item_id: string;
  prompt_key: string;
  model: string;
  language: string;
  story: string;
  story_group?: string;
  concept_pair?: string;
  form?: string;
  constraint?: string;
  named: 'P' | 'notP';
  option_order?: number;
  repeat?: number;
  construction?: string;
  reading_map_json?: string;
}

export interface ReplySpec {
  item_id: string;
  model: string;
  language: string;
  attempt: number;
  status: 'ok' | 'error';
  created_at: string;
  cost_usd?: number;
  simulated?: boolean;
}

export interface ReadingSpec {
  item_id: string;
  model: string;
  language: string;
  reader: string;
  label: string;
  judge_item_id?: string | null;
}

/** What a prompt row holds where its spec says nothing. */
const PROMPT_DEFAULTS: Record<string, Value> = {
  campaign: 'test',
  phase: 'generate',
  battery: 'far6',
  story_group: 'contested',
  concept_pair: 'wrong_right',
  form: 'plain',
  constraint: 'yesno',
  option_order: 0,
  repeat: 0,
  construction: 'evaluative_adjective',
  messages_json: '[]',
  settings_json: '{}',
  reading_map_json: '{"kind":"particle","tokens":{}}',
  prop_p: 'What they did was wrong.',
  prop_notp: 'What they did was right, with a "quote", and a comma.',
};

/** What a reply row holds where its spec says nothing: an ok reply has a text, a failed one an error. */
function replyDefaults({ status }: ReplySpec): Record<string, Value> {
  const ok = status === 'ok';
  return {
    campaign: 'test',
    phase: 'generate',
    text: ok ? 'Yes, it was wrong.' : null,
    finish_reason: ok ? 'stop' : null,
    input_tokens: 10,
    output_tokens: 5,
    cost_usd: 0.001,
    latency_ms: 100,
    logprobs_json: null,
    error_class: ok ? null : 'transient',
    error_message: ok ? null : 'HTTP 503',
    settings_json: '{}',
    provider: 'simulated/alpha',
    simulated: true,
  };
}

/** What a reading row holds where its spec says nothing. */
const READING_DEFAULTS: Record<string, Value> = { campaign: 'test', phase: 'read', raw: null, judge_item_id: null };

function literal(v: Value): string {
  if (v === null) return 'NULL';
  if (typeof v === 'boolean') return v ? 'TRUE' : 'FALSE';
  if (typeof v === 'number') return String(v);
  return `'${v.replaceAll("'", "''")}'`;
}

/** The rows of the three tables that a test builds by hand before it writes them. */
export interface FixtureRows {
  readonly prompts: PromptSpec[];
  readonly replies: ReplySpec[];
  readonly readings: ReadingSpec[];
}

/** Empty tables for a test to fill, then write with {@link ParquetFixture.writeAll}. */
export function fixtureRows(): FixtureRows {
  return { prompts: [], replies: [], readings: [] };
}

export class ParquetFixture {
  private constructor(
    readonly dir: string,
    private readonly instance: DuckDBInstance,
    readonly conn: DuckDBConnection,
  ) {}

  static async create(): Promise<ParquetFixture> {
    const dir = await mkdtemp(join(tmpdir(), 'sondage-analysis-'));
    const instance = await DuckDBInstance.create(':memory:');
    return new ParquetFixture(dir, instance, await instance.connect());
  }

  /** The `Queryable` a caller of the analysis passes. */
  get db(): Queryable {
    return {
      all: async <T>(sql: string): Promise<T[]> => (await this.conn.runAndReadAll(sql)).getRowObjectsJS() as T[],
    };
  }

  get tables(): TableSources {
    return {
      prompts: parquetSource(join(this.dir, 'prompts', '*', '*', '*.parquet')),
      replies: parquetSource(join(this.dir, 'replies', '*', '*', '*.parquet')),
      readings: parquetSource(join(this.dir, 'readings', '*', '*', '*.parquet')),
    };
  }

  /** Writes one part file per model × language of `rows`. */
  async write(table: keyof typeof SCHEMAS, rows: readonly (Record<string, Value | undefined> & { model: string; language: string })[]): Promise<void> {
    const schema = SCHEMAS[table];
    const parts = new Map<string, typeof rows[number][]>();
    for (const r of rows) {
      const key = `model=${r.model}/language=${r.language}`;
      parts.set(key, [...(parts.get(key) ?? []), r]);
    }
    let n = 0;
    for (const [partition, partRows] of parts) {
      const folder = join(this.dir, table, partition);
      await mkdir(folder, { recursive: true });
      const values = partRows.map((r) => `(${schema.map(([name]) => literal(r[name] ?? null)).join(', ')})`).join(',\n');
      const cols = schema.map((_, i) => `c${i}`).join(', ');
      const select = schema.map(([name, type], i) => `CAST(c${i} AS ${type}) AS "${name}"`).join(', ');
      const file = join(folder, `part-${n++}.parquet`);
      await this.conn.run(`COPY (SELECT ${select} FROM (VALUES ${values}) AS t(${cols})) TO '${file}' (FORMAT parquet)`);
    }
  }

  /** Writes the three tables a test built. */
  async writeAll(rows: FixtureRows): Promise<void> {
    await this.prompts(rows.prompts);
    await this.replies(rows.replies);
    await this.readings(rows.readings);
  }

  async prompts(specs: readonly PromptSpec[]): Promise<void> {
    await this.writeOver('prompts', specs, () => PROMPT_DEFAULTS);
  }

  async replies(specs: readonly ReplySpec[]): Promise<void> {
    await this.writeOver('replies', specs, replyDefaults);
  }

  async readings(specs: readonly ReadingSpec[]): Promise<void> {
    await this.writeOver('readings', specs, () => READING_DEFAULTS);
  }

  /** Writes `table` with each spec laid over the defaults it takes (a spec's own fields win). */
  private async writeOver<S extends { model: string; language: string }>(
    table: keyof typeof SCHEMAS,
    specs: readonly S[],
    defaults: (spec: S) => Record<string, Value>,
  ): Promise<void> {
    await this.write(table, specs.map((spec) => ({ ...defaults(spec), ...spec })));
  }

  async close(): Promise<void> {
    this.conn.closeSync();
    this.instance.closeSync();
    await rm(this.dir, { recursive: true, force: true });
  }
}
