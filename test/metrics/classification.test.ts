import { describe, expect, it } from 'vitest';
import {
  accuracy,
  accuracyGap,
  accuracyOnNegatives,
  accuracyOnPositives,
  addConfusions,
  confusionOf,
  f1,
  precision,
  ratesOf,
  recall,
} from '../../lib/metrics/classification.js';
import type { BinaryCase, ClassificationRates } from '../../lib/metrics/classification.js';

/** n copies of one case. */
function cases(n: number, gold: boolean, predicted: boolean | null): BinaryCase[] {
  return Array.from({ length: n }, () => ({ gold, predicted }));
}

function noNaN(rates: ClassificationRates): void {
  for (const [key, value] of Object.entries(rates)) {
    expect(Number.isNaN(value), `${key} is NaN`).toBe(false);
  }
}

describe('confusion table and rates, against hand-computed tables', () => {
  // Prepare: 10 gold positives (6 found, 3 missed, 1 unreadable) and 10 gold negatives
  // (7 right, 2 false alarms, 1 unreadable).
  const table = confusionOf([
    ...cases(6, true, true),
    ...cases(3, true, false),
    ...cases(1, true, null),
    ...cases(7, false, false),
    ...cases(2, false, true),
    ...cases(1, false, null),
  ]);

  it('counts each cell', () => {
    expect(table).toEqual({ tp: 6, fp: 2, tn: 7, fn: 3, abstainPositive: 1, abstainNegative: 1 });
  });

  it('computes accuracy with abstentions counted wrong, Acc0, Acc1 and their gap', () => {
    expect(accuracy(table)).toBeCloseTo(13 / 20, 12);
    expect(accuracyOnNegatives(table)).toBeCloseTo(7 / 10, 12);
    expect(accuracyOnPositives(table)).toBeCloseTo(6 / 10, 12);
    expect(accuracyGap(table)).toBeCloseTo(0.1, 12);
  });

  it('computes precision, recall and F1 with the positive class as given', () => {
    expect(precision(table)).toBeCloseTo(6 / 8, 12);
    expect(recall(table)).toBeCloseTo(6 / 10, 12);
    // Harmonic mean of 0.75 and 0.6 = 2·6 / (2·6 + 2 + 3 + 1) = 12/18.
    expect(f1(table)).toBeCloseTo(12 / 18, 12);
    const p = 0.75;
    const r = 0.6;
    expect(f1(table)).toBeCloseTo((2 * p * r) / (p + r), 12);
  });

  it('pools tables by adding their cells', () => {
    const pooled = addConfusions([table, table]);
    expect(pooled).toEqual({ tp: 12, fp: 4, tn: 14, fn: 6, abstainPositive: 2, abstainNegative: 2 });
    expect(accuracy(pooled)).toBeCloseTo(accuracy(table) as number, 12);
  });
});

describe('edge cases: defined values, never NaN', () => {
  it('a language with no inappropriate (positive) sample: Acc1, recall and the gap are null', () => {
    const t = confusionOf([...cases(4, false, false), ...cases(1, false, true)]);
    const r = ratesOf(t);
    expect(r.accuracy).toBeCloseTo(0.8, 12);
    expect(r.accuracy_negative).toBeCloseTo(0.8, 12);
    expect(r.accuracy_positive).toBeNull();
    expect(r.accuracy_gap).toBeNull();
    expect(r.recall).toBeNull();
    // One false alarm and nothing to find: precision 0/1 = 0, F1 = 0 / (0 + 1) = 0.
    expect(r.precision).toBe(0);
    expect(r.f1).toBe(0);
    noNaN(r);
  });

  it('a checkpoint never triggered and never flagged: precision, recall and F1 are null', () => {
    const r = ratesOf(confusionOf(cases(12, false, false)));
    expect(r.precision).toBeNull();
    expect(r.recall).toBeNull();
    expect(r.f1).toBeNull();
    expect(r.accuracy).toBe(1);
    noNaN(r);
  });

  it('a model that answers Pass to everything: recall 0, precision null, F1 0, Acc0 1, Acc1 0', () => {
    const r = ratesOf(confusionOf([...cases(5, true, false), ...cases(7, false, false)]));
    expect(r.precision).toBeNull();
    expect(r.recall).toBe(0);
    expect(r.f1).toBe(0);
    expect(r.accuracy_negative).toBe(1);
    expect(r.accuracy_positive).toBe(0);
    expect(r.accuracy_gap).toBe(1);
    expect(r.accuracy).toBeCloseTo(7 / 12, 12);
    noNaN(r);
  });

  it('a judge that never gives a usable answer: accuracy 0, F1 0, precision null', () => {
    const r = ratesOf(confusionOf([...cases(3, true, null), ...cases(3, false, null)]));
    expect(r.accuracy).toBe(0);
    expect(r.abstained).toBe(6);
    expect(r.f1).toBe(0);
    expect(r.precision).toBeNull();
    noNaN(r);
  });

  it('no case at all: every rate null', () => {
    const r = ratesOf(confusionOf([]));
    expect(r.n).toBe(0);
    for (const k of ['accuracy', 'accuracy_negative', 'accuracy_positive', 'accuracy_gap', 'precision', 'recall', 'f1'] as const) {
      expect(r[k]).toBeNull();
    }
  });
});
