/**
 * How much of a numeric readout (P(True) from logprobs, or from bring-your-own rows) could be read.
 * A readout that nothing could read leaves every figure that rests on it "–"; without a word it
 * looks like an analysis that ran. The share, and why, are said in the terminal, summary.md and
 * the report, and a readout read for none of its rows ends `run` and `analyze` with exit 7.
 */
export interface ReadoutHealth {
  /** What is read, as the tables name it (`P(True)`). */
  readonly readout: string;
  /** What one row is, plural (`verifier rows`). */
  readonly unit: string;
  readonly rows: number;
  readonly unreadable: number;
  /** Why, with the number of rows for each reason; largest first. */
  readonly reasons: readonly { readonly reason: string; readonly count: number }[];
}

/** `run`'s and `analyze`'s exit code when a readout could be read for none of its rows (docs/troubleshooting.md). */
export const EXIT_UNREADABLE = 7;

/**
 * Counts the unreadable rows by reason.
 * @example readoutHealth('P(True)', 'verifier rows', rows, (r) => (r.p_true === null ? 'no logprobs' : null))
 */
export function readoutHealth<T>(readout: string, unit: string, rows: readonly T[], whyUnreadable: (row: T) => string | null): ReadoutHealth {
  const counts = new Map<string, number>();
  for (const row of rows) {
    const why = whyUnreadable(row);
    if (why !== null) counts.set(why, (counts.get(why) ?? 0) + 1);
  }
  const reasons = [...counts].map(([reason, count]) => ({ reason, count })).sort((a, b) => b.count - a.count || a.reason.localeCompare(b.reason));
  return { readout, unit, rows: rows.length, unreadable: reasons.reduce((s, r) => s + r.count, 0), reasons };
}

/**
 * The warning for a readout with unreadable rows, or undefined when every row was read.
 * @example readoutWarning(h) // 'WARNING: P(True) unreadable for 16 of 16 verifier rows (100 %): 16 verify replies carry no logprobs. Every figure resting on P(True) is "–".'
 */
export function readoutWarning(h: ReadoutHealth): string | undefined {
  if (h.unreadable === 0) return undefined;
  const share = Math.round((100 * h.unreadable) / h.rows);
  const why = h.reasons.map((r) => `${r.count}: ${r.reason}`).join('; ');
  const effect =
    h.unreadable === h.rows
      ? `Every figure resting on ${h.readout} is "–".`
      : `Figures resting on ${h.readout} use the ${h.rows - h.unreadable} readable ${h.unit} only.`;
  return `WARNING: ${h.readout} unreadable for ${h.unreadable} of ${h.rows} ${h.unit} (${share === 0 ? '<1' : share === 100 && h.unreadable < h.rows ? '>99' : share} %) — ${why}. ${effect}`;
}

/** The readouts that could be read for none of their rows (exit EXIT_UNREADABLE). */
export function unreadableReadouts(health: readonly ReadoutHealth[]): ReadoutHealth[] {
  return health.filter((h) => h.rows > 0 && h.unreadable === h.rows);
}
