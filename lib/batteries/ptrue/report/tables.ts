/**
 * The P(True) result tables as CSV (one file each, README "Results"): flat rows, one column per
 * field, numbers as lib/report/csv.ts writes them, empty for null (an undefined AUROC stays empty,
 * never 0 or 0.5).
 */
import { toCsv } from '../../../api/battery.js';
import type { PtrueResults, CoreTables } from '../analysis/analyzeRows.js';
import type { Decomposition } from '../analysis/decomposition.js';

type Row = Record<string, unknown>;
const csv = (rows: readonly Row[], columns: readonly string[]): string => toCsv(columns as never[], rows as never[]);

const METRIC_COLS = ['accuracy', 'mean_confidence', 'brier', 'ece', 'auroc'];

export function cellsCsv(t: CoreTables): string {
  return csv(
    t.cells.map((c) => ({ ...c, mean_confidence: c.meanConfidence })),
    ['benchmark', 'model', 'q', 'r', 'v', 'n', 'invalid', ...METRIC_COLS],
  );
}

export function regimesCsv(t: CoreTables): string {
  return csv(
    t.regimes.map((g) => ({
      benchmark: g.benchmark,
      regime: g.regime,
      n: g.pooled.n,
      pooled_accuracy: g.pooled.accuracy,
      pooled_brier: g.pooled.brier,
      pooled_ece: g.pooled.ece,
      pooled_auroc: g.pooled.auroc,
      cells: g.cellMean.cells,
      cell_accuracy: g.cellMean.accuracy,
      cell_brier: g.cellMean.brier,
      cell_ece: g.cellMean.ece,
      cell_auroc: g.cellMean.auroc,
      auroc_cells: g.cellMean.aurocCells,
    })),
    ['benchmark', 'regime', 'n', 'pooled_accuracy', 'pooled_brier', 'pooled_ece', 'pooled_auroc', 'cells', 'cell_accuracy', 'cell_brier', 'cell_ece', 'cell_auroc', 'auroc_cells'],
  );
}

export function axesCsv(t: CoreTables): string {
  return csv(
    t.axes.map((a) => ({ benchmark: a.benchmark, axis: a.axis, level: a.level, ...a.means })),
    ['benchmark', 'axis', 'level', 'cells', 'accuracy', 'brier', 'ece', 'auroc'],
  );
}

export function spansCsv(t: CoreTables): string {
  return csv(t.spans as unknown as Row[], ['benchmark', 'axis', 'metric', 'span', 'lowest', 'highest']);
}

export function qrCsv(t: CoreTables): string {
  return csv(
    t.qr.map((c) => ({ benchmark: c.benchmark, q: c.q, r: c.r, ...c.means })),
    ['benchmark', 'q', 'r', 'cells', 'accuracy', 'brier', 'ece', 'auroc'],
  );
}

/** One row per decomposition × term: the mean share, and each model's. */
export function sharesCsv(ds: readonly Decomposition[]): string {
  const rows: Row[] = [];
  for (const d of ds) {
    for (const t of d.mean) rows.push({ benchmark: d.benchmark, outcome: d.outcome, factors: d.factors.join('+'), model: '(mean)', term: t.term, share: t.share, models: t.n, note: null });
    for (const m of d.perModel) {
      if (!m.decomposition) {
        rows.push({ benchmark: d.benchmark, outcome: d.outcome, factors: d.factors.join('+'), model: m.model, term: null, share: null, models: null, note: m.reason });
        continue;
      }
      for (const t of m.decomposition.terms) rows.push({ benchmark: d.benchmark, outcome: d.outcome, factors: d.factors.join('+'), model: m.model, term: t.term, share: t.share, models: null, note: null });
    }
  }
  return csv(rows, ['benchmark', 'outcome', 'factors', 'model', 'term', 'share', 'models', 'note']);
}

export function rankChangesCsv(r: PtrueResults): string {
  return csv(r.rankChanges as unknown as Row[], ['benchmark', 'metric', 'from', 'to', 'tau', 'pairs', 'reversed', 'significantPairs', 'significantReversed']);
}

