/**
 * The simulator through the battery's expand and read functions, and the analysis against the
 * simulator's known truth. 150 base items (75 multiple choice, 75 short answer)
 * × 3 models × 6 × 6 × 6 conditions: 16,200 replies and 97,200 verifier copies.
 *
 * Stated errors (each about 3–4 standard errors at these counts; the run is seeded, so it passes or
 * fails the same way every time):
 * - accuracy per model and question language: within 0.06 of the expected accuracy (900 replies);
 * - share of replies in the requested language, per requested language: within 0.05;
 * - mean cell-level AUROC per matching regime: within 0.025 of the mean true AUROC of its cells;
 * - the Q=R coefficient of the AUROC regression: within 0.02 of the true difference, R=V within 0.02 of 0;
 * - one model's ECE and mean P(True) per verifier language: within 0.02 and 0.01 of the population values;
 * - the question-language share of the accuracy decomposition: within 0.06 of its expected value
 *   (true cell accuracies plus the binomial noise each term's sum of squares expects).
 */
import { beforeAll, describe, expect, it } from 'vitest';
import { analyzePtrueRows, type PtrueResults } from '../../../lib/batteries/ptrue/analysis/analyzeRows.js';
import { metricSet } from '../../../lib/batteries/ptrue/analysis/cells.js';
import { accuracyDecomposition } from '../../../lib/batteries/ptrue/analysis/decomposition.js';
import type { PtrueRow } from '../../../lib/batteries/ptrue/analysis/types.js';
import { regimeOf } from '../../../lib/batteries/ptrue/analysis/regimes.js';
import { ptrueJudgeSimulationSchema, ptrueSimulationSchema, cellTruth, confidenceTruth, correctProbability, kappaFor, normalCdf, type PtrueSimulation } from '../../../lib/batteries/ptrue/simulate/index.js';
import { explainedVarianceShares } from '../../../lib/metrics/variance.js';
import { SIX, syntheticItems, testPlan } from './fixtures.js';
import { runSimulated } from './simulatedRun.js';

const SEED = 20261202;
const items = syntheticItems(150);
const shared = {
  question_language: { zh: -0.4, ja: -0.3, ko: -0.5, hi: -1.2 },
  response_language: { hi: -0.5, ko: -0.2 },
  native_bonus: 0.8,
  compliance: 0.85,
  compliance_by_language: { hi: 0.55, ko: 0.7 },
  verifier_bias: { en: 1.2, zh: 0.8, fr: 0.1, ja: 0.9, ko: 1, hi: 0.6 },
  discrimination: 0.9,
  noise: 1,
};
const MODELS: Record<string, PtrueSimulation> = {
  // No matching effect: its per-verifier metrics have closed-form truths.
  plain: ptrueSimulationSchema.parse({ ...shared, accuracy: 0.6 }),
  beta: ptrueSimulationSchema.parse({ ...shared, accuracy: 0.5, matching: { q_eq_r: 0.6 } }),
  gamma: ptrueSimulationSchema.parse({ ...shared, accuracy: 0.7, matching: { q_eq_r: 0.6 } }),
};

let rows: PtrueRow[];
let results: PtrueResults;
beforeAll(async () => {
  const plan = await testPlan(items, Object.keys(MODELS));
  rows = runSimulated({ plan, seed: SEED, models: MODELS, judge: ptrueJudgeSimulationSchema.parse({}) });
  results = analyzePtrueRows(rows, { draws: 50, seed: 1, simulated: true });
}, 120_000);

