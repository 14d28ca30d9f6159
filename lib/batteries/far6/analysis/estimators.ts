/**
 * FAR-6 estimators (Same Judgment, Different Yes §3 "The battery and the measurement contract", §6 "Answer habits" and
 * the appendix "Estimation steps"). Pure functions over item rows from item_shares.sql; no I/O.
 *
 * Estimation steps, as written in the seed:
 *   1. per item (prompt_key), the share of decisive replies (P or notP) that assert P, pooled over
 *      the item's repeats (each repeat contributes one reply, so pooling = averaging them);
 *   2. per keying k (the named term), q_k = the mean of those shares over the available option
 *      orders, each order with equal weight whatever its number of repeats;
 *   3. per concept pair, when both keyings have decisive support: s = (q_P + q_notP) / 2 and
 *      b = (q_P − q_notP) / 2 (a label is already relative to P, so no reorientation is needed);
 *   4. story score = mean of s (and of b) over the concept pairs with support.
 * Where one order of one keying holds several prompt items (e.g. two constructions of the same
 * concept pair), their shares are averaged with equal weight before the orders are. For the
 * alternative question `named` is the term listed first, so "both keyings" is the seed's "both
 * orders of an alternative question".
 */
import { AnalysisError, CampaignFileError, median, pearson, quantile } from '../../../api/battery.js';
import type { Proposition } from '../types.js';
import type {
  CellHabit,
  EstimateOptions,
  EstimateResults,
  ItemShareRow,
  Readout,
  ReadoutComparison,
  ReadoutConvergence,
  StoryScore,
} from './types.js';

/** Same Judgment, Different Yes "Estimation steps": two cells are compared on their common stories when at least eight exist. */
export const MIN_COMMON_STORIES = 8;

const SEP = '\u0000';

/** `form/constraint/reader`. */
export function readoutOf(row: Pick<ItemShareRow, 'form' | 'constraint' | 'reader'>): Readout {
  return `${row.form}/${row.constraint}/${row.reader}`;
}

/** Splits a readout at its first two slashes (a reader id may itself contain slashes). */
export function parseReadout(readout: Readout): { form: string; constraint: string; reader: string } {
  const i = readout.indexOf('/');
  const j = i < 0 ? -1 : readout.indexOf('/', i + 1);
  if (i <= 0 || j <= i + 1 || j === readout.length - 1) {
    throw new RangeError(`readout "${readout}" is not form/constraint/reader (e.g. plain/yesno/rule)`);
  }
  return { form: readout.slice(0, i), constraint: readout.slice(i + 1, j), reader: readout.slice(j + 1) };
}

/** One option order's item shares. */
interface Bucket {
  readonly order: number;
  sum: number;
  n: number;
}

/**
 * Buckets by option order, in the order the orders first came (as a Map iterates; the means sum in
 * that order). A list, not a Map: a pair holds one or two orders, and a concept pair of a story in
 * a cell has six of these — at full size ~1M Maps were most of the estimators' garbage collection.
 */
type Orders = Bucket[];

const KEYING: Readonly<Record<Proposition, 0 | 1>> = { P: 0, notP: 1 };

/**
 * Everything one concept pair of one story contributes under one readout in one cell. Buckets are
 * indexed [keying] (and [keying][second-listed side] for positions), then by option order.
 */
interface PairAcc {
  readonly orders: readonly [Orders, Orders];
  /** Label readouts only (null otherwise): [keying][side listed second: P = 0, notP = 1] → order → item shares. */
  readonly positions: readonly [readonly [Orders, Orders], readonly [Orders, Orders]] | null;
}

interface StoryNode {
  readonly story_group: string;
  readonly pairs: Map<string, PairAcc>;
}

interface ReadoutNode {
  readonly isLabel: boolean;
  readonly stories: Map<string, StoryNode>;
}

