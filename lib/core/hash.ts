import { hash } from 'node:crypto';
import { filledTextOf, perTemplate } from './filledText.js';
import type { FilledText } from './filledText.js';

/** Objects with more keys than this are sorted by Array.prototype.sort (an insertion sort is quadratic). */
const INSERTION_SORT_MAX = 32;

/**
 * An object's own keys in the order of the default sort (UTF-16 code units, as `<` compares). For
 * the few keys of a design object, an insertion sort in the array Object.keys made: the default
 * sort copies its array into a work array first, and these sorts ran for every item id, judge id
 * and prompt row (canonicalJson took a fifth less time without that copy).
 */
function sortedKeys(obj: object): string[] {
  const keys = Object.keys(obj);
  if (keys.length > INSERTION_SORT_MAX) return keys.sort();
  for (let i = 1; i < keys.length; i++) {
    const k = keys[i] as string;
    let j = i - 1;
    for (; j >= 0 && (keys[j] as string) > k; j--) keys[j + 1] = keys[j] as string;
    keys[j + 1] = k;
  }
  return keys;
}

/** Keys as JSON strings, kept: the same few dozen field names are quoted for every item. */
const quotedKeys = new Map<string, string>();
/** Keys kept at most: a design whose objects are keyed by data (a tokens map) stops adding, not growing. */
const QUOTED_KEYS_MAX = 4096;

/** JSON.stringify(key), from quotedKeys when it was quoted before. */
function quotedKey(key: string): string {
  let quoted = quotedKeys.get(key);
  if (quoted === undefined) {
    quoted = JSON.stringify(key);
    if (quotedKeys.size < QUOTED_KEYS_MAX) quotedKeys.set(key, quoted);
  }
  return quoted;
}

/**
 * JSON with object keys sorted at every level, so the same value always gives the same bytes
 * (item ids must be reproducible byte for byte across runs and machines).
 */
export function canonicalJson(value: unknown): string {
  if (value === null || typeof value !== 'object') return JSON.stringify(value) ?? 'null';
  // Loops and one string rather than entries/filter/sort/map/join: it runs for every item id,
  // judge id and prompt row (a million times a full campaign), and the arrays were its cost.
  if (Array.isArray(value)) {
    let out = '[';
    for (let i = 0; i < value.length; i++) out += (i === 0 ? '' : ',') + canonicalJson(value[i]);
    return `${out}]`;
  }
  const obj = value as Record<string, unknown>;
  const filled = filledTextOf(obj);
  let out = '{';
  for (const k of sortedKeys(obj)) {
    const v = obj[k];
    if (v === undefined) continue;
    out += `${out.length === 1 ? '' : ','}${quotedKey(k)}:${filled !== undefined && k === 'content' ? filledJson(filled) : canonicalJson(v)}`;
  }
  return `${out}}`;
}

/** The literals of a template (FilledText.literals) as JSON string bodies, each escaped once. */
const escapedLiterals = perTemplate((literals) => literals.map(jsonBody));

/**
 * JSON.stringify of a filled message's content, from its pieces: the escaped literals of its
 * template and its values escaped, one after the other. The content is not flattened
 * (lib/core/filledText.ts says why), and the template's text is escaped once for all its prompts.
 */
function filledJson(text: FilledText): string {
  const literals = escapedLiterals(text.literals);
  let out = `"${literals[0]}`;
  for (let i = 0; i < text.values.length; i++) out += jsonBody(text.values[i] as string) + (literals[i + 1] as string);
  return `${out}"`;
}

/** A string's JSON without its quotes. */
function jsonBody(s: string): string {
  return JSON.stringify(s).slice(1, -1);
}

// Settings and reading maps are shared by many items of a partition: each object is serialized once.
let jsonCache = new WeakMap<object, string>();

/**
 * canonicalJson of an object that many items share (settings, a reading map), computed once per
 * object. Objects inside it are looked up the same way: an item's own extras often hold shared
 * parts (FAR-6: a reading map per language and option order), serialized once for all items.
 */
export function cachedCanonicalJson(value: object): string {
  let json = jsonCache.get(value);
  if (json === undefined) {
    if (Array.isArray(value)) json = canonicalJson(value);
    else {
      const obj = value as Record<string, unknown>;
      json = '{';
      for (const k of sortedKeys(obj)) {
        const v = obj[k];
        if (v === undefined) continue;
        const inner = v !== null && typeof v === 'object' ? cachedCanonicalJson(v) : canonicalJson(v);
        json += `${json.length === 1 ? '' : ','}${quotedKey(k)}:${inner}`;
      }
      json += '}';
    }
    jsonCache.set(value, json);
  }
  return json;
}

// Digests of objects that many items share (see cachedDigest).
let digestCache = new WeakMap<object, string>();

/** A value inside a digested object: a primitive as its JSON, an object as its own digest (`#` cannot open JSON). */
function digestPart(value: unknown): string {
  return value !== null && typeof value === 'object' ? `#${cachedDigest(value)}` : (JSON.stringify(value) ?? 'null');
}

