/**
 * A valid row → everything the import needs of it, computed from the row alone: its ids, its
 * status and its table lines (NDJSON, as TableSink stages them). What depends on other rows — the
 * checks across rows (RowResolver) and whether the row gives its item's prompt row — is decided
 * afterwards (RowResolver, TableSink).
 */
import { hash } from 'node:crypto';
import { canonicalJson } from '../../../api/battery.js';
import type { PromptRow, ReadingRow, ReplyRow } from '../../../api/battery.js';
import { readOpening, readOpeningPlus, readerIds } from '../read/index.js';
import type { Language, ReadingMap } from '../types.js';
import type { ByoRow } from './schema.js';
import type { SourcedRow } from './types.js';

const NO_MAP_JSON = canonicalJson({ kind: 'none', tokens: {} });
const NO_MESSAGES_JSON = canonicalJson([]);
/** Derived prompt keys kept for the rows that follow (a prompt's repeats are usually near each other). */
const PROMPT_KEY_CACHE = 65_536;
/** Concept pairs whose recent reading maps are kept (RowPreparer.mapOf): far more than a design has. */
const MAP_PAIR_CACHE = 65_536;
/** Reading maps kept per concept pair: its forms, constraints, keyings and option orders have a few each. */
const MAPS_PER_PAIR = 8;

/** A distinct reading map: what the prompt lines stage, the map the rule reads, and its JSON as `sameJson` reads it. */
interface MapEntry {
  readonly staged: StagedReadingMap;
  readonly map: ReadingMap;
  readonly walk: readonly unknown[];
}

// Markers of a JSON value's structure in a walk (symbols: never a key or a value of parsed JSON).
const OBJECT = Symbol('object');
const ARRAY = Symbol('array');
const END = Symbol('end');

/** A JSON value as the sequence `sameJson` compares: object keys in order, primitive values and markers. */
function walkOf(v: unknown, out: unknown[] = []): unknown[] {
  if (Array.isArray(v)) {
    out.push(ARRAY, v.length);
    for (const x of v as unknown[]) walkOf(x, out);
  } else if (v !== null && typeof v === 'object') {
    out.push(OBJECT);
    for (const k in v) {
      out.push(k);
      walkOf((v as Record<string, unknown>)[k], out);
    }
    out.push(END);
  } else out.push(v);
  return out;
}

/**
 * Whether `v` walks as `walk` from `at` (the position after it, or -1): the same keys in the same
 * order and the same primitive values, so that JSON.stringify gives both the same text. It reads
 * the value without building anything, several times cheaper than its JSON text and a lookup by it.
 */
function walksAs(v: unknown, walk: readonly unknown[], at: number): number {
  if (Array.isArray(v)) {
    if (walk[at] !== ARRAY || walk[at + 1] !== v.length) return -1;
    at += 2;
    for (const x of v as unknown[]) if ((at = walksAs(x, walk, at)) < 0) return -1;
    return at;
  }
  if (v !== null && typeof v === 'object') {
    if (walk[at++] !== OBJECT) return -1;
    for (const k in v) {
      if (walk[at++] !== k || (at = walksAs((v as Record<string, unknown>)[k], walk, at)) < 0) return -1;
    }
    return walk[at] === END ? at + 1 : -1;
  }
  // Primitives: equal values (NaN, never in JSON, would only take the slower path).
  return walk[at] === v ? at + 1 : -1;
}

/**
 * A reading map as the prompt lines stage it: by `key` (a hash of its canonical JSON), its `json`
 * staged once beside them (TableSink.addReadingMap) and joined back when the prompts are written.
 * A few dozen maps serve a million rows; their escaped JSON in every line was a third of the
 * prompt lines' bytes, each encoded, written and parsed again.
 */
export interface StagedReadingMap {
  readonly key: string;
  readonly json: string;
}

const NO_MAP: StagedReadingMap = { key: shortHash(NO_MAP_JSON), json: NO_MAP_JSON };