/** model → language → readout → story. Nested maps rather than joined string keys: no per-row allocation. */
type Tree = Map<string, Map<string, Map<Readout, ReadoutNode>>>;

function add(orders: Orders, order: number, share: number): void {
  for (const bucket of orders) {
    if (bucket.order === order) {
      bucket.sum += share;
      bucket.n += 1;
      return;
    }
  }
  orders.push({ order, sum: share, n: 1 });
}

function cmp(a: string, b: string): number {
  return a < b ? -1 : a > b ? 1 : 0;
}

function child<K, V>(map: Map<K, V>, key: K, make: () => V): V {
  let v = map.get(key);
  if (v === undefined) {
    v = make();
    map.set(key, v);
  }
  return v;
}

function storyGroupError(model: string, language: string, story: string, a: string, b: string): CampaignFileError {
  return new CampaignFileError(
    `item_shares.sql: story "${story}" (${model}/${language}) is in story_group "${a}" and "${b}"; a story belongs to one group`,
    [{ file: 'item_shares.sql', path: `story ${story}`, message: `expected one story_group, got ${a} and ${b}` }],
  );
}

/**
 * The readout of an item row, one string per form, constraint and reader (form → constraint →
 * reader) rather than one per row: for loops over every item row.
 */
export class Readouts {
  private readonly byForm = new Map<string, Map<string, Map<string, Readout>>>();

  of(row: ItemShareRow): Readout {
    let byConstraint = this.byForm.get(row.form);
    if (byConstraint === undefined) this.byForm.set(row.form, (byConstraint = new Map()));
    let byReader = byConstraint.get(row.constraint);
    if (byReader === undefined) byConstraint.set(row.constraint, (byReader = new Map()));
    let readout = byReader.get(row.reader);
    if (readout === undefined) byReader.set(row.reader, (readout = readoutOf(row)));
    return readout;
  }
}

function pairAcc(isLabel: boolean): PairAcc {
  return { orders: [[], []], positions: isLabel ? [[[], []], [[], []]] : null };
}

// The lookups below are written out (get, then set where missing) rather than through `child`:
// this loop runs once per item row (693,550 at full size), where a closure per lookup is garbage.
function accumulate(rows: readonly ItemShareRow[]): Tree {
  const tree: Tree = new Map();
  const readouts = new Readouts();
  for (const row of rows) {
    const decisive = row.n_p + row.n_notp;
    if (decisive === 0) continue;
    const share = row.n_p / decisive;
    let byLanguage = tree.get(row.model);
    if (byLanguage === undefined) tree.set(row.model, (byLanguage = new Map()));
    let byReadout = byLanguage.get(row.language);
    if (byReadout === undefined) byLanguage.set(row.language, (byReadout = new Map()));
    const readout = readouts.of(row);
    let node = byReadout.get(readout);
    if (node === undefined) byReadout.set(readout, (node = { isLabel: row.constraint === 'label', stories: new Map() }));
    let story = node.stories.get(row.story);
    if (story === undefined) node.stories.set(row.story, (story = { story_group: row.story_group, pairs: new Map() }));
    if (story.story_group !== row.story_group) throw storyGroupError(row.model, row.language, row.story, story.story_group, row.story_group);
    let acc = story.pairs.get(row.concept_pair);
    if (acc === undefined) story.pairs.set(row.concept_pair, (acc = pairAcc(node.isLabel)));
    const k = KEYING[row.named];
    add(acc.orders[k], row.option_order, share);
    if (acc.positions !== null && row.second_listed !== null) add(acc.positions[k][KEYING[row.second_listed]], row.option_order, share);
  }
  return tree;
}

/** Mean over orders (equal weight) of each order's mean item share; null without any order. */
function meanOverOrders(orders: readonly Bucket[]): number | null {
  if (orders.length === 0) return null;
  let sum = 0;
  for (const bucket of orders) sum += bucket.sum / bucket.n;
  return sum / orders.length;
}