/**
 * A digest of an object's canonical value (32 hex digits of SHA-256), computed once per object: an
 * object inside it counts as its own digest, so an item's extras that hold a shared reading map
 * hash a few dozen bytes, not the map's JSON again for every item. Equal values give equal
 * digests, whatever the key order or which objects are shared; as with cachedCanonicalJson, an
 * object must not change once digested (design data is built once per run and never edited).
 * @example cachedDigest({ a: 1, b: [2] }) === cachedDigest({ b: [2], a: 1 })
 */
export function cachedDigest(value: object): string {
  let digest = digestCache.get(value);
  if (digest === undefined) {
    let body: string;
    if (Array.isArray(value)) {
      body = '[';
      for (let i = 0; i < value.length; i++) body += (i === 0 ? '' : ',') + digestPart(value[i]);
      body += ']';
    } else {
      const obj = value as Record<string, unknown>;
      body = '{';
      for (const k of sortedKeys(obj)) {
        const v = obj[k];
        if (v === undefined) continue;
        body += `${body.length === 1 ? '' : ','}${quotedKey(k)}:${digestPart(v)}`;
      }
      body += '}';
    }
    digest = hash('sha256', body, 'hex').slice(0, 32);
    digestCache.set(value, digest);
  }
  return digest;
}

// The JSON of frozen, flat objects (a prompt's messages): such an object cannot change, so neither can its JSON.
let frozenJson = new WeakMap<object, string>();

/** Whether `value` can never change: frozen, with no field that is an object (a frozen object may hold a mutable one). */
function isFrozenFlat(value: object): boolean {
  return Object.isFrozen(value) && Object.values(value).every((v) => v === null || typeof v !== 'object');
}

/**
 * canonicalJson of a list of objects (a prompt's messages), keeping the JSON of each frozen flat
 * element, and of the list when it is frozen too: FAR-6's repeats share one message list and
 * every judge prompt one 1.3 KB system message, serialized once instead of for every prompt row.
 */
export function listCanonicalJson(list: readonly object[]): string {
  const kept = frozenJson.get(list);
  if (kept !== undefined) return kept;
  const listFrozen = Object.isFrozen(list);
  let keep = listFrozen;
  let out = '[';
  for (let i = 0; i < list.length; i++) {
    const element = list[i] as object;
    let json: string | undefined;
    if (element === null || typeof element !== 'object') json = canonicalJson(element);
    else if ((json = frozenJson.get(element)) === undefined) {
      json = canonicalJson(element);
      const fixed = isFrozenFlat(element);
      // A frozen list is kept whole; a frozen element of a list that can change, on its own, unless
      // it is a filled template, whose JSON is put together from its pieces: kept, it would cost an
      // entry per prompt.
      if (fixed && !listFrozen && filledTextOf(element) === undefined) frozenJson.set(element, json);
      keep &&= fixed;
    }
    out += (i === 0 ? '' : ',') + json;
  }
  out += ']';
  if (keep) frozenJson.set(list, out);
  return out;
}

/**
 * Forgets what cachedCanonicalJson, cachedDigest and listCanonicalJson kept. They keep a value for
 * as long as its object lives, and design data lives as long as the run: X-Value's items carry
 * their QA pair's annotation, so a partition thread that went through every language kept the
 * JSON and digests of every annotation of the design (at 100,000 pairs its heap peaked at
 * 1.1 GB, against 0.84 GB without them). The run
 * calls this after each partition (lib/run/wavePartition.ts): the objects many items share are
 * a partition's own (its settings, its reading maps, its message lists), computed again at the
 * next partition's first item.
 */
export function forgetSharedValues(): void {
  jsonCache = new WeakMap();
  digestCache = new WeakMap();
  frozenJson = new WeakMap();
}

/**
 * Stable id of a value: the first 32 hex digits of SHA-256 over its canonical JSON.
 * @example stableId({ a: 1, b: [2] }) === stableId({ b: [2], a: 1 })
 */
export function stableId(value: unknown): string {
  return idOfJson(canonicalJson(value));
}

/**
 * stableId of a value whose canonical JSON the caller assembled (the same bytes): code that makes
 * an id per item builds the JSON from its fields in sorted order instead of walking an object.
 */
export function idOfJson(canonical: string): string {
  return hash('sha256', canonical, 'hex').slice(0, 32);
}

/**
 * A uniform number in [0, 1) determined by the key alone: the same key gives the same draw in
 * every run, whatever the order or concurrency of the calls (seeded subsets, simulated replies).
 */
export function uniformFromKey(key: string): number {
  // One-shot hash: about twice as fast as createHash for the short keys drawn per reply.
  const h = hash('sha256', key, 'buffer');
  // 52 bits: exact in a double.
  const hi = h.readUInt32BE(0) >>> 0;
  const lo = h.readUInt32BE(4) >>> 12;
  return (hi * 2 ** 20 + lo) / 2 ** 52;
}

/** A deterministic stream of uniforms in [0, 1) from a 32-bit seed (mulberry32). */
export function seededRandom(seed: number): () => number {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

/** A 32-bit seed from a string key (FNV-1a), for seeding `seededRandom`. */
export function seedFromKey(key: string): number {
  let h = 0x811c9dc5;
  for (let i = 0; i < key.length; i++) {
    h ^= key.charCodeAt(i);
    h = Math.imul(h, 0x01000193);
  }
  return h >>> 0;
}
