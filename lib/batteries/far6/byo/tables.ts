/**
 * Accepted reply rows → the three campaign tables (lib/store/schemas.ts), partitioned by model and
 * language in the hive layout, so that the analysis reads them exactly as it reads a run's.
 */
import { writeFileSync } from 'node:fs';
import { mkdir, open, writeFile } from 'node:fs/promises';
import path from 'node:path';
import type { Language } from '../types.js';
import { DuckDb, PARTITION_COLUMNS, TABLE_SCHEMAS, assertSafeSegment, sqlIdent, sqlString, tableColumns } from '../../../api/battery.js';
import { FAR6_PROMPT_COLUMNS } from '../promptColumns.js';
import type { WrittenPartition } from './types.js';
import type { ConstantKeys, PreparedRow, StagedReadingMap } from './rowLines.js';
import type { RetriedItem } from './validate.js';

const PHASE = 'generate';
const EMPTY_SETTINGS = '{}';
/** Rows a partitioned COPY buffers per thread before writing them out (bounds DuckDB's memory). */
const PARTITIONED_FLUSH_ROWS = 25_000;
/** Each of TableSink.finish's two DuckDB instances: together about the one instance's cap elsewhere (DuckDb.open). */
const WRITER_MEMORY = '256MB';

/**
 * The staged lines: the three tables' rows (NDJSON, partition columns included); and `rule`, the
 * token rule's readings of every ok reply with its attempt and partition, of which the chosen
 * reply's are kept when the tables are written (the items with retries and their chosen attempts
 * come from RowResolver.retriedItems; any other item's one row is its chosen reply).
 */
export type StageKind = 'prompts' | 'replies' | 'readings' | 'rule';
const STAGE_KINDS: readonly StageKind[] = ['prompts', 'replies', 'readings', 'rule'];
const noLines = (): Record<StageKind, (string | Uint8Array)[]> => ({ prompts: [], replies: [], readings: [], rule: [] });

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
  ...PARTITION,
];
const READING_MAP_COLUMNS: readonly Column[] = [
  { name: 'key', type: 'VARCHAR' },
  { name: 'json', type: 'VARCHAR' },
];
const RETRIED_COLUMNS: readonly Column[] = [
  { name: 'item_id', type: 'VARCHAR' },
  { name: 'attempt', type: 'INTEGER' },
];

/** What `TableSink.finish` wrote: rows per partition and the readings' origin. */
export interface WrittenTables {
  readonly partitions: readonly WrittenPartition[];
  readonly readingsGiven: number;
  readonly readingsComputed: number;
}

/**
 * Accepted rows → the three tables, without holding the rows: `add` buffers a row's table lines
 * (rowLines.ts: a prompt row for an item's first row, a reply row, its given readings and the
 * token rule's readings of an ok reply); `flush` appends the buffers to NDJSON
 * staging files (the import flushes after every chunk past a size, so memory is bounded by a
 * chunk's lines); `finish` writes each table with one DuckDB COPY, partitioned by model and
 * language in the hive layout, as a run's parts are.
 *
 * The rule readings kept are those of the item's chosen reply (chosen_replies.sql: the lowest ok
 * attempt; attempts are unique per item, so no tie is left; `finish` is told the retried items'
 * chosen attempts by RowResolver, which sees every accepted row), for every rule reader the rows did
 * not already give (Same Judgment, Different Yes §3: R on every map but `none`, R+ as well on verdict maps).
 */
export class TableSink {
  private readonly files: Readonly<Record<StageKind, string>>;
  private readonly retriedFile: string;
  private readonly readingMapsFile: string;
  /** The reading maps the prompt lines name (`reading_map_key` → canonical JSON): a few dozen, held until `finish`. */
  private readonly readingMaps = new Map<string, string>();
  // Lines (strings, without their newline) or packed bytes (packedRows.ts: whole lines, newlines
  // included), in the order they were staged.
  private buffers = noLines();
  private readonly partitions = new Map<string, { model: string; language: Language; prompts: number; replies: number }>();
  private buffered = 0;
  private readingsGiven = 0;

