/**
 * The story bootstrap's pair statistics (identity.ts), the same numbers as profiles.ts's
 * weightedPearson and weightedPearsonAndMeanAbsDiff, bit for bit, at a fraction of the arithmetic.
 *
 * Those kernels take, for every pair of cells, sums over the pair's common stories: the weight,
 * each side's weighted sum, then (second pass, from the means) each side's weighted squares and the
 * cross products, and the weighted |Δ|. Pairs whose common stories are the same (at full size
 * nearly all 1,128 pairs of 48 cells share one set) recompute every one-sided sum for each
 * partner. Here the one-sided sums are taken once per cell and set of stories, in the same order
 * and with the same operations — `w·x` summed story by story, `x − mean`, `(w·dx)·dx` — so each
 * is the same double; per pair only the cross products `(w·dx_a)·dx_b` and `w·|x_a − x_b|` are
 * left. Stories of weight 0 are left out of the loops, as the kernels skip them.
 */
import type { PairIndex, ProfileMatrix } from './profiles.js';

/** The pairs that share one set of stories, with what their cells' one-sided sums need. */
interface Support {
  readonly idx: Int32Array;
  /** Cells that are a side of one of these pairs, ascending; `slot[cell]` is the position of a cell among them. */
  readonly cells: Int32Array;
  readonly slot: Int32Array;
  /** This draw's stories of non-zero weight (first `len` entries), their weights. */
  readonly stories: Int32Array;
  readonly weights: Float64Array;
  len: number;
  sw: number;
  /** Per cell (slot × idx.length + j): the value, its deviation from the cell's mean, the weighted deviation. */
  readonly x: Float64Array;
  readonly dx: Float64Array;
  readonly wdx: Float64Array;
  /** Per slot: the weighted mean and the weighted sum of squared deviations. */
  readonly mean: Float64Array;
  readonly sxx: Float64Array;
}

function support(idx: Int32Array, members: ReadonlySet<number>, nCells: number): Support {
  const cells = Int32Array.from([...members].sort((x, y) => x - y));
  const slot = new Int32Array(nCells).fill(-1);
  cells.forEach((c, i) => (slot[c] = i));
  const size = cells.length * idx.length;
  return {
    idx,
    cells,
    slot,
    stories: new Int32Array(idx.length),
    weights: new Float64Array(idx.length),
    len: 0,
    sw: 0,
    x: new Float64Array(size),
    dx: new Float64Array(size),
    wdx: new Float64Array(size),
    mean: new Float64Array(cells.length),
    sxx: new Float64Array(cells.length),
  };
}

/** One layer (story scores or residual profiles) of a matrix with its pairs grouped by common stories. */
class Layer {
  private readonly supports: Support[];
  /** The support of each pair, in pair order. */
  private readonly supportOf: Int32Array;

  constructor(
    private readonly values: Float64Array,
    private readonly n: number,
    nCells: number,
    pairs: readonly PairIndex[],
    idxOf: (p: PairIndex) => Int32Array,
  ) {
    const byKey = new Map<string, number>();
    const found: { idx: Int32Array; members: Set<number> }[] = [];
    this.supportOf = new Int32Array(pairs.length);
    pairs.forEach((p, i) => {
      const idx = idxOf(p);
      const key = idx.join(',');
      let s = byKey.get(key);
      if (s === undefined) {
        s = found.length;
        byKey.set(key, s);
        found.push({ idx, members: new Set() });
      }
      (found[s] as { members: Set<number> }).members.add(p.a).add(p.b);
      this.supportOf[i] = s;
    });
    this.supports = found.map((f) => support(f.idx, f.members, nCells));
  }

