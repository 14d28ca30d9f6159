/**
 * Resolved reply rows → the three campaign tables (lib/store/schemas.ts), partitioned by model and
 * language in the hive layout, so that the analysis reads them exactly as it reads a run's.
 */
import path from 'node:path';
import { canonicalJson } from '../../design/hash.js';
import type { Language, ReadingMap } from '../../design/types.js';
import { readOpening, readOpeningPlus, readerIds } from '../../read/index.js';
import type { ParquetWriter } from '../../store/ParquetWriter.js';
import type { PromptRow } from '../../store/schemas.js';
import type { ReadingRow, ReplyRow } from '../../store/types.js';
import { assertSafeSegment } from '../../store/layout.js';
import type { ResolvedRow } from './validate.js';

const PHASE = 'generate';
const EMPTY_SETTINGS = '{}';
const NO_MAP: ReadingMap = { kind: 'none', tokens: {} };

interface Partition {
  readonly model: string;
  readonly language: Language;
  readonly prompts: Map<string, PromptRow>;
  readonly replies: ReplyRow[];
  readonly readings: ReadingRow[];
}

export interface BuiltTables {
  readonly partitions: readonly Partition[];
  readonly readingsGiven: number;
  readonly readingsComputed: number;
}

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

/** What the token rule needs of an item's chosen reply (not the whole row). */
interface Chosen {
  readonly attempt: number;
  readonly created_at: string;
  readonly text: string;
  readonly map: ReadingMap | undefined;
  readonly partition: Partition;
  readonly language: Language;
}

/** Whether `a` is the reply the analysis takes before `b` (chosen_replies.sql: lowest attempt, then created_at). */
function before(a: Chosen, b: Chosen): boolean {
  if (a.attempt !== b.attempt) return a.attempt < b.attempt;
  return a.created_at < b.created_at;
}

/**
 * Builds the rows of the three tables. Readings given on a row are kept as they are (named by the
 * row's item); where an item has a reading map, the rule readings (R, and R+ on verdict maps) are
 * computed from its chosen reply (the lowest ok attempt) for every rule reader the rows did not
 * already supply.
 */
export function buildTables(rows: readonly ResolvedRow[], campaign: string): BuiltTables {
  const builder = tableBuilder(campaign);
  for (const r of rows) builder.add(r);
  return builder.finish();
}

/** `buildTables` one row at a time: `add` each resolved row, then `finish`. */
export function tableBuilder(campaign: string): { add(r: ResolvedRow): void; finish(): BuiltTables } {
  const partitions = new Map<string, Partition>();
  const chosen = new Map<string, Chosen>();
  const given = new Map<string, Set<string>>();
  // One object per distinct map: the rule compiles its matcher once per map object (readOpening).
  const maps = new Map<string, ReadingMap>();
  const mapOf = (r: ResolvedRow): { json: string; map: ReadingMap | undefined } => {
    const given = r.value.reading_map as ReadingMap | null | undefined;
    const json = canonicalJson(given ?? NO_MAP);
    if (!given) return { json, map: undefined };
    let map = maps.get(json);
    if (!map) maps.set(json, (map = given));
    return { json, map };
  };
  let readingsGiven = 0;
  let readingsComputed = 0;
  const partitionOf = (r: ResolvedRow): Partition => {
    const key = `${r.value.model}\u0000${r.value.language}`;
    let p = partitions.get(key);
    if (!p) partitions.set(key, (p = { model: r.value.model, language: r.value.language, prompts: new Map(), replies: [], readings: [] }));
    return p;
  };
  const add = (r: ResolvedRow): void => {
    const v = r.value;
    const p = partitionOf(r);
    const readingMap = mapOf(r);
    if (!p.prompts.has(r.item_id)) {
      p.prompts.set(r.item_id, {
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
        reading_map_json: readingMap.json,
        prop_p: v.prop_p ?? '',
        prop_notp: v.prop_notp ?? '',
        source_item_id: null,
      });
    }
    p.replies.push({
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
    });
    for (const reading of v.readings ?? []) {
      p.readings.push({
        item_id: r.item_id,
        campaign,
        phase: PHASE,
        model: v.model,
        language: v.language,
        reader: reading.reader,
        label: reading.label,
        raw: reading.raw ?? null,
        judge_item_id: null,
      });
      let readers = given.get(r.item_id);
      if (!readers) given.set(r.item_id, (readers = new Set()));
      readers.add(reading.reader);
      readingsGiven++;
    }
    if (r.status === 'ok' && v.text !== null) {
      const candidate: Chosen = { attempt: r.attempt, created_at: v.created_at ?? '', text: v.text, map: readingMap.map, partition: p, language: v.language };
      const current = chosen.get(r.item_id);
      if (!current || before(candidate, current)) chosen.set(r.item_id, candidate);
    }
  };
  const finish = (): BuiltTables => {
    for (const [itemId, c] of chosen) {
      if (!c.map) continue;
      const have = given.get(itemId);
      for (const reading of ruleReadings(c.text, c.map, c.language)) {
        if (have?.has(reading.reader)) continue;
        c.partition.readings.push({
          item_id: itemId,
          campaign,
          phase: PHASE,
          model: c.partition.model,
          language: c.partition.language,
          reader: reading.reader,
          label: reading.label,
          raw: reading.raw,
          judge_item_id: null,
        });
        readingsComputed++;
      }
    }
    chosen.clear();
    return { partitions: [...partitions.values()], readingsGiven, readingsComputed };
  };
  return { add, finish };
}

/** `<root>/<table>/model=<m>/language=<l>/part-0001.parquet` */
export function tablePartPath(root: string, table: 'prompts' | 'replies' | 'readings', model: string, language: Language): string {
  assertSafeSegment('model id', model);
  return path.join(root, table, `model=${model}`, `language=${language}`, 'part-0001.parquet');
}

/** Writes every partition's tables under `root` (hive layout, one part per partition and table). */
export async function writeTables(writer: ParquetWriter, root: string, built: BuiltTables, campaign: string): Promise<void> {
  for (const p of built.partitions) {
    const check = { campaign, phase: PHASE, model: p.model, language: p.language };
    // Every value was checked against the row schema and typed here; DuckDB still enforces the column types.
    const trusted = { trusted: true };
    await writer.writeFile('prompts', p.prompts.values(), tablePartPath(root, 'prompts', p.model, p.language), check, trusted);
    await writer.writeFile('replies', p.replies, tablePartPath(root, 'replies', p.model, p.language), check, trusted);
    if (p.readings.length > 0) {
      await writer.writeFile('readings', p.readings, tablePartPath(root, 'readings', p.model, p.language), check, trusted);
    }
  }
}
