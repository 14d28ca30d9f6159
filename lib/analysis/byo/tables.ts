/**
 * Resolved reply rows → the three campaign tables (lib/store/schemas.ts), partitioned by model and
 * language in the hive layout, so that the analysis reads them exactly as it reads a run's.
 */
import { writeFileSync } from 'node:fs';
import { appendFile, mkdir } from 'node:fs/promises';
import path from 'node:path';
import { canonicalJson } from '../../design/hash.js';
import type { Language, ReadingMap } from '../../design/types.js';
import { readOpening, readOpeningPlus, readerIds } from '../../read/index.js';
import { DuckDb, sqlIdent, sqlString } from '../../store/DuckDb.js';
import { ParquetWriter } from '../../store/ParquetWriter.js';
import { TABLE_SCHEMAS } from '../../store/schemas.js';
import type { PromptRow } from '../../store/schemas.js';
import type { ReadingRow, ReplyRow } from '../../store/types.js';
import { assertSafeSegment } from '../../store/layout.js';
import type { WrittenPartition } from './types.js';
import type { ResolvedRow } from './validate.js';

const PHASE = 'generate';
const EMPTY_SETTINGS = '{}';
const NO_MAP_JSON = canonicalJson({ kind: 'none', tokens: {} });

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

/** One model × language: its staging files and the lines not yet appended to them. */
interface Partition {
  readonly model: string;
  readonly language: Language;
  readonly campaign: string;
  readonly files: Readonly<Record<StageKind, string>>;
  readonly buffers: Record<StageKind, string[]>;
  prompts: number;
  replies: number;
}

/**
 * The staged lines of a partition: the three tables' rows (NDJSON, stored columns in schema
 * order) and `rule`, the token rule's readings of every ok reply with its attempt, of which the
 * chosen reply's are kept when the tables are written.
 */
type StageKind = 'prompts' | 'replies' | 'readings' | 'rule';
const STAGE_KINDS: readonly StageKind[] = ['prompts', 'replies', 'readings', 'rule'];
const PROMPT_KEYS = TABLE_SCHEMAS.prompts.map((c) => c.name);
const REPLY_KEYS = TABLE_SCHEMAS.replies.map((c) => c.name);
const READING_KEYS = TABLE_SCHEMAS.readings.map((c) => c.name);
const RULE_KEYS = ['item_id', 'attempt', 'reader', 'label', 'raw'];

/** What `TableSink.finish` wrote: rows per partition and the readings' origin. */
export interface WrittenTables {
  readonly partitions: readonly WrittenPartition[];
  readonly readingsGiven: number;
  readonly readingsComputed: number;
}

/**
 * Resolved rows → the three tables, without holding the rows: `add` turns a row into its table
 * lines at once (a prompt row for an item's first row, a reply row, its given readings and the
 * token rule's readings of an ok reply) and buffers them per model × language; `flush` appends the
 * buffers to per-partition NDJSON staging files (the import flushes after every chunk, so memory
 * is bounded by one chunk's lines); `finish` converts each partition to Parquet with DuckDB.
 *
 * The rule readings kept are those of the item's chosen reply (chosen_replies.sql: the lowest ok
 * attempt; attempts are unique per item, so no tie is left), for every rule reader the rows did
 * not already give (seed 000 §3: R on every map but `none`, R+ as well on verdict maps).
 */
export class TableSink {
  private readonly partitions = new Map<string, Partition>();
  // One object per distinct map (the rule compiles its matcher once per map object, readOpening),
  // looked up by the map's plain JSON text, which is much cheaper than canonicalJson per row.
  private readonly maps = new Map<string, { readonly json: string; readonly map: ReadingMap }>();
  private buffered = 0;
  private readingsGiven = 0;

  constructor(
    private readonly stageDir: string,
    private readonly campaign: string,
  ) {}

  /** Characters of lines not yet flushed. */
  get bufferedChars(): number {
    return this.buffered;
  }

