/**
 * simulation_truth.json must describe the data the simulator wrote: short answers are scored by
 * the simulated judge, whose flipped verdicts and malformed outputs are part of that data. One
 * model, 150 base items (75 short answer) × 36 q × r conditions, a judge that flips 20 % of its
 * verdicts and writes 5 % malformed outputs.
 *
 * Stated errors: short-answer accuracy within 4 binomial standard errors (√Σp(1−p) / n over the
 * read-correct probabilities, about 0.0095 here) of `accuracy_read`; the mean cell AUROC of the
 * short answers within 0.02 of the mean `auroc_read` (216 cells of 75 replies).
 */
import { beforeAll, describe, expect, it } from 'vitest';
import { metricSet } from '../../../lib/batteries/ptrue/analysis/cells.js';
import type { PtrueRow } from '../../../lib/batteries/ptrue/analysis/types.js';
import { correctProbability, modelTruth, ptrueJudgeSimulationSchema, ptrueSimulationSchema, readAuroc } from '../../../lib/batteries/ptrue/simulate/index.js';
import { SIX, syntheticItems, testPlan } from './fixtures.js';
import { runSimulated } from './simulatedRun.js';

const SEED = 20261203;
const items = syntheticItems(150);
const CONFIG = ptrueSimulationSchema.parse({ accuracy: 0.6, discrimination: 1, noise: 1, verifier_bias: { en: 1 } });
const JUDGE = ptrueJudgeSimulationSchema.parse({ error_rate: 0.2, malformed_rate: 0.05 });

let rows: PtrueRow[];
beforeAll(async () => {
  const plan = await testPlan(items, ['solo']);
  rows = runSimulated({ plan, seed: SEED, models: { solo: CONFIG }, judge: JUDGE });
}, 120_000);

describe('P(True) simulation truth counts the judge that scores short answers', () => {
  it('recovers the read accuracy of short answers; the true accuracy is many standard errors away', () => {
    // Prepare: the truth as simulation_truth.json states it.
    const truth = modelTruth(CONFIG, SEED, 'solo', items, SIX, SIX, JUDGE);
    const sa = truth.cells.filter((c) => c.benchmark === 'sa');
    expect(sa.every((c) => c.scored_by === 'judge')).toBe(true);
    expect(truth.cells.filter((c) => c.benchmark === 'mc').every((c) => c.scored_by === 'option' && c.accuracy_read === c.accuracy)).toBe(true);
    const expectedRead = sa.reduce((s, c) => s + (c.accuracy_read as number), 0) / sa.length;
    const expectedTrue = sa.reduce((s, c) => s + c.accuracy, 0) / sa.length;
    // The standard error of the pooled share, from each reply's probability of being read correct.
    let variance = 0;
    for (const i of items.filter((x) => x.benchmark === 'sa')) {
      for (const q of SIX) {
        for (const r of SIX) {
          const p = correctProbability(CONFIG, { seed: SEED, model: 'solo', baseItem: i.id, q, r }, i.contentLanguage);
          const read = 0.95 * (0.8 * p + 0.2 * (1 - p));
          variance += read * (1 - read);
        }
      }
    }
    const n = 75 * 36;
    const se = Math.sqrt(variance) / n;
    // Act: accuracy as the analysis computes it, one verifier copy per reply.
    const observed = metricSet(rows.filter((r) => r.benchmark === 'sa' && r.v === 'en')).accuracy as number;
    // Assess
    expect(Math.abs(observed - expectedRead), `read: ${observed} vs ${expectedRead} ± ${se}`).toBeLessThan(4 * se);
    expect(Math.abs(observed - expectedTrue) / se).toBeGreaterThan(6);
  });

  it('recovers the AUROC against the judge\'s reading, attenuated by its flips', () => {
    const truth = modelTruth(CONFIG, SEED, 'solo', items, SIX, SIX, JUDGE);
    const observed: number[] = [];
    const expected: number[] = [];
    for (const a of truth.auroc_read) {
      const cell = rows.filter((r) => r.benchmark === 'sa' && r.q === a.q && r.r === a.r && r.v === a.v);
      const m = metricSet(cell).auroc;
      if (m === null) continue;
      observed.push(m);
      expected.push(a.auroc);
    }
    expect(observed.length).toBeGreaterThan(200);
    const mean = (x: readonly number[]) => x.reduce((s, v) => s + v, 0) / x.length;
    expect(Math.abs(mean(observed) - mean(expected)), `${mean(observed)} vs ${mean(expected)}`).toBeLessThan(0.02);
    // The true AUROC Φ(√2) ≈ 0.92 is far above what the judge's labels allow.
    expect(truth.auroc[0]!.auroc - mean(observed)).toBeGreaterThan(0.1);
  });

  it('reads AUROC through a perfect judge unchanged, and through a coin-flip judge as 0.5', () => {
    expect(readAuroc(0.83, 0.6, { error_rate: 0, malformed_rate: 0 })).toBeCloseTo(0.83, 12);
    expect(readAuroc(0.83, 0.6, { error_rate: 0.5, malformed_rate: 0 })).toBeCloseTo(0.5, 12);
    expect(readAuroc(0.83, 0.6, { error_rate: 1, malformed_rate: 0 })).toBeCloseTo(0.17, 12);
  });
});