interface PairEstimate {
  s: number | null;
  b: number | null;
  /** Second-listed preference of this pair, label readouts only. */
  pos: number | null;
}

function estimatePair(acc: PairAcc, isLabel: boolean): PairEstimate {
  // Step 2: orders with equal weight within a keying.
  const qP = meanOverOrders(acc.orders[0]);
  const qNotP = meanOverOrders(acc.orders[1]);
  const both = qP !== null && qNotP !== null;
  let pos: number | null = null;
  if (isLabel && acc.positions !== null) {
    // Same Judgment, Different Yes §6: second-listed preference = half the difference between choosing the second- and
    // the first-listed proposition. Within a keying, with u2 the P share when P is listed second and
    // u1 the P share when P is listed first: [(u2 − (1 − u2)) + ((1 − u1) − u1)] / 2 / 2 = (u2 − u1) / 2,
    // in which the judgment cancels as it does in b. Keyings then get equal weight.
    let sum = 0;
    let n = 0;
    for (const byside of acc.positions) {
      const u2 = meanOverOrders(byside[0]);
      const u1 = meanOverOrders(byside[1]);
      if (u2 !== null && u1 !== null) {
        sum += (u2 - u1) / 2;
        n += 1;
      }
    }
    pos = n === 0 ? null : sum / n;
  }
  return { s: both ? (qP + qNotP) / 2 : null, b: both ? (qP - qNotP) / 2 : null, pos };
}

/**
 * Story scores and answer habits from item rows (Same Judgment, Different Yes §3 and §6).
 *
 * @example
 * const { storyScores, cellHabits, comparisons, convergence } = estimate(itemRows);
 */
export function estimate(rows: readonly ItemShareRow[], opts: EstimateOptions = {}): EstimateResults {
  const cells = new CellEstimates(opts);
  cells.add(rows);
  return cells.results();
}

/**
 * The estimators fed a few cells at a time (Same Judgment, Different Yes §3 and §6): what a cell
 * (model × language) gives depends on its own item rows alone, so item_shares.sql's rows, ordered
 * by model and language, can be estimated as they arrive and dropped, and the analysis holds one
 * cell's rows instead of the campaign's (analyzeCampaign.ts). Each `add` must hold whole cells: a
 * cell whose rows come in two calls is refused (its stories would be scored twice, each on part of
 * its items). The results are those of `estimate` on all the rows at once, to the last digit: a
 * cell's sums run over its rows in the same order.
 */
export class CellEstimates {
  private readonly storyScores: StoryScore[] = [];
  private readonly cellHabits: CellHabit[] = [];
  /** `model\u0000language` of every cell added so far. */
  private readonly seen = new Set<string>();
  private readonly minCommonStories: number;

  constructor(
    private readonly opts: EstimateOptions = {},
    /** The query the rows come from, named when a cell comes apart. */
    private readonly file = 'item_shares.sql',
  ) {
    this.minCommonStories = opts.minCommonStories ?? MIN_COMMON_STORIES;
    if (!Number.isInteger(this.minCommonStories) || this.minCommonStories < 2) {
      throw new RangeError(`minCommonStories must be an integer of at least 2, got ${this.minCommonStories}`);
    }
  }

  /** Estimates the cells of `rows`, which holds every item row of each of its cells. */
  add(rows: readonly ItemShareRow[]): void {
    const tree = accumulate(rows);
    // Every cell checked before any is estimated: a refused call adds nothing.
    for (const [model, byLanguage] of tree) {
      for (const language of byLanguage.keys()) if (this.seen.has(`${model}${SEP}${language}`)) throw cellApartError(this.file, model, language);
    }
    for (const [model, byLanguage] of tree) {
      for (const [language, byReadout] of byLanguage) {
        this.seen.add(`${model}${SEP}${language}`);
        this.estimateCell(model, language, byReadout);
      }
    }
  }