  /** `stageDir`: an empty folder for the staging files (the caller removes it). */
  constructor(
    stageDir: string,
    private readonly campaign: string,
  ) {
    this.files = Object.fromEntries(STAGE_KINDS.map((k) => [k, path.join(stageDir, `${k}.ndjson`)])) as Record<StageKind, string>;
    this.retriedFile = path.join(stageDir, 'retried.ndjson');
    this.readingMapsFile = path.join(stageDir, 'reading_maps.ndjson');
    // Every staging file exists, so that DuckDB reads an empty one as no rows.
    for (const f of Object.values(this.files)) writeFileSync(f, '');
  }

  /** Characters (or bytes, for packed lines) of lines not yet flushed. */
  get bufferedChars(): number {
    return this.buffered;
  }

  /**
   * Stages a row the checks across rows accepted: its prompt row when it is its item's first
   * (`firstOfItem`), its reply, its readings and its token rule readings.
   */
  add(r: PreparedRow, firstOfItem: boolean): void {
    if (r.ruleError !== undefined) throw r.ruleError;
    this.count(r.model, r.language, firstOfItem, r.readingLines.length);
    if (firstOfItem) {
      this.addReadingMap(r.readingMap);
      this.push('prompts', r.promptLine);
    }
    this.push('replies', r.replyLine);
    for (const line of r.readingLines) this.push('readings', line);
    for (const line of r.ruleLines) this.push('rule', line);
  }

  /** Counts an accepted row whose lines come packed (`addBytes`): its partition's rows and the readings it gives. */
  count(model: string, language: Language, firstOfItem: boolean, readingsGiven: number): void {
    const p = this.partitionOf(model, language);
    if (firstOfItem) p.prompts++;
    p.replies++;
    this.readingsGiven += readingsGiven;
  }

  /** Stages a reading map that prompt lines name by key (the first of each key is kept: the key is a hash of the JSON). */
  addReadingMap(m: StagedReadingMap): void {
    if (!this.readingMaps.has(m.key)) this.readingMaps.set(m.key, m.json);
  }

  /** Stages whole lines already encoded (each ending in a newline), after the lines staged before. */
  addBytes(kind: StageKind, bytes: Uint8Array): void {
    if (bytes.length === 0) return;
    this.buffers[kind].push(bytes);
    this.buffered += bytes.length;
  }

  /** Appends every buffered line to its staging file. */
  async flush(): Promise<void> {
    const buffers = this.buffers;
    this.buffers = noLines();
    this.buffered = 0;
    for (const kind of STAGE_KINDS) {
      const parts = buffers[kind];
      if (parts.length > 0) await appendParts(this.files[kind], staged(parts));
    }
  }

