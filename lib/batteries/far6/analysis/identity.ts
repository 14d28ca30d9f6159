/**
 * Model identity across languages (Same Judgment, Different Yes §5, Table 6, Figure 3a and "Estimation steps"):
 * nearest neighbours among the n − 1 other cells under residual r, story-level r and mean |Δ|; the
 * count of cells whose nearest neighbour is the same model in another language beside a
 * uniform-random benchmark; class means (same model / same language / both differ) with 95 %
 * story-bootstrap intervals and class differences on the same draws; the same by story group.
 *
 * Bootstrap: stories are resampled with replacement (models and languages fixed), 300 draws from a
 * fixed seed. A draw is a vector of story multiplicities; every pair is recomputed as a weighted
 * statistic over it. That is the seed's "every cell recomputed per draw including the residual
 * centering": a story drawn twice keeps its scores, so its language consensus is unchanged, and
 * the cell mean is recomputed as the weighted mean inside the weighted Pearson r. A pair counts in
 * a draw when its resampled common stories (with multiplicity) reach the minimum.
 */
import { quantile, seedFromKey, seededRandom } from '../../../api/battery.js';
import { MIN_COMMON_STORIES } from './estimators.js';
import { BootstrapPairs } from './bootstrapPairs.js';
import { comparePairs, pairIndices, profileMatrix } from './profiles.js';
import type { PairIndex, ProfileMatrix } from './profiles.js';
import type {
  CellKey,
  ClassContrast,
  ClassEstimate,
  IdentityCount,
  IdentityMetric,
  IdentityModel,
  IdentityOptions,
  IdentityResults,
  NearestNeighbour,
  PairClass,
  ProfilePair,
  Readout,
  StoryScore,
} from './types.js';

/** Same Judgment, Different Yes "Estimation steps": 300 bootstrap resamples of stories. */
export const BOOTSTRAP_DRAWS = 300;
/** Fixed, so that the intervals of a given data set reproduce exactly. */
export const BOOTSTRAP_SEED = seedFromKey('sondage:far6:story-bootstrap');
/** Same Judgment, Different Yes §5: proposition labels under plain questions; free sentences (judged) as the second readout. */
export const DEFAULT_IDENTITY_READOUTS: readonly string[] = ['plain/label/rule', 'plain/free/judge:*'];

export const IDENTITY_METRICS: readonly IdentityMetric[] = ['residual_r', 'story_r', 'mean_abs_diff'];
const CLASSES: readonly PairClass[] = ['same_model', 'same_language', 'both_differ'];
const DIFFERENCES: readonly (readonly [ClassContrast, PairClass, PairClass])[] = [
  ['same_model-same_language', 'same_model', 'same_language'],
  ['same_model-both_differ', 'same_model', 'both_differ'],
  ['same_language-both_differ', 'same_language', 'both_differ'],
];
/** Values this close count as tied (the seed: "no ties occurred"; we must still say what a tie does). */
const TIE_TOLERANCE = 1e-12;

function metricOf(p: ProfilePair, metric: IdentityMetric): number | null {
  return metric === 'residual_r' ? p.residual_r : metric === 'story_r' ? p.r : p.mean_abs_diff;
}

/** Readouts matching the patterns (`*` at the end matches a prefix), in pattern order, each once. */
export function selectReadouts(present: readonly Readout[], patterns: readonly string[]): Readout[] {
  const sorted = [...new Set(present)].sort();
  const out: Readout[] = [];
  for (const pattern of patterns) {
    const hits = pattern.endsWith('*') ? sorted.filter((r) => r.startsWith(pattern.slice(0, -1))) : sorted.filter((r) => r === pattern);
    for (const h of hits) if (!out.includes(h)) out.push(h);
  }
  return out;
}

/**
 * The nearest other cell of every cell under one metric (highest r, lowest mean |Δ|), from the
 * pair comparisons of one readout. A tie credits the same-model share of the tied cells, which is
 * what a random tie-break gives on average. The benchmark gives each candidate equal probability.
 */
