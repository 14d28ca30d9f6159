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
  const first = new Map<string, PtrueRow>();
  let previous: PtrueRow | undefined;
  for (const r of rows) {
    // A verifier copy of the reply just seen is already kept: ptrue_rows lists a reply's copies
    // together, so five rows in six skip building their key (6.2 M keys at the paper's size).
    if (previous !== undefined && sameReply(previous, r)) continue;
    previous = r;
    const key = `${r.model}\u0000${r.benchmark}\u0000${r.base_item}\u0000${r.q}\u0000${r.r}`;
    if (!first.has(key)) first.set(key, r);
  }
  return [...first.values()];
}

/** Whether two rows are verifier copies of one reply: the same model, benchmark, base item, q and r. */
function sameReply(a: PtrueRow, b: PtrueRow): boolean {
  return a.base_item === b.base_item && a.q === b.q && a.r === b.r && a.model === b.model && a.benchmark === b.benchmark;
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