  /**
   * Writes the three tables under `root` (`<table>/model=<m>/language=<l>/part-….parquet`, zstd,
   * partition columns in the path only); a partition without readings has no readings part.
   * Two DuckDB instances of one thread each write at the same time, one the prompts, the other the
   * readings and then the replies (about as long at a million rows: 3.5 s against 3.1 s + 1.8 s):
   * a partitioned COPY on one thread takes about a fifth less CPU than on two, so two at once
   * finish sooner than one after the other on two threads.
   */
  async finish(root: string, retried: readonly RetriedItem[]): Promise<WrittenTables> {
    await this.flush();
    await writeFile(this.retriedFile, retried.map((r) => `${JSON.stringify(r)}\n`).join(''));
    await writeFile(this.readingMapsFile, [...this.readingMaps].map(([key, json]) => `${JSON.stringify({ key, json })}\n`).join(''));
    const writers = await openWriters();
    try {
      const [readingsDb, promptsDb] = writers;
      const constants = constantColumns(this.campaign);
      const readingsAndReplies = async (): Promise<{ computed: number; perPartition: { model: string; language: string; n: number }[] }> => {
        const readings = await chosenRuleReadings(readingsDb, this.files.readings, this.files.rule, this.retriedFile, this.campaign);
        if (readings.given + readings.computed > 0) {
          await copyPartitioned(readingsDb, 'SELECT * FROM given_readings UNION ALL SELECT * FROM computed_readings', 'readings', constants.readings, path.join(root, 'readings'));
        }
        const perPartition = await readingsDb.all<{ model: string; language: string; n: number }>(
          'SELECT model, language, count(*) AS n FROM (SELECT model, language FROM given_readings UNION ALL SELECT model, language FROM computed_readings) GROUP BY ALL',
        );
        await copyPartitioned(readingsDb, `SELECT * FROM ${ndjson(this.files.replies, [...TABLE_SCHEMAS.replies, ...PARTITION])}`, 'replies', constants.replies, path.join(root, 'replies'));
        return { computed: readings.computed, perPartition };
      };
      const promptsTable = async (): Promise<void> => {
        await copyPartitioned(promptsDb, await promptsWithMaps(promptsDb, this.files.prompts, this.readingMapsFile), 'prompts', constants.prompts, path.join(root, 'prompts'));
      };
      // Both settle before the instances close, even when one fails.
      const [readingsDone, tablesDone] = await Promise.allSettled([readingsAndReplies(), promptsTable()]);
      if (readingsDone.status === 'rejected') throw readingsDone.reason;
      if (tablesDone.status === 'rejected') throw tablesDone.reason;
      const readings = readingsDone.value;
      const readingCount = new Map(readings.perPartition.map((r) => [`${r.model}\u0000${r.language}`, r.n]));
      return {
        partitions: [...this.partitions.entries()].map(([key, p]) => ({ ...p, readings: readingCount.get(key) ?? 0 })),
        readingsGiven: this.readingsGiven,
        readingsComputed: readings.computed,
      };
    } finally {
      for (const db of writers) db.close();
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
}

/**
 * Staged parts as the file's next bytes: runs of lines joined, each ending in a newline, and packed
 * bytes as they are (not copied into one buffer: appendParts writes them as they lie).
 */
function staged(parts: readonly (string | Uint8Array)[]): Uint8Array[] {
  const out: Uint8Array[] = [];
  let lines: string[] = [];
  const endLines = (): void => {
    if (lines.length > 0) out.push(Buffer.from(`${lines.join('\n')}\n`));
    lines = [];
  };
  for (const p of parts) {
    if (typeof p === 'string') lines.push(p);
    else {
      endLines();
      out.push(p);
    }
  }
  endLines();
  return out;
}

/** Appends `parts` to `file` in one gathered write. */
async function appendParts(file: string, parts: readonly Uint8Array[]): Promise<void> {
  const fh = await open(file, 'a');
  try {
    const { bytesWritten } = await fh.writev(parts);
    const expected = parts.reduce((n, p) => n + p.length, 0);
    // libuv writes every buffer (resuming after a short write); a shortfall would lose lines silently.
    if (bytesWritten !== expected) throw new Error(`${file}: wrote ${bytesWritten} of ${expected} bytes of staged lines`);
  } finally {
    await fh.close();
  }
}

function ndjson(file: string, cols: readonly Column[]): string {
  const columns = `{${cols.map((c) => `${sqlString(c.name)}: ${sqlString(c.type)}`).join(', ')}}`;
  return `read_ndjson(${sqlString(file)}, columns = ${columns}, format = 'newline_delimited')`;
}

/** TableSink.finish's two writers; when one fails to open, the other is closed before the error goes on. */
async function openWriters(): Promise<[DuckDb, DuckDb]> {
  const [a, b] = await Promise.allSettled([openWriter(), openWriter()]);
  if (a.status === 'fulfilled' && b.status === 'fulfilled') return [a.value, b.value];
  if (a.status === 'fulfilled') a.value.close();
  if (b.status === 'fulfilled') b.value.close();
  throw a.status === 'rejected' ? a.reason : (b as PromiseRejectedResult).reason;
}

/** A DuckDB instance of one thread for TableSink.finish. */
async function openWriter(): Promise<DuckDb> {
  const db = await DuckDb.open({ threads: 1, memoryLimit: WRITER_MEMORY });
  try {
    // A partitioned COPY buffers up to 524,288 rows per thread by default before writing: at a
    // million replies that is most of them, past the memory limit. Rows within a part need no order.
    await db.run(`SET partitioned_write_flush_threshold = ${PARTITIONED_FLUSH_ROWS}`);
    await db.run('SET preserve_insertion_order = false');
    return db;
  } catch (err) {
    db.close();
    throw err;
  }
}

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
      // OVERWRITE: the folder is new, but a COPY that ran out of memory is run again (DuckDb.run) over what it wrote.
      `(FORMAT parquet, COMPRESSION zstd, PARTITION_BY (model, language), FILENAME_PATTERN 'part-{i}', OVERWRITE true)`,
  );
}

