/**
 * Model rank changes between language settings (Disentangling Question, Response, and Verifier Languages §1, App. E, Figures 1 and 5, Table 8).
 *
 * The path of App. E switches the three languages in sequence, from all-English to fully
 * localised, for each target language L ≠ en: S0 (en, en, en) → S1 (L, en, en) → S2 (L, L, en) →
 * S3 (L, L, L). A model's score in S1–S3 is its cell metric averaged over the target languages
 * (Figure 5: "averaged over five target languages"). Reported per benchmark and metric:
 * - Kendall τ-b (lib/metrics/rank.ts) between consecutive steps and between S0 and each step;
 * - the pairs of models whose order reverses between S0 and S3, and between S2 and S3 (the
 *   verifier step, where accuracy cannot change), counted among all pairs and among the pairs
 *   "significantly ordered" in the first setting (the item-bootstrap 95 % interval of their
 *   difference excludes 0);
 * - single-configuration τ: for every condition (q, r, v) but all-English, τ-b between the models'
 *   scores there and in all-English; their median, against the all-English bootstrap reference
 *   (App. E: "single-configuration rankings depart from the all-English ranking more than
 *   all-English bootstrap sampling noise").
 * The bootstrap resamples base items with replacement (App. B: the item bootstrap preserves the
 * dependence among an item's configurations), with a fixed seed.
 */
import { bootstrapTauReference, groupBy, median, orderReversals, quantile, resampleIndices, seededRandom, tauBetween } from '../../../api/battery.js';
import type { BootstrapTauReference, ScoresByUnit } from '../../../api/battery.js';
import { metricSet } from './cells.js';
import type { CellMetrics, MetricName, MetricSet, PtrueRow } from './types.js';

export const PATH_STEPS = ['S0 all-English', 'S1 question', 'S2 question+response', 'S3 all localised'] as const;

/** The condition of step `s` for target language L. */
export function stepCondition(step: number, target: string, english = 'en'): { q: string; r: string; v: string } {
  return { q: step >= 1 ? target : english, r: step >= 2 ? target : english, v: step >= 3 ? target : english };
}

/** Each model's score at each step of the path (mean over target languages of its cell metric). */
export function pathScores(cells: readonly CellMetrics[], benchmark: string, metric: MetricName, english = 'en'): Map<string, number>[] {
  const mine = cells.filter((c) => c.benchmark === benchmark);
  const byKey = new Map(mine.map((c) => [`${c.model}\u0000${c.q}\u0000${c.r}\u0000${c.v}`, c]));
  const models = [...new Set(mine.map((c) => c.model))].sort();
  const targets = [...new Set(mine.map((c) => c.q))].filter((l) => l !== english).sort();
  return PATH_STEPS.map((_, step) => {
    const scores = new Map<string, number>();
    for (const m of models) {
      const values = (step === 0 ? [english] : targets)
        .map((t) => stepCondition(step, t, english))
        .map((c) => byKey.get(`${m}\u0000${c.q}\u0000${c.r}\u0000${c.v}`)?.[metric])
        .filter((x): x is number => typeof x === 'number');
      if (values.length > 0) scores.set(m, values.reduce((s, x) => s + x, 0) / values.length);
    }
    return scores;
  });
}

export interface RankChange {
  readonly benchmark: string;
  readonly metric: MetricName;
  readonly from: string;
  readonly to: string;
  readonly tau: number | null;
  readonly pairs: number;
  readonly reversed: number;
  /** Pairs significantly ordered in `from` (bootstrap), and how many of them reverse. */
  readonly significantPairs: number | null;
  readonly significantReversed: number | null;
}

export interface RankReference {
  readonly benchmark: string;
  readonly metric: MetricName;
  /** Median τ-b between single configurations and all-English, and its 2.5–97.5 % range over configurations. */
  readonly singleConfigMedianTau: number | null;
  readonly singleConfigLo: number | null;
  readonly singleConfigHi: number | null;
  readonly configurations: number;
  readonly bootstrap: Omit<BootstrapTauReference, 'taus'>;
}

/**
 * Per model, its all-English rows of one benchmark grouped by base item (the bootstrap's units),
 * and the metrics of every resample scored so far. Every metric and both bootstraps (the
 * significant pairs and the τ reference) draw the same resamples (the same seed and item count),
 * so each resample's metrics are computed once per model and read for each metric: at the
 * paper's size that is 201 metric sets per model and benchmark instead of 3,208, the same numbers
 * (metricSet of the same rows in the same order).
 */
export interface EnglishUnits {
  readonly items: readonly string[];
  readonly byModel: ReadonlyMap<string, ReadonlyMap<string, readonly PtrueRow[]>>;
  /** Per resample (its indices joined), each model's metrics on it. */
  readonly scored: Map<string, ReadonlyMap<string, MetricSet>>;
}

/** The bootstrap's units of one benchmark (pass them to every rankAnalysis of the benchmark). */
export function englishUnits(rows: readonly PtrueRow[], benchmark: string, english = 'en'): EnglishUnits {
  const mine = rows.filter((r) => r.benchmark === benchmark && r.q === english && r.r === english && r.v === english);
  const items = [...new Set(mine.map((r) => r.base_item))].sort();
  const byModel = new Map<string, Map<string, PtrueRow[]>>();
  for (const [model, list] of groupBy(mine, (r) => r.model)) byModel.set(model, groupBy(list, (r) => r.base_item));
  return { items, byModel, scored: new Map() };
}