  /** The one-sided sums of every support's cells under weights `w` (null: every story once). */
  prepare(w: Float64Array | null): void {
    const { values, n } = this;
    for (const s of this.supports) {
      const { idx, stories, weights } = s;
      let len = 0;
      let sw = 0;
      for (let j = 0; j < idx.length; j++) {
        const k = idx[j] as number;
        const wk = w === null ? 1 : (w[k] as number);
        if (wk === 0) continue;
        stories[len] = k;
        weights[len] = wk;
        len++;
        sw += wk;
      }
      s.len = len;
      s.sw = sw;
      const stride = idx.length;
      for (let ci = 0; ci < s.cells.length; ci++) {
        const o = (s.cells[ci] as number) * n;
        const base = ci * stride;
        let sx = 0;
        for (let j = 0; j < len; j++) {
          const v = values[o + (stories[j] as number)] as number;
          s.x[base + j] = v;
          sx += (weights[j] as number) * v;
        }
        const mean = sx / sw;
        let sxx = 0;
        for (let j = 0; j < len; j++) {
          const d = (s.x[base + j] as number) - mean;
          const wd = (weights[j] as number) * d;
          s.dx[base + j] = d;
          s.wdx[base + j] = wd;
          sxx += wd * d;
        }
        s.mean[ci] = mean;
        s.sxx[ci] = sxx;
      }
    }
  }

  /**
   * Pair `i`'s r (`out[0]`) and, with `withMeanAbsDiff`, mean |Δ| (`out[1]`) after prepare: NaN
   * where weightedPearsonAndMeanAbsDiff gives NaN.
   */
  pair(i: number, p: PairIndex, minCommon: number, withMeanAbsDiff: boolean, out: Float64Array): void {
    const s = this.supports[this.supportOf[i] as number] as Support;
    const { len, sw, weights } = s;
    const stride = s.idx.length;
    const sa = s.slot[p.a] as number;
    const sb = s.slot[p.b] as number;
    const oa = sa * stride;
    const ob = sb * stride;
    const { x, dx, wdx } = s;
    // One loop, two sums (each in story order): the pair's only per-story work.
    let sad = 0;
    let sxy = 0;
    if (withMeanAbsDiff) {
      for (let j = 0; j < len; j++) {
        sad += (weights[j] as number) * Math.abs((x[oa + j] as number) - (x[ob + j] as number));
        sxy += (wdx[oa + j] as number) * (dx[ob + j] as number);
      }
      out[1] = sw < minCommon || sw === 0 ? Number.NaN : sad / sw;
    } else {
      for (let j = 0; j < len; j++) sxy += (wdx[oa + j] as number) * (dx[ob + j] as number);
    }
    if (sw < minCommon || sw < 2) {
      out[0] = Number.NaN;
      return;
    }
    const mx = s.mean[sa] as number;
    const my = s.mean[sb] as number;
    const sxx = s.sxx[sa] as number;
    const syy = s.sxx[sb] as number;
    // As profiles.ts's rFromSums.
    const scale = Math.max(1, Math.abs(mx), Math.abs(my));
    const eps = sw * (Number.EPSILON * scale) ** 2;
    if (sxx <= eps || syy <= eps) {
      out[0] = Number.NaN;
      return;
    }
    const r = sxy / Math.sqrt(sxx * syy);
    out[0] = r > 1 ? 1 : r < -1 ? -1 : r;
  }
}

/**
 * Both layers of one matrix for one list of pairs: `prepare(w)` once per draw, then `residualR`,
 * `storyR` and `meanAbsDiff` of any pair by its position in the list.
 * @example const b = new BootstrapPairs(m, pairs); b.prepare(w); b.compute(i, 8);
 */
export class BootstrapPairs {
  private readonly residual: Layer;
  private readonly story: Layer;
  /** The last compute's statistics: residual r, story r, mean |Δ| (NaN where none). */
  readonly values = new Float64Array(3);
  private readonly both = new Float64Array(2);

  constructor(
    m: ProfileMatrix,
    private readonly pairs: readonly PairIndex[],
  ) {
    const n = m.stories.length;
    this.residual = new Layer(m.residual, n, m.cells.length, pairs, (p) => p.commonResidual);
    this.story = new Layer(m.s, n, m.cells.length, pairs, (p) => p.common);
  }

  prepare(w: Float64Array | null): void {
    this.residual.prepare(w);
    this.story.prepare(w);
  }

  /** Pair `i`'s statistics into `values`. */
  compute(i: number, minCommon: number): Float64Array {
    const p = this.pairs[i] as PairIndex;
    this.residual.pair(i, p, minCommon, false, this.both);
    this.values[0] = this.both[0] as number;
    this.story.pair(i, p, minCommon, true, this.both);
    this.values[1] = this.both[0] as number;
    this.values[2] = this.both[1] as number;
    return this.values;
  }
}