export function rankReferenceCsv(r: PtrueResults): string {
  return csv(
    r.rankReferences.map((x) => ({
      benchmark: x.benchmark,
      metric: x.metric,
      configurations: x.configurations,
      single_config_median_tau: x.singleConfigMedianTau,
      single_config_lo: x.singleConfigLo,
      single_config_hi: x.singleConfigHi,
      bootstrap_draws: x.bootstrap.draws,
      bootstrap_mean_tau: x.bootstrap.mean,
      bootstrap_median_tau: x.bootstrap.median,
      bootstrap_lo: x.bootstrap.lo,
      bootstrap_hi: x.bootstrap.hi,
    })),
    ['benchmark', 'metric', 'configurations', 'single_config_median_tau', 'single_config_lo', 'single_config_hi', 'bootstrap_draws', 'bootstrap_mean_tau', 'bootstrap_median_tau', 'bootstrap_lo', 'bootstrap_hi'],
  );
}

/** Mixed-model and model-level coefficients, one row per benchmark × metric × term. */
export function matchingCsv(r: PtrueResults): string {
  const rows: Row[] = [];
  for (const m of r.matching) {
    const names = m.mixed?.coefficients.map((c) => c.name) ?? m.modelLevel.map((c) => c.name);
    for (const name of names) {
      const c = m.mixed?.coefficients.find((x) => x.name === name);
      const ml = m.modelLevel.find((x) => x.name === name);
      rows.push({
        benchmark: m.benchmark,
        metric: m.metric,
        term: name,
        estimate: c?.estimate,
        se: c?.se,
        lo: c?.lo,
        hi: c?.hi,
        cells: m.cells,
        models: m.models,
        tau2: m.mixed?.tau2,
        sigma2: m.mixed?.sigma2,
        model_mean: ml?.mean,
        model_lo: ml?.lo,
        model_hi: ml?.hi,
        same_sign_models: ml?.sameSign,
        note: m.reason,
      });
    }
  }
  return csv(rows, ['benchmark', 'metric', 'term', 'estimate', 'se', 'lo', 'hi', 'cells', 'models', 'tau2', 'sigma2', 'model_mean', 'model_lo', 'model_hi', 'same_sign_models', 'note']);
}

export function reliabilityCsv(r: PtrueResults): string {
  const rows = r.reliability.flatMap((d) => d.bins.map((b) => ({ benchmark: d.benchmark, setting: d.setting, bin: b.index + 1, lo: b.lo, hi: b.hi, n: b.n, confidence: b.confidence, accuracy: b.accuracy })));
  return csv(rows, ['benchmark', 'setting', 'bin', 'lo', 'hi', 'n', 'confidence', 'accuracy']);
}

export function complianceCsv(r: PtrueResults): string {
  return csv(r.compliance as unknown as Row[], ['benchmark', 'r', 'replies', 'compliant', 'share']);
}

export function scorersCsv(r: PtrueResults): string {
  return csv(r.scorers as unknown as Row[], ['benchmark', 'q', 'replies', 'primary', 'alternative']);
}

/** Every CSV file of the results, by file name. */
export function csvFiles(r: PtrueResults): [string, string][] {
  const files: [string, string][] = [
    ['cells.csv', cellsCsv(r)],
    ['regimes.csv', regimesCsv(r)],
    ['axes.csv', axesCsv(r)],
    ['axis_spans.csv', spansCsv(r)],
    ['qr.csv', qrCsv(r)],
    ['accuracy_shares.csv', sharesCsv(r.accuracyShares)],
    ['configuration_shares.csv', sharesCsv(r.configurationShares)],
    ['rank_changes.csv', rankChangesCsv(r)],
    ['rank_reference.csv', rankReferenceCsv(r)],
    ['matching_effects.csv', matchingCsv(r)],
    ['reliability.csv', reliabilityCsv(r)],
    ['compliance.csv', complianceCsv(r)],
    ['scorers.csv', scorersCsv(r)],
  ];
  if (r.restricted) {
    files.push(['restricted_cells.csv', cellsCsv(r.restricted)], ['restricted_regimes.csv', regimesCsv(r.restricted)], ['restricted_axes.csv', axesCsv(r.restricted)]);
  }
  return files;
}