/** A valid row, its ids settled, its status decided and its table lines written. */
export interface PreparedRow {
  readonly file: string;
  readonly row: number;
  /** The design factors that identify the item (`itemIdentity`). */
  readonly identity: string;
  readonly item_id: string;
  readonly prompt_key: string;
  readonly repeat: number;
  readonly attempt: number;
  readonly status: 'ok' | 'error';
  /** Status ok, but neither text nor readings: RowResolver rejects it. */
  readonly okWithoutContent: boolean;
  readonly story: string;
  readonly story_group: string;
  readonly model: string;
  readonly language: Language;
  /** The item's prompt row: staged only when this is the item's first accepted row. */
  readonly promptLine: string;
  /** The reading map the prompt line names by key. */
  readonly readingMap: StagedReadingMap;
  readonly replyLine: string;
  /** The readings the row gives. */
  readonly readingLines: readonly string[];
  /** The token rule's readings (with the attempt and the partition), of an ok reply with text and a reading map. */
  readonly ruleLines: readonly string[];
  /** The token rule could not read the map: thrown when the row is staged, as it was before. */
  readonly ruleError?: unknown;
}

/** The design factors that identify an item, as one string (fields in a fixed order). */
export function itemIdentity(r: ByoRow): string {
  return [r.model, r.language, r.story, r.story_group, r.concept_pair, r.form, r.constraint, r.named, String(r.option_order), r.construction].join('\u0000');
}

export function shortHash(text: string): string {
  return hash('sha256', text, 'hex').slice(0, 32);
}

/** Derived ids: prompt_key over model, language and the design factors, item_id over them and the repeat. */
export function derivedIds(r: ByoRow): { item_id: string; prompt_key: string } {
  const identity = itemIdentity(r);
  return { item_id: shortHash(`${identity}\u0000${r.repeat}`), prompt_key: shortHash(identity) };
}

/** Columns every row of a table has the same value in (TableSink puts them back when it writes). */
interface ConstantKeys {
  prompts: 'campaign' | 'phase' | 'battery' | 'settings_json' | 'source_item_id';
  replies: 'campaign' | 'phase' | 'finish_reason' | 'latency_ms' | 'logprobs_json' | 'settings_json';
  readings: 'campaign' | 'phase' | 'judge_item_id' | 'facet' | 'value';
}
/** A staged line: the row less its constant columns (the compiler still checks every other field). */
export type Staged<R, T extends keyof ConstantKeys> = Omit<R, ConstantKeys[T]>;
/** A staged prompt line: its reading map by key (StagedReadingMap). */
export type StagedPrompt = Omit<Staged<PromptRow, 'prompts'>, 'reading_map_json'> & { readonly reading_map_key: string };
export type { ConstantKeys };

/** Prepares rows one at a time, keeping what many rows share (reading maps, prompt keys). */
export class RowPreparer {
  // One object per distinct map (the rule compiles its matcher once per map object, readOpening),
  // looked up by the map's plain JSON text, which is much cheaper than canonicalJson per row.
  private readonly maps = new Map<string, MapEntry>();
  // The maps last given with each concept pair, which its rows share: a row's map is looked for
  // among them by walksAs before its JSON text is made (a lookup by a longer key cost more than the walks).
  private readonly recentMapsOfPair = new Map<string, MapEntry[]>();
  private readonly promptKeys = new Map<string, string>();