export function nearestNeighbours(cells: readonly CellKey[], pairs: readonly ProfilePair[], metric: IdentityMetric, readout: Readout): NearestNeighbour[] {
  const key = (m: string, l: string): string => `${m}/${l}`;
  const candidates = new Map<string, { cell: CellKey; value: number }[]>();
  for (const c of cells) candidates.set(key(c.model, c.language), []);
  for (const p of pairs) {
    const v = metricOf(p, metric);
    if (v === null) continue;
    candidates.get(key(p.model_a, p.language_a))?.push({ cell: { model: p.model_b, language: p.language_b }, value: v });
    candidates.get(key(p.model_b, p.language_b))?.push({ cell: { model: p.model_a, language: p.language_a }, value: v });
  }
  const better = metric === 'mean_abs_diff' ? (x: number, y: number) => x < y : (x: number, y: number) => x > y;
  return cells.map((cell): NearestNeighbour => {
    const list = candidates.get(key(cell.model, cell.language)) ?? [];
    if (list.length === 0) {
      return { ...cell, readout, metric, n_candidates: 0, value: null, neighbours: '', n_tied: 0, same_model: null, chance: null };
    }
    let best = (list[0] as { value: number }).value;
    for (const c of list) if (better(c.value, best)) best = c.value;
    const tied = list.filter((c) => Math.abs(c.value - best) <= TIE_TOLERANCE).sort((x, y) => (key(x.cell.model, x.cell.language) < key(y.cell.model, y.cell.language) ? -1 : 1));
    const sameTied = tied.filter((c) => c.cell.model === cell.model).length;
    const sameAll = list.filter((c) => c.cell.model === cell.model).length;
    return {
      ...cell,
      readout,
      metric,
      n_candidates: list.length,
      value: best,
      neighbours: tied.map((c) => key(c.cell.model, c.cell.language)).join(';'),
      n_tied: tied.length,
      same_model: sameTied / tied.length,
      chance: sameAll / list.length,
    };
  });
}

/** Same Judgment, Different Yes Table 6: same-model nearest neighbours per readout and metric, beside the random benchmark. */
export function identityCounts(neighbours: readonly NearestNeighbour[]): IdentityCount[] {
  const groups = new Map<string, { readout: Readout; metric: IdentityMetric; n: number; same: number; chance: number; ties: number }>();
  for (const nb of neighbours) {
    const k = `${nb.readout}\u0000${nb.metric}`;
    const g = groups.get(k) ?? { readout: nb.readout, metric: nb.metric, n: 0, same: 0, chance: 0, ties: 0 };
    groups.set(k, g);
    if (nb.same_model === null || nb.chance === null) continue;
    g.n += 1;
    g.same += nb.same_model;
    g.chance += nb.chance;
    if (nb.n_tied > 1) g.ties += 1;
  }
  return [...groups.values()].map((g) => ({ readout: g.readout, metric: g.metric, n_cells: g.n, same_model: g.same, expected_random: g.chance, n_ties: g.ties }));
}

/**
 * Same Judgment, Different Yes Figure 3b: per model, how many of its cells have the same model as nearest neighbour,
 * and the spread of its same-model (language-pair) values.
 */
export function identityModels(neighbours: readonly NearestNeighbour[], pairs: readonly ProfilePair[]): IdentityModel[] {
  const out = new Map<string, { row: Omit<IdentityModel, 'mean' | 'min' | 'max' | 'n_pairs'>; values: number[] }>();
  const key = (readout: string, metric: string, model: string): string => `${readout}\u0000${metric}\u0000${model}`;
  for (const nb of neighbours) {
    const k = key(nb.readout, nb.metric, nb.model);
    const g = out.get(k) ?? { row: { readout: nb.readout, metric: nb.metric, model: nb.model, n_cells: 0, same_model_nearest: 0 }, values: [] };
    out.set(k, g);
    if (nb.same_model === null) continue;
    g.row = { ...g.row, n_cells: g.row.n_cells + 1, same_model_nearest: g.row.same_model_nearest + nb.same_model };
  }
  for (const p of pairs) {
    if (p.class !== 'same_model') continue;
    for (const metric of IDENTITY_METRICS) {
      const v = metricOf(p, metric);
      if (v !== null) out.get(key(p.readout, metric, p.model_a))?.values.push(v);
    }
  }
  return [...out.values()].map(({ row, values }) => ({
    ...row,
    n_pairs: values.length,
    mean: values.length ? values.reduce((a, b) => a + b, 0) / values.length : null,
    min: values.length ? Math.min(...values) : null,
    max: values.length ? Math.max(...values) : null,
  }));
}

/**
 * Class means of the three metrics under story weights `w` (null = every story once); NaN where a
 * class is empty. Each pair's statistics are weightedPearson's and weightedPearsonAndMeanAbsDiff's
 * (BootstrapPairs gives the same doubles), summed in pair order.
 */
function classMeans(b: BootstrapPairs, pairs: readonly PairIndex[], w: Float64Array | null, minCommon: number, out: Float64Array, counts?: Int32Array): void {
  // out[metric * 3 + class]: sums first, then means.
  out.fill(0);
  const cnt = counts ?? new Int32Array(9);
  cnt.fill(0);
  b.prepare(w);
  for (let i = 0; i < pairs.length; i++) {
    const p = pairs[i] as PairIndex;
    const c = p.cls === 'same_model' ? 0 : p.cls === 'same_language' ? 1 : 2;
    const v = b.compute(i, minCommon);
    for (let metric = 0; metric < 3; metric++) {
      const x = v[metric] as number;
      if (Number.isNaN(x)) continue;
      const o = metric * 3 + c;
      out[o] = (out[o] as number) + x;
      cnt[o] = (cnt[o] as number) + 1;
    }
  }
  for (let i = 0; i < 9; i++) out[i] = (cnt[i] as number) > 0 ? (out[i] as number) / (cnt[i] as number) : Number.NaN;
}

