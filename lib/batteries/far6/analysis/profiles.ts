/**
 * Profile comparisons between cells (Same Judgment, Different Yes §3 last paragraph, §4, §5 and "Estimation steps"):
 * for every pair of model × language cells under one readout, on their common stories, the
 * story-level r, the residual-profile r and the mean |Δ|.
 *
 * Residual profiles, as the seed writes them: "subtract, within each language, the story mean over
 * models and then each cell's mean, and are compared on stories with common-model support; a cell
 * without variance on the common support is skipped". Common-model support of a language = the
 * stories on which every model present in that language (under this readout) has a score. A cell
 * without variance gets no r (null), which removes it from nearest neighbours and class means.
 *
 * The kernels take optional story weights (bootstrap multiplicities), so the bootstrap in
 * identity.ts recomputes every pair with exactly the code of the point estimate.
 */
import type { CellKey, PairClass, ProfilePair, Readout, StoryScore } from './types.js';

/** Story scores of one readout as a dense cells × stories matrix. */
export interface ProfileMatrix {
  readonly readout: Readout;
  /** Sorted by model, then language. */
  readonly cells: readonly CellKey[];
  /** Sorted story ids. */
  readonly stories: readonly string[];
  /** The story group of each story, in `stories` order. */
  readonly storyGroups: readonly string[];
  /** s, row-major (cell × stories.length + story); NaN where the cell has no score. */
  readonly s: Float64Array;
  /** Residual profile, same layout; NaN outside the language's common-model support. */
  readonly residual: Float64Array;
}

/** One pair of cells (a < b) with the story indices they share. */
export interface PairIndex {
  readonly a: number;
  readonly b: number;
  readonly cls: PairClass;
  /** Stories where both cells have s. */
  readonly common: Int32Array;
  /** Stories where both cells have a residual. */
  readonly commonResidual: Int32Array;
}

function cmp(a: string, b: string): number {
  return a < b ? -1 : a > b ? 1 : 0;
}

/** What changes between two distinct cells. */
export function pairClass(a: CellKey, b: CellKey): PairClass {
  if (a.model === b.model) return 'same_model';
  return a.language === b.language ? 'same_language' : 'both_differ';
}

/**
 * The cells × stories matrix of one readout, with residual profiles.
 * @example const m = profileMatrix(results.storyScores, 'plain/label/rule');
 */
export function profileMatrix(storyScores: readonly StoryScore[], readout: Readout): ProfileMatrix {
  const cellIndex = new Map<string, CellKey>();
  const storyGroup = new Map<string, string>();
  const rows = storyScores.filter((sc) => sc.readout === readout);
  for (const sc of rows) {
    const key = `${sc.model}\u0000${sc.language}`;
    if (!cellIndex.has(key)) cellIndex.set(key, { model: sc.model, language: sc.language });
    if (!storyGroup.has(sc.story)) storyGroup.set(sc.story, sc.story_group);
  }
  const cells = [...cellIndex.values()].sort((x, y) => cmp(x.model, y.model) || cmp(x.language, y.language));
  const stories = [...storyGroup.keys()].sort(cmp);
  const ci = new Map(cells.map((c, i) => [`${c.model}\u0000${c.language}`, i]));
  const si = new Map(stories.map((st, i) => [st, i]));
  const n = stories.length;
  const s = new Float64Array(cells.length * n).fill(Number.NaN);
  for (const sc of rows) {
    s[(ci.get(`${sc.model}\u0000${sc.language}`) as number) * n + (si.get(sc.story) as number)] = sc.s;
  }
  return {
    readout,
    cells,
    stories,
    storyGroups: stories.map((st) => storyGroup.get(st) as string),
    s,
    residual: residualize(cells, n, s),
  };
}

/** Same Judgment, Different Yes "Estimation steps": per language, story consensus over models removed, then each cell's mean. */
function residualize(cells: readonly CellKey[], n: number, s: Float64Array): Float64Array {
  const residual = new Float64Array(s.length).fill(Number.NaN);
  const byLanguage = new Map<string, number[]>();
  cells.forEach((c, i) => {
    const list = byLanguage.get(c.language) ?? [];
    list.push(i);
    byLanguage.set(c.language, list);
  });
  for (const members of byLanguage.values()) {
    const support: number[] = [];
    const consensus: number[] = [];
    for (let k = 0; k < n; k++) {
      let sum = 0;
      let all = true;
      for (const c of members) {
        const v = s[c * n + k] as number;
        if (Number.isNaN(v)) {
          all = false;
          break;
        }
        sum += v;
      }
      if (all) {
        support.push(k);
        consensus.push(sum / members.length);
      }
    }
    if (support.length === 0) continue;
    for (const c of members) {
      let mean = 0;
      for (let j = 0; j < support.length; j++) mean += (s[c * n + (support[j] as number)] as number) - (consensus[j] as number);
      mean /= support.length;
      for (let j = 0; j < support.length; j++) {
        const k = support[j] as number;
        residual[c * n + k] = (s[c * n + k] as number) - (consensus[j] as number) - mean;
      }
    }
  }
  return residual;
}

function commonIndices(values: Float64Array, n: number, a: number, b: number, mask?: Uint8Array): Int32Array {
  const out: number[] = [];
  for (let k = 0; k < n; k++) {
    if (mask && mask[k] === 0) continue;
    if (!Number.isNaN(values[a * n + k] as number) && !Number.isNaN(values[b * n + k] as number)) out.push(k);
  }
  return Int32Array.from(out);
}

/**
 * Every pair of cells (a < b) with its common stories; `mask` (1 = keep) restricts the stories,
 * e.g. to one story group.
 */
