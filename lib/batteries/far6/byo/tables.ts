/**
 * Resolved reply rows → the three campaign tables (lib/store/schemas.ts), partitioned by model and
 * language in the hive layout, so that the analysis reads them exactly as it reads a run's.
 */
import { writeFileSync } from 'node:fs';
import { appendFile, mkdir } from 'node:fs/promises';
import path from 'node:path';
import { canonicalJson } from '../../../core/hash.js';
import type { Language, ReadingMap } from '../types.js';
import { readOpening, readOpeningPlus, readerIds } from '../read/index.js';
import { DuckDb, sqlIdent, sqlString } from '../../../store/DuckDb.js';
import { PARTITION_COLUMNS, TABLE_SCHEMAS, tableColumns } from '../../../store/schemas.js';
import { FAR6_PROMPT_COLUMNS } from '../promptColumns.js';
import type { PromptRow } from '../../../store/schemas.js';
import type { ReadingRow, ReplyRow } from '../../../store/types.js';
import { assertSafeSegment } from '../../../store/layout.js';
import type { WrittenPartition } from './types.js';
import type { ResolvedRow } from './validate.js';

const PHASE = 'generate';
const EMPTY_SETTINGS = '{}';
const NO_MAP_JSON = canonicalJson({ kind: 'none', tokens: {} });
const NO_MESSAGES_JSON = canonicalJson([]);
/** Rows a partitioned COPY buffers per thread before writing them out (bounds DuckDB's memory). */
const PARTITIONED_FLUSH_ROWS = 25_000;

/**
 * The fixed token rule on an item's reading map (seed 000 §3; as the FAR-6 battery applies it):
 * R on every map but `none`, and R+ as well on verdict maps.
 */
function ruleReadings(text: string, map: ReadingMap, language: Language): { reader: string; label: ReadingRow['label']; raw: string | null }[] {
  if (map.kind === 'none') return [];
  const out: { reader: string; label: ReadingRow['label']; raw: string | null }[] = [{ reader: readerIds.rule, ...readOpening(text, map) }];
  if (map.kind === 'verdict') out.push({ reader: readerIds.rulePlus, ...readOpeningPlus(text, map, language) });
  return out;
}

/**
 * The staged lines: the three tables' rows (NDJSON, partition columns included) and `rule`, the
 * token rule's readings of every ok reply with its attempt, of which the chosen reply's are kept
 * when the tables are written.
 */
type StageKind = 'prompts' | 'replies' | 'readings' | 'rule';
const STAGE_KINDS: readonly StageKind[] = ['prompts', 'replies', 'readings', 'rule'];

interface Column {
  readonly name: string;
  readonly type: string;
}
const PARTITION: readonly Column[] = PARTITION_COLUMNS.map((name) => ({ name, type: 'VARCHAR' }));
const RULE_COLUMNS: readonly Column[] = [
  { name: 'item_id', type: 'VARCHAR' },
  { name: 'attempt', type: 'INTEGER' },
  { name: 'reader', type: 'VARCHAR' },
  { name: 'label', type: 'VARCHAR' },
  { name: 'raw', type: 'VARCHAR' },
];

/** What `TableSink.finish` wrote: rows per partition and the readings' origin. */
export interface WrittenTables {
  readonly partitions: readonly WrittenPartition[];
  readonly readingsGiven: number;
  readonly readingsComputed: number;
}

/**
 * Resolved rows → the three tables, without holding the rows: `add` turns a row into its table
 * lines at once (a prompt row for an item's first row, a reply row, its given readings and the
 * token rule's readings of an ok reply) and buffers them; `flush` appends the buffers to NDJSON
 * staging files (the import flushes after every chunk past a size, so memory is bounded by a
 * chunk's lines); `finish` writes each table with one DuckDB COPY, partitioned by model and
 * language in the hive layout, as a run's parts are.
 *
 * The rule readings kept are those of the item's chosen reply (chosen_replies.sql: the lowest ok
 * attempt; attempts are unique per item, so no tie is left), for every rule reader the rows did
 * not already give (seed 000 §3: R on every map but `none`, R+ as well on verdict maps).
 */
