/**
 * The judge's verdict (Disentangling Question, Response, and Verifier Languages §4.2, App. A): "The parser accepts nonempty feedback with an
 * optional prefix and terminal [RESULT] plus one integer from 1–5; other outputs are malformed."
 * Scores 4–5 are correct, 1–3 incorrect; a malformed output counts as incorrect too ("a
 * conservative fallback policy rather than verified incorrectness"), and is labelled apart.
 *
 * Read strictly: the optional prefix is `Feedback:` (as the prompt's format line asks); the
 * feedback must hold some text; exactly one `[RESULT]` marker; after it one integer 1–5 and
 * nothing but white space. `[RESULT] (4)`, `[RESULT] 4.`, `[RESULT] 4/5`, two markers: malformed.
 */

export type JudgeVerdict =
  | { readonly ok: true; readonly score: 1 | 2 | 3 | 4 | 5; readonly feedback: string; readonly correct: boolean }
  | { readonly ok: false; readonly reason: 'empty' | 'no-result' | 'several-results' | 'bad-score' | 'no-feedback' };

const TERMINAL = /\[RESULT\]\s*([1-5])\s*$/;
const PREFIX = /^\s*(?:#+\s*)?feedback\s*[:：]\s*/i;

/** The score a judge output gives, or why it is malformed. */
export function parseJudgeResult(text: string | null): JudgeVerdict {
  if (text === null || text.trim() === '') return { ok: false, reason: 'empty' };
  const markers = text.match(/\[RESULT\]/g)?.length ?? 0;
  if (markers === 0) return { ok: false, reason: 'no-result' };
  if (markers > 1) return { ok: false, reason: 'several-results' };
  const m = TERMINAL.exec(text);
  if (!m) return { ok: false, reason: 'bad-score' };
  const feedback = text.slice(0, m.index).replace(PREFIX, '').trim();
  if (feedback === '') return { ok: false, reason: 'no-feedback' };
  const score = Number(m[1]) as 1 | 2 | 3 | 4 | 5;
  return { ok: true, score, feedback, correct: score >= 4 };
}