function scoresOn(units: EnglishUnits, sample: readonly number[], metric: MetricName): ScoresByUnit {
  const key = sample.join(',');
  let sets = units.scored.get(key);
  if (sets === undefined) {
    const made = new Map<string, MetricSet>();
    for (const [model, byItem] of units.byModel) made.set(model, metricSet(resampledRows(units.items, byItem, sample)));
    units.scored.set(key, made);
    sets = made;
  }
  const out = new Map<string, number>();
  for (const [model, set] of sets) {
    const s = set[metric];
    if (s !== null) out.set(model, s);
  }
  return out;
}

/**
 * A model's rows of the resampled items, item by item in the sample's order (what
 * `sample.flatMap((i) => byItem.get(items[i]) ?? [])` gives, without an array per item: at the
 * paper's size 200 resamples × 10 models × 960 items per benchmark).
 */
function resampledRows(items: readonly string[], byItem: ReadonlyMap<string, readonly PtrueRow[]>, sample: readonly number[]): PtrueRow[] {
  const out: PtrueRow[] = [];
  for (const i of sample) {
    const list = byItem.get(items[i]!);
    if (list !== undefined) for (const r of list) out.push(r);
  }
  return out;
}

/** Pairs whose bootstrap 95 % interval of the all-English difference excludes 0. */
function significantPairs(units: EnglishUnits, metric: MetricName, draws: number, seed: number): Set<string> {
  const random = seededRandom(seed);
  const diffs = new Map<string, number[]>();
  for (let d = 0; d < draws; d++) {
    const s = scoresOn(units, resampleIndices(units.items.length, random), metric);
    const models = [...s.keys()].sort();
    for (let i = 0; i < models.length; i++) {
      for (let j = i + 1; j < models.length; j++) {
        const key = `${models[i]}\u0000${models[j]}`;
        const list = diffs.get(key) ?? [];
        list.push(s.get(models[i]!)! - s.get(models[j]!)!);
        diffs.set(key, list);
      }
    }
  }
  const out = new Set<string>();
  for (const [key, list] of diffs) {
    const lo = quantile(list, 0.025);
    const hi = quantile(list, 0.975);
    if (lo !== null && hi !== null && (lo > 0 || hi < 0)) out.add(key);
  }
  return out;
}

export interface RankOptions {
  readonly draws: number;
  readonly seed: number;
  readonly english?: string;
  /** The benchmark's englishUnits, shared by its metrics; made here when not given. */
  readonly units?: EnglishUnits;
}

/** Rank changes along the path and the single-configuration τ against the bootstrap reference. */
export function rankAnalysis(
  rows: readonly PtrueRow[],
  cells: readonly CellMetrics[],
  benchmark: string,
  metric: MetricName,
  opts: RankOptions,
): { readonly changes: RankChange[]; readonly reference: RankReference } {
  const english = opts.english ?? 'en';
  const path = pathScores(cells, benchmark, metric, english);
  const units = opts.units ?? englishUnits(rows, benchmark, english);
  const significant = opts.draws > 0 && units.items.length > 0 ? significantPairs(units, metric, opts.draws, opts.seed) : null;
  const changes: RankChange[] = [];
  const compare = (a: number, b: number, useSignificance: boolean): void => {
    const from = path[a]!;
    const to = path[b]!;
    const all = orderReversals(from, to);
    const sig = useSignificance && significant ? orderReversals(from, to, (x, y) => significant.has(`${[x, y].sort().join('\u0000')}`)) : null;
    changes.push({
      benchmark,
      metric,
      from: PATH_STEPS[a]!,
      to: PATH_STEPS[b]!,
      tau: tauBetween(from, to),
      pairs: all.pairs,
      reversed: all.reversed.length,
      significantPairs: sig ? sig.pairs : null,
      significantReversed: sig ? sig.reversed.length : null,
    });
  };
  compare(0, 1, true);
  compare(1, 2, false);
  compare(2, 3, false);
  compare(0, 3, true);
  // Single configurations against all-English.
  const mine = cells.filter((c) => c.benchmark === benchmark);
  const base = new Map(mine.filter((c) => c.q === english && c.r === english && c.v === english && c[metric] !== null).map((c) => [c.model, c[metric] as number]));
  const taus: number[] = [];
  for (const [key, list] of groupBy(mine, (c) => `${c.q}\u0000${c.r}\u0000${c.v}`)) {
    if (key === `${english}\u0000${english}\u0000${english}`) continue;
    const t = tauBetween(base, new Map(list.filter((c) => c[metric] !== null).map((c) => [c.model, c[metric] as number])));
    if (t !== null) taus.push(t);
  }
  const boot = bootstrapTauReference(units.items.length, (sample) => scoresOn(units, sample, metric), { draws: opts.draws, seed: opts.seed });
  const { taus: _taus, ...bootstrap } = boot;
  return {
    changes,
    reference: {
      benchmark,
      metric,
      singleConfigMedianTau: median(taus),
      singleConfigLo: quantile(taus, 0.025),
      singleConfigHi: quantile(taus, 0.975),
      configurations: taus.length,
      bootstrap,
    },
  };
}