export class TableSink {
  private readonly files: Readonly<Record<StageKind, string>>;
  private buffers: Record<StageKind, string[]> = { prompts: [], replies: [], readings: [], rule: [] };
  private readonly partitions = new Map<string, { model: string; language: Language; prompts: number; replies: number }>();
  // One object per distinct map (the rule compiles its matcher once per map object, readOpening),
  // looked up by the map's plain JSON text, which is much cheaper than canonicalJson per row.
  private readonly maps = new Map<string, { readonly json: string; readonly map: ReadingMap }>();
  private buffered = 0;
  private readingsGiven = 0;

  /** `stageDir`: an empty folder for the staging files (the caller removes it). */
  constructor(
    stageDir: string,
    private readonly campaign: string,
  ) {
    this.files = Object.fromEntries(STAGE_KINDS.map((k) => [k, path.join(stageDir, `${k}.ndjson`)])) as Record<StageKind, string>;
    // Every staging file exists, so that DuckDB reads an empty one as no rows.
    for (const f of Object.values(this.files)) writeFileSync(f, '');
  }

  /** Characters of lines not yet flushed. */
  get bufferedChars(): number {
    return this.buffered;
  }

  /** Adds one resolved row; `r.firstOfItem` decides whether it also gives the item's prompt row. */
  add(r: ResolvedRow): void {
    const v = r.value;
    const p = this.partitionOf(v.model, v.language);
    const map = this.mapOf(v.reading_map as ReadingMap | null | undefined);
    // Plain JSON.stringify of the row (no key list): V8's fast path; DuckDB reads the columns by name.
    if (r.firstOfItem) {
      const prompt: Staged<PromptRow, 'prompts'> = {
        item_id: r.item_id,
        prompt_key: r.prompt_key,
        model: v.model,
        language: v.language,
        story: v.story,
        story_group: v.story_group,
        concept_pair: v.concept_pair,
        form: v.form,
        constraint: v.constraint,
        named: v.named,
        option_order: v.option_order,
        repeat: v.repeat,
        construction: v.construction,
        messages_json: v.prompt ? canonicalJson([{ role: 'user', content: v.prompt }]) : NO_MESSAGES_JSON,
        reading_map_json: map?.json ?? NO_MAP_JSON,
        prop_p: v.prop_p ?? '',
        prop_notp: v.prop_notp ?? '',
      };
      this.push('prompts', JSON.stringify(prompt));
      p.prompts++;
    }
    const reply: Staged<ReplyRow, 'replies'> = {
      item_id: r.item_id,
      model: v.model,
      language: v.language,
      attempt: r.attempt,
      status: r.status,
      text: v.text,
      input_tokens: v.input_tokens ?? 0,
      output_tokens: v.output_tokens ?? 0,
      cost_usd: v.cost_usd ?? 0,
      error_class: r.status === 'error' ? 'imported' : null,
      error_message: v.error_message ?? null,
      provider: v.provider ?? `byo/${v.model}`,
      simulated: v.simulated ?? false,
      created_at: v.created_at ?? '',
    };
    this.push('replies', JSON.stringify(reply));
    p.replies++;
    for (const reading of v.readings ?? []) {
      const row: Staged<ReadingRow, 'readings'> = {
        item_id: r.item_id,
        model: v.model,
        language: v.language,
        reader: reading.reader,
        label: reading.label,
        raw: reading.raw ?? null,
      };
      this.push('readings', JSON.stringify(row));
      this.readingsGiven++;
    }
    if (r.status === 'ok' && v.text !== null && map) {
      for (const reading of ruleReadings(v.text, map.map, v.language)) {
        this.push('rule', JSON.stringify({ item_id: r.item_id, attempt: r.attempt, reader: reading.reader, label: reading.label, raw: reading.raw }));
      }
    }
  }

  /** Appends every buffered line to its staging file. */
  async flush(): Promise<void> {
    const buffers = this.buffers;
    this.buffers = { prompts: [], replies: [], readings: [], rule: [] };
    this.buffered = 0;
    for (const kind of STAGE_KINDS) {
      const lines = buffers[kind];
      if (lines.length > 0) await appendFile(this.files[kind], `${lines.join('\n')}\n`);
    }
  }