  /** Adds one resolved row; `r.firstOfItem` decides whether it also gives the item's prompt row. */
  add(r: ResolvedRow): void {
    const v = r.value;
    const p = this.partitionOf(v.model, v.language);
    const map = this.mapOf(v.reading_map as ReadingMap | null | undefined);
    const campaign = this.campaign;
    if (r.firstOfItem) {
      const prompt: PromptRow = {
        item_id: r.item_id,
        prompt_key: r.prompt_key,
        campaign,
        phase: PHASE,
        model: v.model,
        language: v.language,
        battery: 'far6',
        story: v.story,
        story_group: v.story_group,
        concept_pair: v.concept_pair,
        form: v.form,
        constraint: v.constraint,
        named: v.named,
        option_order: v.option_order,
        repeat: v.repeat,
        construction: v.construction,
        messages_json: canonicalJson(v.prompt ? [{ role: 'user', content: v.prompt }] : []),
        settings_json: EMPTY_SETTINGS,
        reading_map_json: map?.json ?? NO_MAP_JSON,
        prop_p: v.prop_p ?? '',
        prop_notp: v.prop_notp ?? '',
        source_item_id: null,
      };
      this.push(p, 'prompts', JSON.stringify(prompt, PROMPT_KEYS));
      p.prompts++;
    }
    const reply: ReplyRow = {
      item_id: r.item_id,
      campaign,
      phase: PHASE,
      model: v.model,
      language: v.language,
      attempt: r.attempt,
      status: r.status,
      text: v.text,
      finish_reason: null,
      input_tokens: v.input_tokens ?? 0,
      output_tokens: v.output_tokens ?? 0,
      cost_usd: v.cost_usd ?? 0,
      latency_ms: 0,
      logprobs_json: null,
      error_class: r.status === 'error' ? 'imported' : null,
      error_message: v.error_message ?? null,
      settings_json: EMPTY_SETTINGS,
      provider: v.provider ?? `byo/${v.model}`,
      simulated: v.simulated ?? false,
      created_at: v.created_at ?? '',
    };
    this.push(p, 'replies', JSON.stringify(reply, REPLY_KEYS));
    p.replies++;
    for (const reading of v.readings ?? []) {
      const row: ReadingRow = {
        item_id: r.item_id,
        campaign,
        phase: PHASE,
        model: v.model,
        language: v.language,
        reader: reading.reader,
        label: reading.label,
        raw: reading.raw ?? null,
        judge_item_id: null,
      };
      this.push(p, 'readings', JSON.stringify(row, READING_KEYS));
      this.readingsGiven++;
    }
    if (r.status === 'ok' && v.text !== null && map) {
      for (const reading of ruleReadings(v.text, map.map, v.language)) {
        this.push(p, 'rule', JSON.stringify({ item_id: r.item_id, attempt: r.attempt, ...reading }, RULE_KEYS));
      }
    }
  }

  /** Appends every buffered line to its staging file. */
  async flush(): Promise<void> {
    for (const p of this.partitions.values()) {
      for (const kind of STAGE_KINDS) {
        const lines = p.buffers[kind];
        if (lines.length === 0) continue;
        p.buffers[kind] = [];
        await appendFile(p.files[kind], `${lines.join('\n')}\n`);
      }
    }
    this.buffered = 0;
  }

  /**
   * Writes every partition's tables under `root` (hive layout, `part-0001.parquet` per partition
   * and table; no readings part where a partition has none), one partition at a time.
   */
  async finish(root: string): Promise<WrittenTables> {
    await this.flush();
    const writer = await ParquetWriter.create({ tmpDir: this.stageDir });
    const db = await DuckDb.open();
    const partitions: WrittenPartition[] = [];
    let readingsComputed = 0;
    try {
      for (const p of this.partitions.values()) {
        await writer.convert('prompts', p.files.prompts, tablePartPath(root, 'prompts', p.model, p.language));
        await writer.convert('replies', p.files.replies, tablePartPath(root, 'replies', p.model, p.language));
        const { given, computed } = await writeReadings(db, p, tablePartPath(root, 'readings', p.model, p.language));
        readingsComputed += computed;
        partitions.push({ model: p.model, language: p.language, prompts: p.prompts, replies: p.replies, readings: given + computed });
      }
    } finally {
      db.close();
      await writer.close();
    }
    return { partitions, readingsGiven: this.readingsGiven, readingsComputed };
  }

  private push(p: Partition, kind: StageKind, line: string): void {
    p.buffers[kind].push(line);
    this.buffered += line.length;
  }