/**
 * Class means and class differences with 95 % percentile intervals over `draws` story-bootstrap
 * resamples of `pool` (story indices of the matrix), all from one seeded stream.
 */
export function classBootstrap(
  m: ProfileMatrix,
  pairs: readonly PairIndex[],
  pool: readonly number[],
  opts: { draws: number; seed: number; minCommonStories: number; storyGroup: string },
): ClassEstimate[] {
  const b = new BootstrapPairs(m, pairs);
  const point = new Float64Array(9);
  const pointCounts = new Int32Array(9);
  classMeans(b, pairs, null, opts.minCommonStories, point, pointCounts);
  const perDraw: Float64Array[] = [];
  if (pool.length > 0) {
    const rng = seededRandom(opts.seed);
    const w = new Float64Array(m.stories.length);
    for (let d = 0; d < opts.draws; d++) {
      w.fill(0);
      for (let i = 0; i < pool.length; i++) {
        const k = pool[Math.floor(rng() * pool.length)] as number;
        w[k] = (w[k] as number) + 1;
      }
      const out = new Float64Array(9);
      classMeans(b, pairs, w, opts.minCommonStories, out);
      perDraw.push(out);
    }
  }
  const nan = (x: number): number | null => (Number.isNaN(x) ? null : x);
  const rows: ClassEstimate[] = [];
  IDENTITY_METRICS.forEach((metric, mi) => {
    const summarize = (contrast: ClassContrast, nPairs: number, estimate: number, f: (v: Float64Array) => number): void => {
      const values = perDraw.map(f).filter((x) => !Number.isNaN(x));
      const hasEstimate = !Number.isNaN(estimate);
      rows.push({
        readout: m.readout,
        story_group: opts.storyGroup,
        metric,
        contrast,
        n_pairs: nPairs,
        estimate: nan(estimate),
        ci_low: hasEstimate ? quantile(values, 0.025) : null,
        ci_high: hasEstimate ? quantile(values, 0.975) : null,
        n_draws: values.length,
      });
    };
    CLASSES.forEach((cls, ci) => {
      summarize(cls, pointCounts[mi * 3 + ci] as number, point[mi * 3 + ci] as number, (v) => v[mi * 3 + ci] as number);
    });
    for (const [contrast, x, y] of DIFFERENCES) {
      const ix = mi * 3 + CLASSES.indexOf(x);
      const iy = mi * 3 + CLASSES.indexOf(y);
      summarize(contrast, pointCounts[ix] as number, (point[ix] as number) - (point[iy] as number), (v) => (v[ix] as number) - (v[iy] as number));
    }
  });
  return rows;
}

/**
 * The identity analysis of Same Judgment, Different Yes §5 on the story scores of the chosen readouts.
 * @example const identity = identityAnalysis(results.storyScores, { minCommonStories: 8 });
 */
export function identityAnalysis(storyScores: readonly StoryScore[], opts: IdentityOptions & { minCommonStories?: number } = {}): IdentityResults {
  const minCommonStories = opts.minCommonStories ?? MIN_COMMON_STORIES;
  const draws = opts.bootstrapDraws ?? BOOTSTRAP_DRAWS;
  const seed = opts.bootstrapSeed ?? BOOTSTRAP_SEED;
  if (!Number.isInteger(draws) || draws < 1) throw new RangeError(`bootstrapDraws must be a positive integer, got ${draws}`);
  if (!Number.isInteger(seed)) throw new RangeError(`bootstrapSeed must be an integer, got ${seed}`);
  const readouts = selectReadouts(
    storyScores.map((s) => s.readout),
    opts.identityReadouts ?? DEFAULT_IDENTITY_READOUTS,
  );
  const pairsOut: ProfilePair[] = [];
  const neighbours: NearestNeighbour[] = [];
  const classes: ClassEstimate[] = [];
  for (const readout of readouts) {
    const m = profileMatrix(storyScores, readout);
    const index = pairIndices(m);
    const pairs = comparePairs(m, minCommonStories, index);
    pairsOut.push(...pairs);
    for (const metric of IDENTITY_METRICS) neighbours.push(...nearestNeighbours(m.cells, pairs, metric, readout));
    const all = m.stories.map((_, k) => k);
    classes.push(...classBootstrap(m, index, all, { draws, seed, minCommonStories, storyGroup: 'all' }));
    if (opts.byStoryGroup ?? true) {
      for (const group of [...new Set(m.storyGroups)].sort()) {
        const mask = Uint8Array.from(m.storyGroups, (g) => (g === group ? 1 : 0));
        const pool = all.filter((k) => mask[k] === 1);
        const groupSeed = seedFromKey(`${seed}:${group}`);
        classes.push(...classBootstrap(m, pairIndices(m, mask), pool, { draws, seed: groupSeed, minCommonStories, storyGroup: group }));
      }
    }
  }
  return { readouts, pairs: pairsOut, neighbours, counts: identityCounts(neighbours), models: identityModels(neighbours, pairsOut), classes, draws, seed };
}
