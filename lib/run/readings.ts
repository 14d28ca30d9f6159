/**
 * A reply's readings as stored rows (DESIGN.md "Data contracts"): the phase's reader runs on the
 * reply, the core adds the partition and the item the reading names, and checks each label
 * against the battery's vocabulary.
 */
import type { PhaseSpec, ReadingDraft, ReplyView, Vocabulary } from '../battery/types.js';
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
    };
  });
}