  /**
   * Writes the three tables under `root` (`<table>/model=<m>/language=<l>/part-….parquet`, zstd,
   * partition columns in the path only); a partition without readings has no readings part.
   */
  async finish(root: string): Promise<WrittenTables> {
    await this.flush();
    const db = await DuckDb.open();
    try {
      // A partitioned COPY buffers up to 524,288 rows per thread by default before writing: at a
      // million replies that is most of them, past the memory limit. Rows within a part need no order.
      await db.run(`SET partitioned_write_flush_threshold = ${PARTITIONED_FLUSH_ROWS}`);
      await db.run('SET preserve_insertion_order = false');
      const constants = constantColumns(this.campaign);
      await copyPartitioned(db, `SELECT * FROM ${ndjson(this.files.prompts, [...tableColumns('prompts', FAR6_PROMPT_COLUMNS), ...PARTITION])}`, 'prompts', constants.prompts, path.join(root, 'prompts'));
      await copyPartitioned(db, `SELECT * FROM ${ndjson(this.files.replies, [...TABLE_SCHEMAS.replies, ...PARTITION])}`, 'replies', constants.replies, path.join(root, 'replies'));
      const readings = await chosenRuleReadings(db, this.files, this.campaign);
      if (readings.given + readings.computed > 0) {
        await copyPartitioned(db, 'SELECT * FROM given_readings UNION ALL SELECT * FROM computed_readings', 'readings', constants.readings, path.join(root, 'readings'));
      }
      const perPartition = await db.all<{ model: string; language: string; n: number }>(
        'SELECT model, language, count(*) AS n FROM (SELECT model, language FROM given_readings UNION ALL SELECT model, language FROM computed_readings) GROUP BY ALL',
      );
      const readingCount = new Map(perPartition.map((r) => [`${r.model}\u0000${r.language}`, r.n]));
      return {
        partitions: [...this.partitions.entries()].map(([key, p]) => ({ ...p, readings: readingCount.get(key) ?? 0 })),
        readingsGiven: this.readingsGiven,
        readingsComputed: readings.computed,
      };
    } finally {
      db.close();
    }
  }

  private push(kind: StageKind, line: string): void {
    this.buffers[kind].push(line);
    this.buffered += line.length;
  }

  private partitionOf(model: string, language: Language): { prompts: number; replies: number } {
    const key = `${model}\u0000${language}`;
    let p = this.partitions.get(key);
    if (!p) {
      assertSafeSegment('model id', model);
      this.partitions.set(key, (p = { model, language, prompts: 0, replies: 0 }));
    }
    return p;
  }

  private mapOf(given: ReadingMap | null | undefined): { readonly json: string; readonly map: ReadingMap } | undefined {
    if (!given) return undefined;
    const plain = JSON.stringify(given);
    let entry = this.maps.get(plain);
    if (!entry) this.maps.set(plain, (entry = { json: canonicalJson(given), map: given }));
    return entry;
  }
}

function ndjson(file: string, cols: readonly Column[]): string {
  const columns = `{${cols.map((c) => `${sqlString(c.name)}: ${sqlString(c.type)}`).join(', ')}}`;
  return `read_ndjson(${sqlString(file)}, columns = ${columns}, format = 'newline_delimited')`;
}

/** The columns `constantColumns` fills, per table. */
interface ConstantKeys {
  prompts: 'campaign' | 'phase' | 'battery' | 'settings_json' | 'source_item_id';
  replies: 'campaign' | 'phase' | 'finish_reason' | 'latency_ms' | 'logprobs_json' | 'settings_json';
  readings: 'campaign' | 'phase' | 'judge_item_id' | 'facet' | 'value';
}
/** A staged line: the row less its constant columns (the compiler still checks every other field). */
type Staged<R, T extends keyof ConstantKeys> = Omit<R, ConstantKeys[T]>;

/**
 * Columns every row of a table has the same value in, as SQL literals: they are left out of the
 * staged lines (a quarter of their size) and put back when the Parquet parts are written.
 */