  /**
   * Story scores, habits and the comparisons between readouts, over every cell added; `readoutPairs`
   * (default: the options') when the pairs to compare are known only once every row is in.
   */
  results(readoutPairs = this.opts.readoutPairs): EstimateResults {
    const { storyScores, cellHabits, minCommonStories } = this;
    storyScores.sort((x, y) => cmp(x.model, y.model) || cmp(x.language, y.language) || cmp(x.readout, y.readout) || cmp(x.story, y.story));
    cellHabits.sort((x, y) => cmp(x.model, y.model) || cmp(x.language, y.language) || cmp(x.readout, y.readout));
    const comparisons = compareReadouts(storyScores, { minCommonStories, readoutPairs });
    return { storyScores, cellHabits, comparisons, convergence: readoutConvergence(comparisons, readoutPairs), minCommonStories };
  }

  private estimateCell(model: string, language: string, byReadout: Map<Readout, ReadoutNode>): void {
    const groups = new Map<string, string>();
    for (const [readout, node] of byReadout) {
      let bSum = 0;
      let nB = 0;
      let posSum = 0;
      let nPos = 0;
      for (const [story, st] of node.stories) {
        const seen = child(groups, story, () => st.story_group);
        if (seen !== st.story_group) throw storyGroupError(model, language, story, seen, st.story_group);
        let sSum = 0;
        let bStory = 0;
        let nPairs = 0;
        let posStory = 0;
        let nPosPairs = 0;
        for (const acc of st.pairs.values()) {
          const est = estimatePair(acc, node.isLabel);
          // Step 4: concept pairs enter only with decisive support in both keyings.
          if (est.s !== null && est.b !== null) {
            sSum += est.s;
            bStory += est.b;
            nPairs += 1;
          }
          if (est.pos !== null) {
            posStory += est.pos;
            nPosPairs += 1;
          }
        }
        if (nPosPairs > 0) {
          posSum += posStory / nPosPairs;
          nPos += 1;
        }
        if (nPairs === 0) continue;
        const b = bStory / nPairs;
        bSum += b;
        nB += 1;
        this.storyScores.push({ model, language, readout, story, story_group: st.story_group, s: sSum / nPairs, b, n_pairs: nPairs });
      }
      if (nB === 0) continue;
      const keyingBias = bSum / nB;
      this.cellHabits.push({
        model,
        language,
        readout,
        n_stories: nB,
        keying_bias: keyingBias,
        second_listed_pref: node.isLabel && nPos > 0 ? posSum / nPos : null,
        n_stories_position: nPos,
        // Same Judgment, Different Yes §6, named-term pull: half the difference between choosing the proposition with
        // the named term and the other one, averaged over orders. Under keying P the named side is
        // P (2q_P − 1); under keying notP it is notP (1 − 2q_notP); half their mean is
        // (q_P − q_notP)/2 = b. So on proposition labels the pull is the keying bias.
        named_term_pull: node.isLabel ? keyingBias : null,
      });
    }
  }
}

function cellApartError(file: string, model: string, language: string): AnalysisError {
  return new AnalysisError(
    `${file}: the item rows of cell ${model}/${language} came in two parts; expected the rows ordered by model and language, each cell's rows together`,
  );
}

/**
 * Profile comparisons within each cell (Same Judgment, Different Yes §3): story-level Pearson r and mean |Δ| between
 * two readouts on their common stories, when at least `minCommonStories` exist; below that both
 * are null and the row still reports the count. By default every pair of readouts that shares a
 * story; with `readoutPairs`, those pairs in every cell that has both readouts.
 */
