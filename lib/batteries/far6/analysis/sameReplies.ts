/**
 * Story profiles of the same replies read twice, with identical weights (Same Judgment, Different Yes §3 last
 * paragraph, §4: "On the same 71,282 replies with both readings decisive, the token and sentence
 * profiles agree at 0.67"). same_replies_shares.sql keeps, per pair of a rule and a judge, only
 * the replies both read decisively; the estimators turn them into story scores as usual, and each
 * cell's two profiles are compared on their common stories.
 */
import { CellEstimates, Readouts } from './estimators.js';
import { FAR6_SQL } from '../sqlLibrary.js';
import { parseItemShareRows } from './parseRows.js';
import type { Proposition } from '../types.js';
import type { ItemShareRow, Queryable, Readout, SameRepliesResults, TableSources } from './types.js';

const PAIRED = /^(.+) \[with (.+)\]$/;

/**
 * The readout pairs of the same replies: `f/c/judge:j [with rule]` against `f/c/rule [with judge:j]`,
 * for every such pair present.
 */
export function sameReplyPairs(readouts: Iterable<Readout>): [Readout, Readout][] {
  const present = new Set(readouts);
  const out: [Readout, Readout][] = [];
  for (const readout of [...present].sort()) {
    const i = readout.indexOf('/');
    const j = readout.indexOf('/', i + 1);
    const match = PAIRED.exec(readout.slice(j + 1));
    if (!match || !(match[1] as string).startsWith('judge:')) continue;
    const other = `${readout.slice(0, j + 1)}${match[2] as string} [with ${match[1] as string}]`;
    if (present.has(other)) out.push([readout, other]);
  }
  return out;
}

/** Story scores of the paired readings and, per cell, their story-level r and mean |Δ|. */
export function sameRepliesAnalysis(rows: readonly ItemShareRow[], minCommonStories?: number): SameRepliesResults {
  const same = new SameReplies(minCommonStories);
  same.add(rows);
  return same.results();
}

/**
 * sameRepliesAnalysis fed whole cells a few at a time (CellEstimates), as analyzeCampaign.ts reads
 * same_replies_shares.sql's rows: the pairs to compare are known once every row is in.
 */
export class SameReplies {
  private readonly readouts = new Readouts();
  private readonly present = new Set<Readout>();
  private readonly cells: CellEstimates;

  constructor(minCommonStories?: number) {
    this.cells = new CellEstimates({ minCommonStories }, 'same_replies_shares.sql');
  }

  /** The rows of whole cells. */
  add(rows: readonly ItemShareRow[]): void {
    for (const row of rows) this.present.add(this.readouts.of(row));
    this.cells.add(rows);
  }

  results(): SameRepliesResults {
    const est = this.cells.results(sameReplyPairs(this.present));
    return { comparisons: est.comparisons, convergence: est.convergence, storyScores: est.storyScores.length };
  }
}

/** Runs same_replies_shares.sql and the estimators on its rows. */
export async function runSameReplies(
  db: Queryable,
  tables: TableSources,
  secondListed: ReadonlyMap<string, Proposition>,
  minCommonStories?: number,
): Promise<SameRepliesResults> {
  const rows = parseItemShareRows(await FAR6_SQL.run(db, 'same_replies_shares', tables), secondListed, 'same_replies_shares.sql');
  return sameRepliesAnalysis(rows, minCommonStories);
}
