import { describe, expect, it } from 'vitest';
import { seededRandom } from '../../../../lib/core/hash.js';
import {
  BOOTSTRAP_SEED,
  identityAnalysis,
  identityCounts,
  identityModels,
  nearestNeighbours,
  selectReadouts,
} from '../../../../lib/batteries/far6/analysis/identity.js';
import { comparePairs, profileMatrix } from '../../../../lib/batteries/far6/analysis/profiles.js';
import type { CellKey, ClassEstimate, ProfilePair, StoryScore } from '../../../../lib/batteries/far6/analysis/types.js';

const R = 'plain/label/rule';

function pair(a: string, b: string, v: { r?: number | null; residual_r?: number | null; d?: number | null }): ProfilePair {
  const [ma, la] = a.split('/') as [string, string];
  const [mb, lb] = b.split('/') as [string, string];
  return {
    readout: R, model_a: ma, language_a: la, model_b: mb, language_b: lb,
    class: ma === mb ? 'same_model' : la === lb ? 'same_language' : 'both_differ',
    n_common: 10, r: v.r ?? null, n_common_residual: 10, residual_r: v.residual_r ?? null, mean_abs_diff: v.d ?? null,
  };
}

const cells: CellKey[] = ['A/de', 'A/en', 'B/de', 'B/en', 'C/en'].map((k) => {
  const [model, language] = k.split('/') as [string, string];
  return { model, language };
});

describe('nearestNeighbours (Same Judgment, Different Yes §5, Table 6)', () => {
  // Residual r between the five cells (C/en is compared with nobody: a cell without variance).
  const pairs = [
    pair('A/de', 'A/en', { residual_r: 0.6, d: 0.1 }),
    pair('A/de', 'B/de', { residual_r: 0.2, d: 0.3 }),
    pair('A/de', 'B/en', { residual_r: 0.6, d: 0.05 }),
    pair('A/en', 'B/de', { residual_r: -0.1, d: 0.2 }),
    pair('A/en', 'B/en', { residual_r: 0.3, d: 0.2 }),
    pair('B/de', 'B/en', { residual_r: 0.5, d: 0.15 }),
  ];

  it('takes the highest r, credits a tie by its same-model share, and gives the random benchmark', () => {
    const nn = nearestNeighbours(cells, pairs, 'residual_r', R);
    const by = Object.fromEntries(nn.map((n) => [`${n.model}/${n.language}`, n]));
    // A/de: tie at 0.6 between A/en (same model) and B/en.
    expect(by['A/de']).toMatchObject({ value: 0.6, neighbours: 'A/en;B/en', n_tied: 2, same_model: 0.5, n_candidates: 3 });
    expect(by['A/de']?.chance).toBeCloseTo(1 / 3, 12);
    expect(by['A/en']).toMatchObject({ value: 0.6, neighbours: 'A/de', n_tied: 1, same_model: 1 });
    expect(by['B/de']).toMatchObject({ value: 0.5, neighbours: 'B/en', same_model: 1 });
    expect(by['B/en']).toMatchObject({ value: 0.6, neighbours: 'A/de', same_model: 0 });
    expect(by['C/en']).toMatchObject({ n_candidates: 0, value: null, neighbours: '', n_tied: 0, same_model: null, chance: null });

    const [count] = identityCounts(nn);
    // 0.5 + 1 + 1 + 0 = 2.5 of 4 cells; benchmark 4 × 1/3; one tie.
    expect(count).toMatchObject({ readout: R, metric: 'residual_r', n_cells: 4, same_model: 2.5, n_ties: 1 });
    expect(count?.expected_random).toBeCloseTo(4 / 3, 12);
  });

  it('sums per model: same-model nearest neighbours and the range of its language-pair values (Figure 3b)', () => {
    const models = identityModels(nearestNeighbours(cells, pairs, 'residual_r', R), pairs);
    const a = models.find((m) => m.model === 'A' && m.metric === 'residual_r');
    // A/de: ½ (tie), A/en: 1. One same-model pair, A/de–A/en at 0.6; its |Δ| row exists but no cell was ranked by it here.
    expect(a).toMatchObject({ n_cells: 2, same_model_nearest: 1.5, n_pairs: 1, mean: 0.6, min: 0.6, max: 0.6 });
    expect(models.find((m) => m.model === 'C')).toMatchObject({ n_cells: 0, same_model_nearest: 0, n_pairs: 0, mean: null });
    expect(models.find((m) => m.model === 'B')).toMatchObject({ n_cells: 2, same_model_nearest: 1, mean: 0.5 });
  });

  it('takes the lowest mean |Δ|', () => {
    const nn = nearestNeighbours(cells, pairs, 'mean_abs_diff', R);
    expect(nn.map((n) => n.neighbours)).toEqual(['B/en', 'A/de', 'B/en', 'A/de', '']);
    expect(identityCounts(nn)[0]).toMatchObject({ same_model: 2, n_cells: 4, n_ties: 0 });
  });

  it('selects readouts by name or prefix', () => {
    const present = ['plain/free/judge:b', 'plain/label/rule', 'plain/free/judge:a', 'plain/free/rule'];
    expect(selectReadouts(present, ['plain/label/rule', 'plain/free/judge:*'])).toEqual(['plain/label/rule', 'plain/free/judge:a', 'plain/free/judge:b']);
    expect(selectReadouts(present, ['negint/label/rule'])).toEqual([]);
  });
});