export function compareReadouts(
  storyScores: readonly StoryScore[],
  opts: { minCommonStories?: number; readoutPairs?: readonly (readonly [Readout, Readout])[] | undefined } = {},
): ReadoutComparison[] {
  const minCommon = opts.minCommonStories ?? MIN_COMMON_STORIES;
  const cells = new Map<string, { model: string; language: string; profiles: Map<Readout, Map<string, number>> }>();
  for (const sc of storyScores) {
    const key = `${sc.model}${SEP}${sc.language}`;
    let cell = cells.get(key);
    if (!cell) {
      cell = { model: sc.model, language: sc.language, profiles: new Map() };
      cells.set(key, cell);
    }
    let profile = cell.profiles.get(sc.readout);
    if (!profile) {
      profile = new Map();
      cell.profiles.set(sc.readout, profile);
    }
    profile.set(sc.story, sc.s);
  }

  const out: ReadoutComparison[] = [];
  const cellKeys = [...cells.keys()].sort(cmp);
  for (const ck of cellKeys) {
    const cell = cells.get(ck)!;
    let pairs: (readonly [Readout, Readout])[];
    if (opts.readoutPairs) {
      pairs = opts.readoutPairs.filter(([a, b]) => cell.profiles.has(a) && cell.profiles.has(b));
    } else {
      const readouts = [...cell.profiles.keys()].sort(cmp);
      pairs = [];
      for (let i = 0; i < readouts.length; i++) {
        for (let j = i + 1; j < readouts.length; j++) pairs.push([readouts[i]!, readouts[j]!]);
      }
    }
    for (const [a, b] of pairs) {
      const pa = cell.profiles.get(a)!;
      const pb = cell.profiles.get(b)!;
      const [small, large, swapped] = pa.size <= pb.size ? [pa, pb, false] : [pb, pa, true];
      const xs: number[] = [];
      const ys: number[] = [];
      for (const [story, v] of small) {
        const w = large.get(story);
        if (w === undefined) continue;
        xs.push(swapped ? w : v);
        ys.push(swapped ? v : w);
      }
      if (xs.length === 0 && !opts.readoutPairs) continue;
      const enough = xs.length >= minCommon;
      let absSum = 0;
      for (let i = 0; i < xs.length; i++) absSum += Math.abs(xs[i]! - ys[i]!);
      out.push({
        model: cell.model,
        language: cell.language,
        readout_a: a,
        readout_b: b,
        n_common: xs.length,
        r: enough ? pearson(xs, ys) : null,
        mean_abs_diff: enough ? absSum / xs.length : null,
      });
    }
  }
  return out;
}

/**
 * Per readout pair over cells (Same Judgment, Different Yes §4, Figure 2a): the median story-level r and its 10 % and
 * 90 % quantiles over the cells where r exists, and the median mean |Δ|.
 */
export function readoutConvergence(
  comparisons: readonly ReadoutComparison[],
  readoutPairs?: readonly (readonly [Readout, Readout])[],
): ReadoutConvergence[] {
  const groups = new Map<string, { a: Readout; b: Readout; r: number[]; d: number[] }>();
  for (const [a, b] of readoutPairs ?? []) groups.set(`${a}${SEP}${b}`, { a, b, r: [], d: [] });
  for (const c of comparisons) {
    const key = `${c.readout_a}${SEP}${c.readout_b}`;
    let g = groups.get(key);
    if (!g) {
      g = { a: c.readout_a, b: c.readout_b, r: [], d: [] };
      groups.set(key, g);
    }
    if (c.r !== null) g.r.push(c.r);
    if (c.mean_abs_diff !== null) g.d.push(c.mean_abs_diff);
  }
  const out = [...groups.values()].map(
    (g): ReadoutConvergence => ({
      readout_a: g.a,
      readout_b: g.b,
      n_cells: g.r.length,
      median_r: median(g.r),
      q10_r: quantile(g.r, 0.1),
      q90_r: quantile(g.r, 0.9),
      median_abs_diff: median(g.d),
    }),
  );
  if (!readoutPairs) out.sort((x, y) => cmp(x.readout_a, y.readout_a) || cmp(x.readout_b, y.readout_b));
  return out;
}
