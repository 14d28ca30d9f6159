/**
 * A reply's readings as stored rows (DESIGN.md "Data contracts"): the phase's reader runs on the
 * reply, the core adds the partition and the item the reading names, and checks each label
 * against the battery's vocabulary.
 */
import { createHash } from 'node:crypto';
import type { PhaseSpec, ReadingDraft, ReplyView, Vocabulary } from '../battery/types.js';
import { cachedCanonicalJson } from '../core/hash.js';
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

/** An item's fingerprint, kept with the reader it was made for (an item belongs to one phase; the check costs nothing). */
const fingerprints = new WeakMap<PromptItem, { readonly reader: string; readonly digest: string }>();

/**
 * What a reading of `item` in `phase` is read with, as a short digest: the phase, its reader version
 * and the item's design data (`extras`: a P(True) gold letter, a FAR-6 reading map; `factors`).
 * The request itself is the item id, which the reading row names already. A phase's `read` is a
 * pure function of the item and the reply, so two readings of one reply with the same fingerprint
 * are the same reading; a design corrected between runs changes the fingerprint of exactly the
 * items it touched (lib/run/refreshReadings.ts reads those again).
 */
export function readingFingerprint(phase: Pick<PhaseSpec, 'name' | 'readerVersion'>, item: PromptItem): string {
  const reader = readerOf(phase);
  const known = fingerprints.get(item);
  if (known !== undefined && known.reader === reader) return known.digest;
  const digest = createHash('sha256').update(`${reader}\u0000${readingInputs(item)}`).digest('hex').slice(0, 16);
  fingerprints.set(item, { reader, digest });
  return digest;
}

/** The phase and its reader version, as fingerprints name them. */
export function readerOf(phase: Pick<PhaseSpec, 'name' | 'readerVersion'>): string {
  return `${phase.name}\u0000${phase.readerVersion ?? ''}`;
}

/** The design data of an item that a reader may consult: its extras and factors, as canonical JSON. */
export function readingInputs(item: PromptItem): string {
  const extras = item.extras === undefined || item.extras === null ? '' : typeof item.extras === 'object' ? cachedCanonicalJson(item.extras) : JSON.stringify(item.extras);
  return `${extras}\u0000${item.factors ? cachedCanonicalJson(item.factors) : ''}`;
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
