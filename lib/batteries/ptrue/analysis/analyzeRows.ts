/**
 * Every P(True) table from item-level rows (Disentangling Question, Response, and Verifier Languages §5–6 and the appendices): the estimators of
 * this folder run in one place, for the main rows and for the restricted view.
 */
import { axisLevels, axisSpans, qrTable, type AxisLevel, type AxisSpan, type QrCell } from './axes.js';
import { configurationCells } from './cells.js';
import { accuracyDecomposition, configurationDecompositions, hasStrata, type Decomposition } from './decomposition.js';
import { matchingEffects, type MatchingEffects } from './matching.js';
import { englishUnits, rankAnalysis, type RankChange, type RankReference } from './ranks.js';
import { regimeSummaries, type RegimeSummary } from './regimes.js';
import { reliabilityDiagrams, type ReliabilityDiagram } from './reliability.js';
import { METRICS, type CellMetrics, type PtrueRow } from './types.js';

import { compliance, replies, restrictToRequested, scorerComparison, type ComplianceRow, type ScorerRow } from './views.js';
import { groupBy, readoutHealth } from '../../../api/battery.js';
import type { ReadoutHealth } from '../../../api/battery.js';

export interface AnalyzeOptions {
  /** Item-bootstrap and model-bootstrap draws (0 skips the intervals). */
  readonly draws: number;
  readonly seed: number;
  /** Whether the rows come from simulated models (labelled so everywhere). */
  readonly simulated: boolean;
  /** The reference language of the rank path (default en). */
  readonly english?: string;
  /** Rows brought in (`analyze --replies`): a missing P(True) is an empty `p_true`, not a reply without logprobs. */
  readonly byo?: boolean;
}

/** The tables that the restricted view repeats. */
export interface CoreTables {
  readonly rows: number;
  readonly cells: readonly CellMetrics[];
  readonly regimes: readonly RegimeSummary[];
  readonly axes: readonly AxisLevel[];
  readonly spans: readonly AxisSpan[];
  readonly qr: readonly QrCell[];
  readonly accuracyShares: readonly Decomposition[];
}

// Each battery's results type lists its own tables (X-Value's XvalueResults looks alike); a shared
// shape would tie one battery's report to another's, which a battery never reaches into.
export interface PtrueResults extends CoreTables {
  readonly simulated: boolean;
  readonly models: readonly string[];
  readonly benchmarks: readonly string[];
  readonly configurationShares: readonly Decomposition[];
  readonly rankChanges: readonly RankChange[];
  readonly rankReferences: readonly RankReference[];
  readonly matching: readonly MatchingEffects[];
  readonly reliability: readonly ReliabilityDiagram[];
  readonly compliance: readonly ComplianceRow[];
  readonly scorers: readonly ScorerRow[];
  /** The same core tables over the replies written in the requested language (§6.6); null when no language was identified. */
  readonly restricted: CoreTables | null;
  /** How many rows' P(True) could be read, and why not (warned about in every output). */
  readonly readout: ReadoutHealth;
}

/** Each benchmark's rows in row order (one pass, instead of a filter over every row per benchmark and table). */
function rowsByBenchmark(rows: readonly PtrueRow[]): ReadonlyMap<string, readonly PtrueRow[]> {
  return groupBy(rows, (r) => r.benchmark);
}

function coreTables(rows: readonly PtrueRow[], benchmarks: readonly string[], byBenchmark = rowsByBenchmark(rows)): CoreTables {
  const cells = configurationCells(rows);
  const axes = axisLevels(cells);
  return {
    rows: rows.length,
    cells,
    regimes: regimeSummaries(rows, cells),
    axes,
    spans: axisSpans(axes, METRICS),
    qr: qrTable(cells),
    accuracyShares: benchmarks.map((b) => accuracyDecomposition(b, byBenchmark.get(b) ?? [])),
  };
}

/**
 * All tables of the study from its rows.
 * @example analyzePtrueRows(rows, { draws: 200, seed: 1, simulated: true }).regimes
 */
export function analyzePtrueRows(rows: readonly PtrueRow[], opts: AnalyzeOptions): PtrueResults {
  const byBenchmark = rowsByBenchmark(rows);
  const benchmarks = [...byBenchmark.keys()].sort();
  const core = coreTables(rows, benchmarks, byBenchmark);
  // Every row is in one configuration cell: the cells name every model, without another pass over the rows.
  const models = [...new Set(core.cells.map((c) => c.model))].sort();
  const configurationShares: Decomposition[] = [];
  const rankChanges: RankChange[] = [];
  const rankReferences: RankReference[] = [];
  const matching: MatchingEffects[] = [];
  for (const b of benchmarks) {
    const mine = byBenchmark.get(b)!;
    configurationShares.push(...configurationDecompositions(b, mine, ['auroc', 'ece', 'brier'], { stratum: hasStrata(mine) && mine.some((r) => r.content_language !== null) }));
    // One set of bootstrap units per benchmark: its metrics share their resamples (ranks.ts EnglishUnits).
    const units = englishUnits(mine, b, opts.english ?? 'en');
    for (const metric of METRICS) {
      const r = rankAnalysis(rows, core.cells, b, metric, { draws: opts.draws, seed: opts.seed, english: opts.english ?? 'en', units });
      rankChanges.push(...r.changes);
      rankReferences.push(r.reference);
    }
    for (const metric of ['auroc', 'ece'] as const) matching.push(matchingEffects(core.cells, b, metric, { draws: opts.draws, seed: opts.seed }));
  }
  const restrictedRows = restrictToRequested(rows);
  const identified = rows.some((r) => r.realised !== undefined && r.realised !== null);
  const distinctReplies = replies(rows);
  return {
    ...core,
    simulated: opts.simulated,
    models,
    benchmarks,
    configurationShares,
    rankChanges,
    rankReferences,
    matching,
    reliability: reliabilityDiagrams(rows, opts.english ?? 'en'),
    compliance: compliance(rows, distinctReplies),
    scorers: scorerComparison(rows, distinctReplies),
    restricted: identified ? coreTables(restrictedRows, benchmarks) : null,
    readout: readoutHealth('P(True)', 'verifier rows', rows, opts.byo === true ? (r) => (r.p_true === null ? 'p_true is empty' : null) : whyUnreadable),
  };
}

/**
 * Why a row's P(True) is missing, told apart by what the row says of its logprobs: none stored
 * (`exact` null: the verify reply had no logprobs), bounds only (a top-k fallback), exact logprobs
 * without a True/False candidate (a server that returns its own top-k, such as the top 20, rather
 * than the candidates asked for), or a bring-your-own row whose `p_true` is empty.
 */
function whyUnreadable(row: PtrueRow): string | null {
  if (row.p_true !== null) return null;
  if (row.exact === null || row.exact === undefined) return 'the verify reply carries no logprobs (the provider or model returned none)';
  if (row.exact === false) return "only top-k bounds for both True and False (the model fell back to its top-k logprobs)";
  if (row.exact === true) return 'no True/False candidate among the logprobs (the server returned its own top-k, not the candidates asked for)';
  return 'p_true is empty';
}