describe('simulated P(True) campaign: the analysis recovers the truth', () => {
  it('has every row: 3 models × 150 items × 216 conditions, all with a P(True)', () => {
    expect(rows).toHaveLength(3 * 150 * 216);
    expect(rows.every((r) => r.p_true !== null && r.exact === true)).toBe(true);
  });

  it('recovers accuracy per model and question language', () => {
    for (const [model, cfg] of Object.entries(MODELS)) {
      const truth = cellTruth(cfg, SEED, model, items, SIX);
      for (const q of SIX) {
        const t = truth.filter((c) => c.q === q);
        // Both benchmarks have 75 items: their cells weigh the same.
        const expected = t.reduce((s, c) => s + c.accuracy, 0) / t.length;
        const observed = metricSet(rows.filter((r) => r.model === model && r.q === q && r.v === 'en')).accuracy!;
        expect(Math.abs(observed - expected), `${model} q=${q}: ${observed} vs ${expected}`).toBeLessThan(0.06);
      }
    }
  });

  it('verifier language cannot change accuracy: equal on every verifier level', () => {
    for (const b of ['mc', 'sa']) {
      const acc = results.axes.filter((a) => a.benchmark === b && a.axis === 'v').map((a) => a.means.accuracy!);
      expect(acc).toHaveLength(6);
      for (const a of acc) expect(a).toBeCloseTo(acc[0]!, 12);
    }
  });

  it('recovers the share of replies in the requested language (language identifier included)', () => {
    for (const r of SIX) {
      const expected = MODELS.plain!.compliance_by_language[r] ?? MODELS.plain!.compliance;
      const c = results.compliance.filter((x) => x.r === r);
      const share = c.reduce((s, x) => s + x.compliant, 0) / c.reduce((s, x) => s + x.replies, 0);
      expect(Math.abs(share - expected), `r=${r}: ${share}`).toBeLessThan(0.05);
    }
  });

  it('recovers the mean cell AUROC of each matching regime', () => {
    for (const reg of results.regimes) {
      const cells = results.cells.filter((c) => c.benchmark === reg.benchmark && regimeOf(c.q, c.r, c.v) === reg.regime);
      const truth = cells.map((c) => normalCdf((Math.SQRT2 * kappaFor(MODELS[c.model]!, c.q, c.r, c.v)) / MODELS[c.model]!.noise));
      const expected = truth.reduce((s, x) => s + x, 0) / truth.length;
      expect(Math.abs(reg.cellMean.auroc! - expected), `${reg.benchmark} ${reg.regime}`).toBeLessThan(0.025);
    }
  });

  it('the random-intercept regression finds the Q=R effect on AUROC and no R=V effect', () => {
    const kappa = MODELS.beta!.discrimination;
    // Two of three models have the Q=R effect: the population coefficient is the mean over models.
    const effect = ((normalCdf(Math.SQRT2 * (kappa + 0.6)) - normalCdf(Math.SQRT2 * kappa)) * 2) / 3;
    for (const b of ['mc', 'sa']) {
      const m = results.matching.find((x) => x.benchmark === b && x.metric === 'auroc')!;
      expect(m.mixed).not.toBeNull();
      const coef = (name: string) => m.mixed!.coefficients.find((c) => c.name === name)!;
      expect(Math.abs(coef('Q=R').estimate - effect), `${b} Q=R ${coef('Q=R').estimate} vs ${effect}`).toBeLessThan(0.02);
      expect(Math.abs(coef('R=V').estimate)).toBeLessThan(0.02);
      expect(m.cells).toBe(3 * 216);
      expect(m.modelLevel.find((c) => c.name === 'Q=R')!.sameSign).toBeGreaterThanOrEqual(2);
    }
  });

  it('recovers ECE and mean P(True) per verifier language for the model without matching effects', () => {
    const plain = rows.filter((r) => r.model === 'plain');
    const eces: number[] = [];
    for (const v of SIX) {
      const mine = plain.filter((r) => r.v === v);
      const m = metricSet(mine);
      const t = confidenceTruth({ accuracy: m.accuracy!, bias: shared.verifier_bias[v as keyof typeof shared.verifier_bias], kappa: shared.discrimination, noise: shared.noise });
      expect(Math.abs(m.ece! - t.ece), `v=${v} ECE ${m.ece} vs ${t.ece}`).toBeLessThan(0.02);
      expect(Math.abs(m.meanConfidence! - t.meanConfidence), `v=${v}`).toBeLessThan(0.01);
      expect(Math.abs(m.brier! - t.brier), `v=${v}`).toBeLessThan(0.01);
      eces.push(m.ece!);
    }
    // French (the smallest bias) is the best-calibrated verifier, as the truth says.
    expect(Math.min(...eces)).toBe(eces[SIX.indexOf('fr')]);
  });

  it('recovers the question-language share of the accuracy decomposition', () => {
    // Shares of cell means are not unbiased: binomial noise in each q × r cell adds df × var(cell
    // mean) to each term's expected sum of squares (orthogonal ANOVA). The truth compared against is
    // the share in those expected sums: E[SS_term] = SS_term(true cell accuracies) + df_term · σ̄²,
    // σ̄² the mean variance of a cell's accuracy, from the per-item probabilities.
    for (const b of ['mc', 'sa']) {
      const group = items.filter((i) => i.benchmark === b);
      const expectedShares = Object.entries(MODELS).map(([model, cfg]) => {
        const cells = cellTruth(cfg, SEED, model, group, SIX);
        const d = explainedVarianceShares(cells.map((c) => ({ levels: { q: c.q, r: c.r }, y: c.accuracy })), ['q', 'r'], { interactions: 'two-way' });
        if (!d.ok) throw new Error(d.reason);
        let variance = 0;
        for (const q of SIX) {
          for (const r of SIX) {
            let v = 0;
            for (const i of group) {
              const p = correctProbability(cfg, { seed: SEED, model, baseItem: i.id, q, r }, i.contentLanguage) * (i.kind === 'multiple_choice' ? 1 - cfg.unextractable_rate : 1);
              v += p * (1 - p);
            }
            variance += v / group.length ** 2 / 36;
          }
        }
        const df: Record<string, number> = { q: 5, r: 5, 'q×r': 25 };
        const expected = d.value.terms.map((t) => t.ss + df[t.term]! * variance);
        const total = expected.reduce((s, x) => s + x, 0);
        return expected[0]! / total;
      });
      const truth = expectedShares.reduce((s, x) => s + x, 0) / expectedShares.length;
      // The table's decomposition has the stratum too (subject group or content subset); compare
      // with the same factors as the truth.
      expect(results.accuracyShares.find((d) => d.benchmark === b)!.factors).toContain('stratum');
      const observed = accuracyDecomposition(b, rows.filter((r) => r.benchmark === b), { stratum: false }).mean.find((t) => t.term === 'q')!.share!;
      expect(truth).toBeGreaterThan(0.4);
      expect(Math.abs(observed - truth), `${b}: ${observed} vs ${truth}`).toBeLessThan(0.06);
    }
  });

  it('reports rank changes along the path and a bootstrap reference for every benchmark and metric', () => {
    expect(results.rankChanges).toHaveLength(2 * 4 * 4);
    expect(results.rankReferences).toHaveLength(2 * 4);
    const acc = results.rankChanges.find((c) => c.benchmark === 'mc' && c.metric === 'accuracy' && c.from.startsWith('S0') && c.to.startsWith('S1'))!;
    expect(acc.pairs).toBe(3);
    // gamma > plain > beta by construction, far apart: the all-English order holds in its resamples.
    expect(results.rankReferences.find((r) => r.benchmark === 'mc' && r.metric === 'accuracy')!.bootstrap.mean).toBeGreaterThan(0.6);
  });

  it('restricts to replies in the requested language (§6.6)', () => {
    expect(results.restricted).not.toBeNull();
    expect(results.restricted!.rows).toBeLessThan(rows.length);
    expect(results.restricted!.rows).toBeGreaterThan(rows.length * 0.6);
  });
});