function constantColumns(campaign: string): { readonly [T in keyof ConstantKeys]: Readonly<Record<ConstantKeys[T], string>> } {
  const common = { campaign: sqlString(campaign), phase: sqlString(PHASE) };
  return {
    prompts: { ...common, battery: sqlString('far6'), settings_json: sqlString(EMPTY_SETTINGS), source_item_id: 'NULL' },
    replies: { ...common, finish_reason: 'NULL', latency_ms: '0', logprobs_json: 'NULL', settings_json: sqlString(EMPTY_SETTINGS) },
    readings: { ...common, judge_item_id: 'NULL', facet: 'NULL', value: 'NULL' },
  };
}

/** `select` (the table's columns plus model and language) as Parquet parts in the hive layout under `dir`. */
async function copyPartitioned(db: DuckDb, select: string, table: 'prompts' | 'replies' | 'readings', constants: Readonly<Record<string, string>>, dir: string): Promise<void> {
  const cols = [...tableColumns(table, FAR6_PROMPT_COLUMNS), ...PARTITION]
    .map((c) => (constants[c.name] === undefined ? sqlIdent(c.name) : `CAST(${constants[c.name]} AS ${c.type}) AS ${sqlIdent(c.name)}`))
    .join(', ');
  await mkdir(dir, { recursive: true });
  await db.run(
    `COPY (SELECT ${cols} FROM (${select})) TO ${sqlString(dir)} ` +
      `(FORMAT parquet, COMPRESSION zstd, PARTITION_BY (model, language), FILENAME_PATTERN 'part-{i}')`,
  );
}

/**
 * Temp tables `given_readings` (the readings the rows gave) and `computed_readings` (the rule
 * readings of each item's chosen reply for readers not given for that item), both with the
 * readings columns plus model and language. Returns their sizes.
 */
async function chosenRuleReadings(db: DuckDb, files: Readonly<Record<StageKind, string>>, campaign: string): Promise<{ given: number; computed: number }> {
  const schema = [...TABLE_SCHEMAS.readings, ...PARTITION];
  // The rule's rows carry only what varies; the rest comes from the reply row, as a run writes it.
  const constant: Readonly<Record<string, string>> = { campaign: sqlString(campaign), phase: sqlString(PHASE), judge_item_id: 'NULL::VARCHAR', facet: 'NULL::VARCHAR', value: 'NULL::DOUBLE' };
  const from: Readonly<Record<string, string>> = { model: 'chosen.model', language: 'chosen.language' };
  const computedSelect = schema.map((c) => `${constant[c.name] ?? from[c.name] ?? `r.${sqlIdent(c.name)}`} AS ${sqlIdent(c.name)}`).join(', ');
  const replies = ndjson(files.replies, [
    { name: 'item_id', type: 'VARCHAR' },
    { name: 'attempt', type: 'INTEGER' },
    { name: 'status', type: 'VARCHAR' },
    ...PARTITION,
  ]);
  await db.run(`CREATE OR REPLACE TEMP TABLE given_readings AS SELECT ${schema.map((c) => sqlIdent(c.name)).join(', ')} FROM ${ndjson(files.readings, schema)}`);
  await db.run(
    `CREATE OR REPLACE TEMP TABLE computed_readings AS
     SELECT ${computedSelect}
     FROM ${ndjson(files.rule, RULE_COLUMNS)} r
     JOIN (
       SELECT item_id, min(attempt) AS attempt, any_value(model) AS model, any_value(language) AS language
       FROM ${replies} WHERE status = 'ok' GROUP BY item_id
     ) chosen ON chosen.item_id = r.item_id AND chosen.attempt = r.attempt
     WHERE NOT EXISTS (SELECT 1 FROM given_readings g WHERE g.item_id = r.item_id AND g.reader = r.reader)`,
  );
  const [n] = await db.all<{ given: number; computed: number }>(
    'SELECT (SELECT count(*) FROM given_readings) AS given, (SELECT count(*) FROM computed_readings) AS computed',
  );
  return { given: n?.given ?? 0, computed: n?.computed ?? 0 };
}