export function pairIndices(m: ProfileMatrix, mask?: Uint8Array): PairIndex[] {
  const n = m.stories.length;
  const out: PairIndex[] = [];
  for (let a = 0; a < m.cells.length; a++) {
    for (let b = a + 1; b < m.cells.length; b++) {
      out.push({
        a,
        b,
        cls: pairClass(m.cells[a] as CellKey, m.cells[b] as CellKey),
        common: commonIndices(m.s, n, a, b, mask),
        commonResidual: commonIndices(m.residual, n, a, b, mask),
      });
    }
  }
  return out;
}

// The kernels below each write out their weighted loop over `idx`: they are the story bootstrap's
// inner loop (every cell pair, every draw), where a shared callback per story would cost time.

/**
 * Weighted Pearson r of rows a and b of `values` over the stories `idx`, each story weighted by
 * `w` (bootstrap multiplicity; all 1 when absent). Null when the total weight is below `minCommon`
 * or either side has no variance (same relative threshold as stats.pearson).
 */
export function weightedPearson(
  values: Float64Array,
  n: number,
  a: number,
  b: number,
  idx: Int32Array,
  w: Float64Array | null,
  minCommon: number,
): number | null {
  weightedPearsonAndMeanAbsDiff(values, n, a, b, idx, w, minCommon, scratch);
  return Number.isNaN(scratch[0]) ? null : (scratch[0] as number);
}

/** weightedPearson's buffer: it returns before anything else can use it. */
const scratch = new Float64Array(2);

/**
 * The second pass of weightedPearson, from the first pass's weight and sums: r over the
 * deviations from the weighted means, NaN where either side has no variance.
 */
function rFromSums(values: Float64Array, oa: number, ob: number, idx: Int32Array, w: Float64Array | null, sw: number, sx: number, sy: number): number {
  const mx = sx / sw;
  const my = sy / sw;
  let sxx = 0;
  let syy = 0;
  let sxy = 0;
  for (let j = 0; j < idx.length; j++) {
    const k = idx[j] as number;
    const wk = w === null ? 1 : (w[k] as number);
    if (wk === 0) continue;
    const dx = (values[oa + k] as number) - mx;
    const dy = (values[ob + k] as number) - my;
    sxx += wk * dx * dx;
    syy += wk * dy * dy;
    sxy += wk * dx * dy;
  }
  const scale = Math.max(1, Math.abs(mx), Math.abs(my));
  const eps = sw * (Number.EPSILON * scale) ** 2;
  if (sxx <= eps || syy <= eps) return Number.NaN;
  const r = sxy / Math.sqrt(sxx * syy);
  return r > 1 ? 1 : r < -1 ? -1 : r;
}

/**
 * Weighted Pearson r and weighted mean |a − b| of the same rows, stories and weights, sharing the
 * first pass over the stories (the story bootstrap asks both of every pair in every draw);
 * weightedPearson gives r alone. `out[0]`: r, `out[1]`: mean |Δ|; NaN where a statistic has no
 * value (total weight below `minCommon`; for r also below 2, or either side without variance). r
 * takes a second pass over the deviations from the means. Positional parameters on purpose: the
 * bootstrap's inner loop, where an options object per call would allocate millions of times.
 */
export function weightedPearsonAndMeanAbsDiff(
  values: Float64Array,
  n: number,
  a: number,
  b: number,
  idx: Int32Array,
  w: Float64Array | null,
  minCommon: number,
  out: Float64Array,
): void {
  const oa = a * n;
  const ob = b * n;
  let sw = 0;
  let sx = 0;
  let sy = 0;
  let sad = 0;
  for (let j = 0; j < idx.length; j++) {
    const k = idx[j] as number;
    const wk = w === null ? 1 : (w[k] as number);
    if (wk === 0) continue;
    const x = values[oa + k] as number;
    const y = values[ob + k] as number;
    sw += wk;
    sx += wk * x;
    sy += wk * y;
    sad += wk * Math.abs(x - y);
  }
  out[1] = sw < minCommon || sw === 0 ? Number.NaN : sad / sw;
  if (sw < minCommon || sw < 2) {
    out[0] = Number.NaN;
    return;
  }
  out[0] = rFromSums(values, oa, ob, idx, w, sw, sx, sy);
}

/**
 * Every pair of cells of one readout compared on their common stories (Same Judgment, Different Yes §3): story-level
 * r, residual-profile r and mean |Δ|, each null below `minCommonStories` common stories.
 * @example comparePairs(profileMatrix(scores, 'plain/label/rule'), 8)
 */
export function comparePairs(m: ProfileMatrix, minCommonStories: number, pairs: readonly PairIndex[] = pairIndices(m)): ProfilePair[] {
  const n = m.stories.length;
  const both = new Float64Array(2);
  const orNull = (x: number): number | null => (Number.isNaN(x) ? null : x);
  return pairs.map((p): ProfilePair => {
    const ca = m.cells[p.a] as CellKey;
    const cb = m.cells[p.b] as CellKey;
    weightedPearsonAndMeanAbsDiff(m.s, n, p.a, p.b, p.common, null, minCommonStories, both);
    return {
      readout: m.readout,
      model_a: ca.model,
      language_a: ca.language,
      model_b: cb.model,
      language_b: cb.language,
      class: p.cls,
      n_common: p.common.length,
      r: orNull(both[0] as number),
      n_common_residual: p.commonResidual.length,
      residual_r: weightedPearson(m.residual, n, p.a, p.b, p.commonResidual, null, minCommonStories),
      mean_abs_diff: orNull(both[1] as number),
    };
  });
}