  prepare(s: SourcedRow): PreparedRow {
    const v = s.value;
    const identity = itemIdentity(v);
    const item_id = v.item_id ?? shortHash(`${identity}\u0000${v.repeat}`);
    const prompt_key = v.prompt_key ?? this.promptKeyOf(identity);
    const attempt = v.attempt ?? 1;
    // A row that gives readings without the text (labels shared without the replies) is an
    // answered reply: its readings are analysed. Without either there is nothing to analyse.
    const given = (v.readings ?? []).length > 0;
    const status = v.status ?? (v.text === null && !given ? 'error' : 'ok');
    const map = this.mapOf(v.reading_map as ReadingMap | null | undefined, v.concept_pair);
    // Plain JSON.stringify of the row (no key list): V8's fast path; DuckDB reads the columns by name.
    const prompt: StagedPrompt = {
      item_id,
      prompt_key,
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
      reading_map_key: (map?.staged ?? NO_MAP).key,
      prop_p: v.prop_p ?? '',
      prop_notp: v.prop_notp ?? '',
    };
    const reply: Staged<ReplyRow, 'replies'> = {
      item_id,
      model: v.model,
      language: v.language,
      attempt,
      status,
      text: v.text,
      input_tokens: v.input_tokens ?? 0,
      output_tokens: v.output_tokens ?? 0,
      cost_usd: v.cost_usd ?? 0,
      error_class: status === 'error' ? 'imported' : null,
      error_message: v.error_message ?? null,
      provider: v.provider ?? `byo/${v.model}`,
      simulated: v.simulated ?? false,
      created_at: v.created_at ?? '',
    };
    const readingLines: string[] = [];
    for (const reading of v.readings ?? []) {
      const row: Staged<ReadingRow, 'readings'> = {
        item_id,
        model: v.model,
        language: v.language,
        reader: reading.reader,
        label: reading.label,
        raw: reading.raw ?? null,
      };
      readingLines.push(JSON.stringify(row));
    }
    const ruleLines: string[] = [];
    let ruleError: unknown;
    // The fixed token rule (Same Judgment, Different Yes §3; as the FAR-6 battery applies it): R on
    // every map but `none`, and R+ as well on verdict maps.
    if (status === 'ok' && v.text !== null && map && map.map.kind !== 'none') {
      try {
        // Both readings before either line: a map the rule cannot read gives no line.
        const r = readOpening(v.text, map.map);
        const plus = map.map.kind === 'verdict' ? readOpeningPlus(v.text, map.map, v.language) : undefined;
        ruleLines.push(JSON.stringify({ item_id, attempt, model: v.model, language: v.language, reader: readerIds.rule, label: r.label, raw: r.raw }));
        if (plus) ruleLines.push(JSON.stringify({ item_id, attempt, model: v.model, language: v.language, reader: readerIds.rulePlus, label: plus.label, raw: plus.raw }));
      } catch (err) {
        ruleError = err;
      }
    }
    return {
      file: s.file,
      row: s.row,
      identity,
      item_id,
      prompt_key,
      repeat: v.repeat,
      attempt,
      status,
      okWithoutContent: status === 'ok' && v.text === null && !given,
      story: v.story,
      story_group: v.story_group,
      model: v.model,
      language: v.language,
      promptLine: JSON.stringify(prompt),
      readingMap: map?.staged ?? NO_MAP,
      replyLine: JSON.stringify(reply),
      readingLines,
      ruleLines,
      // Always present (undefined when the rule read the map): one shape for every row.
      ruleError,
    };
  }

  private promptKeyOf(identity: string): string {
    let key = this.promptKeys.get(identity);
    if (key === undefined) {
      // Bounded: RowResolver already keeps every identity; this only spares a hash per repeat.
      if (this.promptKeys.size >= PROMPT_KEY_CACHE) this.promptKeys.clear();
      this.promptKeys.set(identity, (key = shortHash(identity)));
    }
    return key;
  }

  /** The entry of the map's JSON text: one per distinct text, as the rule compiles its matcher per map object. */
  private mapOf(given: ReadingMap | null | undefined, pair: string): MapEntry | undefined {
    if (!given) return undefined;
    let recent = this.recentMapsOfPair.get(pair);
    if (recent === undefined) {
      if (this.recentMapsOfPair.size >= MAP_PAIR_CACHE) this.recentMapsOfPair.clear();
      this.recentMapsOfPair.set(pair, (recent = []));
    }
    for (const e of recent) if (walksAs(given, e.walk, 0) === e.walk.length) return e;
    const plain = JSON.stringify(given);
    let entry = this.maps.get(plain);
    if (!entry) {
      const json = canonicalJson(given);
      this.maps.set(plain, (entry = { staged: { key: shortHash(json), json }, map: given, walk: walkOf(given) }));
    }
    if (recent.length >= MAPS_PER_PAIR) recent.pop();
    recent.unshift(entry);
    return entry;
  }
}
