/**
 * A reply's readings as stored rows (DESIGN.md "Data contracts"): the phase's reader runs on the
 * reply, the core adds the partition and the item the reading names, and checks each label
 * against the battery's vocabulary.
 */
import { createHash, hash, type Hash } from 'node:crypto';
import type { PhaseSpec, ReadingDraft, ReplyView, Vocabulary } from '../battery/types.js';
import { cachedDigest } from '../core/hash.js';
import type { PromptItem } from '../core/types.js';
import type { TokenLogprob } from '../providers/types.js';
import type { ReadingRow, ReplyRow } from '../store/types.js';

/** What a reader sees of a stored reply row. */
export function replyView(reply: ReplyRow): ReplyView {
  return {
    text: reply.text,
    attempt: reply.attempt,
    logprobs: reply.logprobs_json ? (JSON.parse(reply.logprobs_json) as Record<string, TokenLogprob>) : null,
    finish_reason: reply.finish_reason,
  };
}

/** Fingerprints by the extras object they were made from (FAR-6's repeats share one), with the reader they were made for. */
const fingerprints = new WeakMap<object, { readonly reader: string; readonly digest: string }>();

/**
 * What a reading of `item` in `phase` is read with, as a short digest: the phase, its reader version
 * and the item's design data (`extras`: a P(True) gold letter, a FAR-6 reading map). The request
 * itself, factors included, is the item id, which the reading row names already (every battery's
 * item id hashes its factors, and a judge's the item it judges), so the fingerprint need not hash
 * it again. A phase's `read` is a pure function of the item and the reply, so two readings of one
 * reply with the same item id and fingerprint are the same reading; a design corrected between
 * runs changes the fingerprint of exactly the items whose extras it touched
 * (lib/run/refreshReadings.ts reads those again). Computed once per extras object and reader, from
 * the extras' digest (core/hash `cachedDigest`), not per item from their JSON.
 */
export function readingFingerprint(phase: Pick<PhaseSpec, 'name' | 'readerVersion'>, item: PromptItem): string {
  const reader = readerOf(phase);
  const extras = item.extras;
  if (extras === null || typeof extras !== 'object') return fingerprintOf(reader, readingInputs(item));
  const known = fingerprints.get(extras);
  if (known !== undefined && known.reader === reader) return known.digest;
  const digest = fingerprintOf(reader, readingInputs(item));
  fingerprints.set(extras, { reader, digest });
  return digest;
}

function fingerprintOf(reader: string, inputs: string): string {
  return hash('sha256', `${reader}\u0000${inputs}`, 'hex').slice(0, 16);
}

/** The phase and its reader version, as fingerprints name them. */
export function readerOf(phase: Pick<PhaseSpec, 'name' | 'readerVersion'>): string {
  return `${phase.name}\u0000${phase.readerVersion ?? ''}`;
}

/**
 * The design data of an item that a reader may consult beyond its id: its extras, as their digest
 * (an object's is kept with the object, so many items sharing one cost one hash).
 */
export function readingInputs(item: PromptItem): string {
  const extras = item.extras;
  if (extras === undefined || extras === null) return '';
  return typeof extras === 'object' ? `#${cachedDigest(extras)}` : JSON.stringify(extras);
}

/**
 * A digest of a list of items' ids and reading inputs, in order: what a prompts part holds that can
 * change (lib/run/partitionSpec.ts) and, with the reader, what a partition's readings were read
 * with (lib/run/refreshReadings.ts), one hash for both. A line per item of its id and its extras'
 * digest, joined in slices and hashed once per slice: a native call per item would cost more than
 * the hash.
 */
export function itemsDigest(items: readonly PromptItem[]): string {
  const h = createHash('sha256');
  addToItemsDigest(h, items);
  return h.digest('hex');
}

/**
 * Adds `items` to an itemsDigest under way: the items of a partition added a slice at a time, in
 * order, give the digest of the whole list (lib/run/slicedItems.ts).
 */
export function addToItemsDigest(h: Hash, items: readonly PromptItem[]): void {
  for (let i = 0; i < items.length; i += 4096) {
    let lines = '';
    for (let j = i; j < Math.min(i + 4096, items.length); j++) lines += `${items[j]!.item_id}\u0000${readingInputs(items[j]!)}\n`;
    h.update(lines);
  }
}

/** The labels a vocabulary allows for a reader (and facet); undefined when it says nothing about them. */
export function allowedLabels(vocabulary: Vocabulary, reader: string, facet: string | null | undefined): readonly string[] | undefined {
  const keys = facet ? [`${reader}#${facet}`, reader] : [reader];
  for (const key of keys) if (Object.hasOwn(vocabulary, key)) return vocabulary[key];
  for (const [key, labels] of Object.entries(vocabulary)) if (key.endsWith('*') && reader.startsWith(key.slice(0, -1))) return labels;
  return undefined;
}

/**
 * Reads one successful reply of `item` in `phase` into reading rows. A reading names the item
 * itself, or, for a phase that reads another phase's reply (a judge), the source item with the
 * judging item in `judge_item_id`; it is stored in the phase's readings folder (`folder`). A label
 * outside the vocabulary becomes `invalid`, its reader's label kept in `raw`.
 */
export function readingRows(phase: PhaseSpec, folder: string, vocabulary: Vocabulary, item: PromptItem, reply: ReplyRow): ReadingRow[] {
  const ofSource = phase.readingsOf === 'source';
  const itemId = ofSource ? (item.source_item_id ?? item.item_id) : item.item_id;
  const drafts: readonly ReadingDraft[] = phase.read(item, replyView(reply));
  const readWith = drafts.length > 0 ? readingFingerprint(phase, item) : null;
  return drafts.map((d) => {
    const allowed = allowedLabels(vocabulary, d.reader, d.facet);
    const valid = allowed === undefined || allowed.includes(d.label);
    return {
      item_id: itemId,
      campaign: item.campaign,
      phase: folder,
      model: reply.model,
      language: reply.language,
      reader: d.reader,
      label: valid ? d.label : 'invalid',
      raw: valid ? (d.raw ?? null) : `label ${JSON.stringify(d.label)}${d.raw ? `: ${d.raw}` : ''}`,
      judge_item_id: ofSource ? item.item_id : null,
      facet: d.facet ?? null,
      value: d.value ?? null,
      read_with: readWith,
    };
  });
}
