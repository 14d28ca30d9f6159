/**
 * Two views beside the main tables:
 * - Language compliance and the restricted view (Disentangling Question, Response, and Verifier Languages §1 "report … realized response
 *   language", §6.6, App. C): the share of replies written in the requested language per benchmark
 *   and requested language, and the analysis restricted to those replies.
 * - Scorer comparison (§6.2, §4.3): where a second correctness exists (the judge on multiple
 *   choice), accuracy per question language under each scorer and the English–other gaps.
 */
import { groupByParts } from '../../../api/battery.js';
import { cmp } from './cells.js';
import type { PtrueRow } from './types.js';

export interface ComplianceRow {
  readonly benchmark: string;
  readonly r: string;
  /** Replies (not verifier copies) with an identified language. */
  readonly replies: number;
  readonly compliant: number;
  readonly share: number | null;
}

/**
 * One row per distinct reply (its verifier copies share everything but v and P(True)): the first
 * of each, in first-seen order. Only the first is kept, not a list per reply (at the paper's size
 * a million lists, ~250 MB of heap).
 */
export function replies(rows: readonly PtrueRow[]): PtrueRow[] {
  return sortedReplies(rows) ?? repliesByKey(rows);
}

/**
 * replies() of rows sorted by reply, as ptrue_rows gives them (ORDER BY model, benchmark, base
 * item, q, r): each reply's first row where every reply comes after the one before it, so that
 * no reply can come again later; undefined at the first that does not (rows in another order),
 * for repliesByKey. Rows in order need no key per reply: at the paper's size a million key
 * strings and a Map the size of the result, which the young generation copied and promoted.
 */
function sortedReplies(rows: readonly PtrueRow[]): PtrueRow[] | undefined {
  const out: PtrueRow[] = [];
  let previous: PtrueRow | undefined;
  for (const r of rows) {
    if (previous !== undefined) {
      const order = compareReplies(previous, r);
      if (order === 0) continue;
      if (order > 0) return undefined;
    }
    out.push(r);
    previous = r;
  }
  return out;
}

/** replies() in any row order: one key per distinct reply. */
function repliesByKey(rows: readonly PtrueRow[]): PtrueRow[] {
  const first = new Map<string, PtrueRow>();
  let previous: PtrueRow | undefined;
  for (const r of rows) {
    // A verifier copy of the reply just seen is already kept: five rows in six skip building their key.
    if (previous !== undefined && compareReplies(previous, r) === 0) continue;
    previous = r;
    const key = `${r.model}\u0000${r.benchmark}\u0000${r.base_item}\u0000${r.q}\u0000${r.r}`;
    if (!first.has(key)) first.set(key, r);
  }
  return [...first.values()];
}

/** Two rows' replies in the order of (model, benchmark, base item, q, r); 0 when they are verifier copies of one reply. */
function compareReplies(a: PtrueRow, b: PtrueRow): number {
  return cmp(a.model, b.model) || cmp(a.benchmark, b.benchmark) || cmp(a.base_item, b.base_item) || cmp(a.q, b.q) || cmp(a.r, b.r);
}

/**
 * Rows in the order ptrue_rows.sql gives a campaign's (ORDER BY model, benchmark, base item, q, r,
 * v), sorted in place: the estimators add floating-point values and draw the bootstrap's items in
 * row order, so rows brought from elsewhere in another order would give other figures (and tables
 * in another row order) than the same rows in a campaign.
 */
export function inCampaignOrder(rows: PtrueRow[]): PtrueRow[] {
  return rows.sort((a, b) => compareReplies(a, b) || cmp(a.v, b.v));
}

/**
 * Share of replies in the requested language, per benchmark × requested language. `distinct` is
 * replies(rows), when the caller has it already (at the paper's size a pass over 6.2 M rows).
 */
export function compliance(rows: readonly PtrueRow[], distinct: readonly PtrueRow[] = replies(rows)): ComplianceRow[] {
  const known = distinct.filter((r) => r.realised !== undefined && r.realised !== null);
  return [...groupByParts(known, [(r) => r.benchmark, (r) => r.r], '\u0000')]
    .map(([key, list]) => {
      const [benchmark, r] = key.split('\u0000') as [string, string];
      const compliant = list.filter((x) => x.realised === x.r).length;
      return { benchmark, r, replies: list.length, compliant, share: list.length > 0 ? compliant / list.length : null };
    })
    .sort((a, b) => cmp(a.benchmark, b.benchmark) || cmp(a.r, b.r));
}

/** The rows whose reply is written in the requested language (§6.6); rows with no identified language are dropped. */
export function restrictToRequested(rows: readonly PtrueRow[]): PtrueRow[] {
  return rows.filter((r) => r.realised !== undefined && r.realised !== null && r.realised === r.r);
}

export interface ScorerRow {
  readonly benchmark: string;
  readonly q: string;
  readonly replies: number;
  /** Accuracy under the primary correctness (exact option match). */
  readonly primary: number;
  /** Accuracy under the alternative (the judge). */
  readonly alternative: number;
}

/** Accuracy per question language under both scorers, for benchmarks with an alternative correctness; `distinct` as for compliance. */
export function scorerComparison(rows: readonly PtrueRow[], distinct: readonly PtrueRow[] = replies(rows)): ScorerRow[] {
  const both = distinct.filter((r) => r.correct_alt !== undefined && r.correct_alt !== null);
  return [...groupByParts(both, [(r) => r.benchmark, (r) => r.q], '\u0000')]
    .map(([key, list]) => {
      const [benchmark, q] = key.split('\u0000') as [string, string];
      return {
        benchmark,
        q,
        replies: list.length,
        primary: list.filter((r) => r.correct).length / list.length,
        alternative: list.filter((r) => r.correct_alt).length / list.length,
      };
    })
    .sort((a, b) => cmp(a.benchmark, b.benchmark) || cmp(a.q, b.q));
}