/** Story scores with a known structure: model signature + language shift + noise. */
function synthetic(models: number, languages: string[], stories: number, seed: number): StoryScore[] {
  const rnd = seededRandom(seed);
  const base = Array.from({ length: stories }, () => rnd());
  const sig = Array.from({ length: models }, () => Array.from({ length: stories }, () => (rnd() - 0.5) * 0.3));
  const out: StoryScore[] = [];
  for (let m = 0; m < models; m++) {
    for (const language of languages) {
      for (let k = 0; k < stories; k++) {
        const s = Math.min(1, Math.max(0, (base[k] as number) + (sig[m]?.[k] as number) + (rnd() - 0.5) * 0.1));
        out.push({ model: `m${m}`, language, readout: R, story: `st${String(k).padStart(3, '0')}`, story_group: k % 3 === 0 ? 'violation' : 'contested', s, b: 0, n_pairs: 2 });
      }
    }
  }
  return out;
}

function find(rows: readonly ClassEstimate[], metric: string, contrast: string, group = 'all'): ClassEstimate {
  const row = rows.find((r) => r.metric === metric && r.contrast === contrast && r.story_group === group);
  if (!row) throw new Error(`no ${metric} ${contrast} ${group}`);
  return row;
}

describe('identityAnalysis: class means with story-bootstrap intervals', () => {
  const data = synthetic(3, ['de', 'en', 'ja'], 30, 5);

  it('gives class means equal to the means of the pair values, and differences on the same draws', () => {
    const res = identityAnalysis(data, { bootstrapDraws: 50 });
    expect(res.readouts).toEqual([R]);
    expect(res.pairs).toHaveLength(36);
    const meanOf = (cls: string, f: (p: ProfilePair) => number | null) => {
      const v = res.pairs.filter((p) => p.class === cls).map(f).filter((x): x is number => x !== null);
      return v.reduce((a, b) => a + b, 0) / v.length;
    };
    for (const cls of ['same_model', 'same_language', 'both_differ']) {
      expect(find(res.classes, 'story_r', cls).estimate).toBeCloseTo(meanOf(cls, (p) => p.r), 12);
      expect(find(res.classes, 'residual_r', cls).estimate).toBeCloseTo(meanOf(cls, (p) => p.residual_r), 12);
      expect(find(res.classes, 'mean_abs_diff', cls).estimate).toBeCloseTo(meanOf(cls, (p) => p.mean_abs_diff), 12);
    }
    const diff = find(res.classes, 'residual_r', 'same_model-same_language');
    expect(diff.estimate).toBeCloseTo((find(res.classes, 'residual_r', 'same_model').estimate as number) - (find(res.classes, 'residual_r', 'same_language').estimate as number), 12);
    expect(diff.n_draws).toBe(50);
    // The signature is strong: the same model is closer, and the interval says so.
    expect(diff.ci_low).toBeGreaterThan(0);
    for (const row of res.classes.filter((r) => r.story_group === 'all')) {
      expect(row.ci_low as number).toBeLessThanOrEqual(row.ci_high as number);
    }
    // Class rows also per story group.
    expect(new Set(res.classes.map((r) => r.story_group))).toEqual(new Set(['all', 'contested', 'violation']));
    expect(res.counts.find((c) => c.metric === 'residual_r')).toMatchObject({ n_cells: 9, same_model: 9 });
    expect(res.counts.find((c) => c.metric === 'residual_r')?.expected_random).toBeCloseTo(9 * 2 / 8, 12);
  });

  it('is reproducible with its fixed seed and moves with another', () => {
    const a = identityAnalysis(data, { bootstrapDraws: 40, byStoryGroup: false });
    const b = identityAnalysis(data, { bootstrapDraws: 40, byStoryGroup: false });
    const c = identityAnalysis(data, { bootstrapDraws: 40, byStoryGroup: false, bootstrapSeed: 99 });
    expect(a.classes).toEqual(b.classes);
    expect(a.seed).toBe(BOOTSTRAP_SEED);
    expect(a.classes.map((r) => r.ci_low)).not.toEqual(c.classes.map((r) => r.ci_low));
    expect(a.classes.map((r) => r.estimate)).toEqual(c.classes.map((r) => r.estimate));
  });

  it('recomputes every cell and the residual centring per draw: a draw equals the analysis of the resampled stories', () => {
    const seed = 1234;
    const one = identityAnalysis(data, { bootstrapDraws: 1, bootstrapSeed: seed, byStoryGroup: false });
    // Replay the draw: stories resampled with replacement from the sorted story list.
    const stories = [...new Set(data.map((d) => d.story))].sort();
    const rng = seededRandom(seed);
    const drawn = stories.map(() => stories[Math.floor(rng() * stories.length)] as string);
    const resampled: StoryScore[] = [];
    drawn.forEach((story, i) => {
      for (const d of data) if (d.story === story) resampled.push({ ...d, story: `${story}#${String(i).padStart(3, '0')}` });
    });
    const direct = identityAnalysis(resampled, { bootstrapDraws: 1, byStoryGroup: false });
    for (const row of one.classes) {
      const other = find(direct.classes, row.metric, row.contrast);
      // With one draw, the interval is that draw's value.
      expect(row.ci_low).toBeCloseTo(other.estimate as number, 10);
      expect(row.ci_high).toBeCloseTo(other.estimate as number, 10);
    }
  });

  it('gives an interval of one point where every draw must agree (exact linear relations)', () => {
    const x = Array.from({ length: 12 }, (_, k) => (k * 7) % 12 / 12);
    const rows: StoryScore[] = [];
    x.forEach((v, k) => {
      rows.push({ model: 'A', language: 'en', readout: R, story: `s${k}`, story_group: 'g', s: v, b: 0, n_pairs: 1 });
      rows.push({ model: 'A', language: 'de', readout: R, story: `s${k}`, story_group: 'g', s: 0.5 * v + 0.1, b: 0, n_pairs: 1 });
    });
    const res = identityAnalysis(rows, { bootstrapDraws: 100, byStoryGroup: false });
    const r = find(res.classes, 'story_r', 'same_model');
    expect(r.estimate).toBeCloseTo(1, 12);
    expect(r.ci_low).toBeCloseTo(1, 12);
    expect(r.ci_high).toBeCloseTo(1, 12);
    // Empty classes have no estimate and no interval.
    expect(find(res.classes, 'story_r', 'same_language')).toMatchObject({ n_pairs: 0, estimate: null, ci_low: null, ci_high: null, n_draws: 0 });
    expect(find(res.classes, 'story_r', 'same_model-same_language').estimate).toBeNull();
    // One model per language: residuals are zero everywhere, so no residual r at all.
    expect(find(res.classes, 'residual_r', 'same_model').estimate).toBeNull();
  });

  it('leaves pairs with fewer than eight common stories out of the classes and the neighbours', () => {
    const rows = synthetic(2, ['en', 'de'], 7, 3);
    const res = identityAnalysis(rows, { bootstrapDraws: 10, byStoryGroup: false });
    expect(res.pairs.every((p) => p.r === null && p.n_common === 7)).toBe(true);
    expect(res.neighbours.every((n) => n.value === null)).toBe(true);
    expect(res.counts.every((c) => c.n_cells === 0 && c.same_model === 0)).toBe(true);
    expect(find(res.classes, 'story_r', 'same_model').estimate).toBeNull();
    expect(comparePairs(profileMatrix(rows, R), 7).every((p) => p.r !== null)).toBe(true);
  });

  it('rejects a bad number of draws', () => {
    expect(() => identityAnalysis(data, { bootstrapDraws: 0 })).toThrow(/bootstrapDraws/);
  });
});