/**
 * The staged prompt lines with each one's reading map put back from the staged maps (loaded into a
 * temp table first, so that the join is built on the few maps and the prompt lines stream through).
 * A key without its map is an error, never a row lost or a map left empty.
 */
async function promptsWithMaps(db: DuckDb, promptsFile: string, readingMapsFile: string): Promise<string> {
  await db.run(`CREATE OR REPLACE TEMP TABLE reading_maps AS SELECT * FROM ${ndjson(readingMapsFile, READING_MAP_COLUMNS)}`);
  const staged = tableColumns('prompts', FAR6_PROMPT_COLUMNS).map((c) => (c.name === 'reading_map_json' ? { name: 'reading_map_key', type: 'VARCHAR' } : c));
  return (
    `SELECT p.* EXCLUDE (reading_map_key), coalesce(m.json, error('no staged reading map for key ' || p.reading_map_key)) AS reading_map_json ` +
    `FROM ${ndjson(promptsFile, [...staged, ...PARTITION])} p LEFT JOIN reading_maps m ON m.key = p.reading_map_key`
  );
}

/**
 * Temp tables `given_readings` (the readings the rows gave) and `computed_readings` (the rule
 * readings of each item's chosen reply for readers not given for that item), both with the
 * readings columns plus model and language. An item not in `retriedFile` has one row, so its rule
 * readings (of an ok reply) are its chosen reply's; a retried item's are those of the attempt
 * `retriedFile` names (none when no attempt is ok). Returns their sizes.
 */
async function chosenRuleReadings(db: DuckDb, readingsFile: string, ruleFile: string, retriedFile: string, campaign: string): Promise<{ given: number; computed: number }> {
  const schema = [...TABLE_SCHEMAS.readings, ...PARTITION];
  // The rule's rows carry only what varies; the rest comes from the reply row, as a run writes it.
  const constant: Readonly<Record<string, string>> = { campaign: sqlString(campaign), phase: sqlString(PHASE), judge_item_id: 'NULL::VARCHAR', facet: 'NULL::VARCHAR', value: 'NULL::DOUBLE', read_with: 'NULL::VARCHAR' };
  const computedSelect = schema.map((c) => `${constant[c.name] ?? `r.${sqlIdent(c.name)}`} AS ${sqlIdent(c.name)}`).join(', ');
  await db.run(`CREATE OR REPLACE TEMP TABLE given_readings AS SELECT ${schema.map((c) => sqlIdent(c.name)).join(', ')} FROM ${ndjson(readingsFile, schema)}`);
  await db.run(
    `CREATE OR REPLACE TEMP TABLE computed_readings AS
     SELECT ${computedSelect}
     FROM ${ndjson(ruleFile, RULE_COLUMNS)} r
     LEFT JOIN ${ndjson(retriedFile, RETRIED_COLUMNS)} retried ON retried.item_id = r.item_id
     WHERE (retried.item_id IS NULL OR retried.attempt = r.attempt)
       AND NOT EXISTS (SELECT 1 FROM given_readings g WHERE g.item_id = r.item_id AND g.reader = r.reader)`,
  );
  const [n] = await db.all<{ given: number; computed: number }>(
    'SELECT (SELECT count(*) FROM given_readings) AS given, (SELECT count(*) FROM computed_readings) AS computed',
  );
  return { given: n?.given ?? 0, computed: n?.computed ?? 0 };
}
