/**
 * Item-level rows from the phases' items and readings, in memory (the SQL stage does the same over
 * the tables: sql/ptrue_rows.sql). Correctness comes from the generate item's readings: the
 * `option` reading for multiple choice, the judge's (`judge:<id>`, the first judge by id) for short
 * answers; a reply without one is left out (it has no correctness). Flagged labels (unextractable,
 * malformed) count as incorrect and are marked.
 */
import type { ReadingDraft } from '../../../api/battery.js';
import type { PtrueItem } from '../types.js';
import type { PtrueRow } from './types.js';

export interface ReadItem {
  readonly item: PtrueItem;
  readonly readings: readonly ReadingDraft[];
}

const FLAGGED = new Set(['unextractable', 'malformed']);

/** Correctness of a generate item from its readings: `{ correct, flagged, alt }`, or null when unread. */
export function correctnessOf(g: ReadItem): { correct: boolean; flagged: boolean; alt: boolean | null } | null {
  const option = g.readings.find((r) => r.reader === 'option');
  const judge = [...g.readings].filter((r) => r.reader.startsWith('judge:')).sort((a, b) => (a.reader < b.reader ? -1 : 1))[0];
  const primary = g.item.factors.kind === 'multiple_choice' ? option : judge;
  if (!primary) return null;
  const alt = g.item.factors.kind === 'multiple_choice' && judge ? judge.label === 'correct' : null;
  return { correct: primary.label === 'correct', flagged: FLAGGED.has(primary.label), alt };
}

/** One row per verify item whose generate item has a correctness. */
export function assembleRows(subject: string, generate: readonly ReadItem[], verify: readonly ReadItem[]): PtrueRow[] {
  const byId = new Map(generate.map((g) => [g.item.item_id, g]));
  const out: PtrueRow[] = [];
  for (const v of verify) {
    const g = v.item.source_item_id ? byId.get(v.item.source_item_id) : undefined;
    if (!g) continue;
    const c = correctnessOf(g);
    if (!c) continue;
    const ptrue = v.readings.find((r) => r.reader === 'ptrue');
    const language = g.readings.find((r) => r.reader === 'language');
    const bound = ptrue?.raw ? (JSON.parse(ptrue.raw) as { bound?: string }).bound : undefined;
    const f = v.item.factors;
    out.push({
      model: subject,
      benchmark: f.benchmark,
      base_item: f.base_item,
      stratum: f.stratum,
      content_language: f.content_language,
      q: f.question_language,
      r: f.response_language,
      v: f.verifier_language as string,
      correct: c.correct,
      p_true: ptrue && ptrue.label !== 'invalid' ? (ptrue.value ?? null) : null,
      flagged: c.flagged,
      realised: language?.label ?? null,
      exact: bound === undefined ? null : bound === 'exact',
      correct_alt: c.alt,
    });
  }
  return out;
}