  private partitionOf(model: string, language: Language): Partition {
    const key = `${model}\u0000${language}`;
    let p = this.partitions.get(key);
    if (!p) {
      assertSafeSegment('model id', model);
      const base = path.join(this.stageDir, `p${this.partitions.size}`);
      const files = Object.fromEntries(STAGE_KINDS.map((k) => [k, `${base}.${k}.ndjson`])) as Record<StageKind, string>;
      const buffers = Object.fromEntries(STAGE_KINDS.map((k) => [k, []])) as unknown as Record<StageKind, string[]>;
      // Every staging file exists, so that DuckDB can read an empty one as no rows.
      for (const f of Object.values(files)) writeFileSync(f, '');
      this.partitions.set(key, (p = { model, language, campaign: this.campaign, files, buffers, prompts: 0, replies: 0 }));
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

function columnsSql(cols: readonly { readonly name: string; readonly type: string }[]): string {
  return `{${cols.map((c) => `${sqlString(c.name)}: ${sqlString(c.type)}`).join(', ')}}`;
}

function ndjson(file: string, cols: readonly { readonly name: string; readonly type: string }[]): string {
  return `read_ndjson(${sqlString(file)}, columns = ${columnsSql(cols)}, format = 'newline_delimited')`;
}

/**
 * One partition's readings part: the given readings, then the rule readings of each item's chosen
 * reply for readers not given for that item. Returns how many of each were written.
 */
async function writeReadings(db: DuckDb, p: Partition, target: string): Promise<{ given: number; computed: number }> {
  const schema = TABLE_SCHEMAS.readings;
  const given = ndjson(p.files.readings, schema);
  const rule = ndjson(p.files.rule, [
    { name: 'item_id', type: 'VARCHAR' },
    { name: 'attempt', type: 'INTEGER' },
    { name: 'reader', type: 'VARCHAR' },
    { name: 'label', type: 'VARCHAR' },
    { name: 'raw', type: 'VARCHAR' },
  ]);
  const replies = ndjson(p.files.replies, [
    { name: 'item_id', type: 'VARCHAR' },
    { name: 'attempt', type: 'INTEGER' },
    { name: 'status', type: 'VARCHAR' },
  ]);
  const select = schema.map((c) => sqlIdent(c.name)).join(', ');
  // The rule's rows carry only what varies; the rest is the partition's, as a run writes it.
  const constant: Readonly<Record<string, string>> = { campaign: sqlString(p.campaign), phase: sqlString(PHASE), judge_item_id: 'NULL' };
  const computedSelect = schema.map((c) => (c.name in constant ? `${constant[c.name]} AS ${sqlIdent(c.name)}` : `r.${sqlIdent(c.name)}`)).join(', ');
  await db.run(`CREATE OR REPLACE TEMP TABLE given_readings AS SELECT ${select} FROM ${given}`);
  await db.run(
    `CREATE OR REPLACE TEMP TABLE computed_readings AS
     SELECT ${computedSelect}
     FROM ${rule} r
     JOIN (SELECT item_id, min(attempt) AS attempt FROM ${replies} WHERE status = 'ok' GROUP BY item_id) chosen
       ON chosen.item_id = r.item_id AND chosen.attempt = r.attempt
     WHERE NOT EXISTS (SELECT 1 FROM given_readings g WHERE g.item_id = r.item_id AND g.reader = r.reader)`,
  );
  const [counts] = await db.all<{ given: number; computed: number }>(
    'SELECT (SELECT count(*) FROM given_readings) AS given, (SELECT count(*) FROM computed_readings) AS computed',
  );
  const n = { given: counts?.given ?? 0, computed: counts?.computed ?? 0 };
  if (n.given + n.computed > 0) {
    await mkdir(path.dirname(target), { recursive: true });
    await db.run(
      `COPY (SELECT ${select} FROM given_readings UNION ALL SELECT ${select} FROM computed_readings) ` +
        `TO ${sqlString(target)} (FORMAT parquet, COMPRESSION zstd)`,
    );
  }
  return n;
}

/** `<root>/<table>/model=<m>/language=<l>/part-0001.parquet` */
export function tablePartPath(root: string, table: 'prompts' | 'replies' | 'readings', model: string, language: Language): string {
  assertSafeSegment('model id', model);
  return path.join(root, table, `model=${model}`, `language=${language}`, 'part-0001.parquet');
}

