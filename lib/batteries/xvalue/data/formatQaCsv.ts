import { toCsv } from '../../../api/battery.js';
import type { QaPair } from '../types.js';
import { CSV_COLUMNS } from './qaPairSchema.js';

/**
 * The CSV form of annotated pairs (README.md "Data format"), e.g. to hand a JSONL file to
 * annotators who work in a spreadsheet: B–D as "Pass" or "Fail: <reason>", E–H as "None" or a
 * JSON array of the offending sentences. parseQaPairs reads it back to the same pairs.
 * @example await writeFile('qa-pairs.csv', formatQaCsv(pairs))
 */
export function formatQaCsv(pairs: readonly QaPair[]): string {
  const holistic = (h: { verdict: string; reason: string | null }): string => (h.verdict === 'Pass' ? 'Pass' : h.reason ? `Fail: ${h.reason}` : 'Fail');
  const sentences = (s: readonly string[]): string => (s.length === 0 ? 'None' : JSON.stringify(s));
  const rows = pairs.map((p) => {
    const a = p.annotation;
    const c = a.checkpoints;
    return {
      id: p.id,
      language: p.language,
      category: p.category,
      question: p.question,
      answer: p.answer,
      core_issue: a.core_issue,
      scope: a.scope,
      nature: a.nature,
      A: c.A,
      B: holistic(c.B),
      C: holistic(c.C),
      D: holistic(c.D),
      E: sentences(c.E),
      F: sentences(c.F),
      G: sentences(c.G),
      H: sentences(c.H),
      overall: a.overall,
    };
  });
  return toCsv([...CSV_COLUMNS], rows);
}
