import { describe, expect, it } from 'vitest';
import { auroc, binIndex, brierScore, expectedCalibrationError, reliabilityBins, summarizeConfidence, summarizeConfidenceColumns } from '../../lib/metrics/calibration.js';

const pairs = (ps: readonly number[], ys: readonly number[]) => ps.map((p, i) => ({ p, y: ys[i]! }));

describe('Brier score', () => {
  it('is the mean squared error, computed by hand', () => {
    // (0.8−1)² = 0.04, (0.3−0)² = 0.09, (0.6−0)² = 0.36 → 0.49 / 3
    expect(brierScore(pairs([0.8, 0.3, 0.6], [1, 0, 0]))).toBeCloseTo(0.49 / 3, 12);
  });

  it('is 0 for confidence exactly 1 on correct and 0 on incorrect answers, 1 for the opposite', () => {
    expect(brierScore(pairs([1, 0], [1, 0]))).toBe(0);
    expect(brierScore(pairs([0, 1], [1, 0]))).toBe(1);
  });

  it('is null for no pairs and refuses a confidence outside [0, 1] or a non-binary outcome', () => {
    expect(brierScore([])).toBeNull();
    expect(() => brierScore(pairs([1.2], [1]))).toThrow(/confidence 0 is 1.2/);
    expect(() => brierScore(pairs([Number.NaN], [1]))).toThrow(RangeError);
    expect(() => brierScore(pairs([0.5], [2]))).toThrow(/outcome 0 is 2/);
  });
});

describe('15-bin ECE (bins ((m−1)/15, m/15], 0 in the first)', () => {
  it('puts values on an edge in the bin the edge closes, and 0 and 1 in the end bins', () => {
    expect(binIndex(0)).toBe(0);
    expect(binIndex(1 / 15)).toBe(0);
    expect(binIndex(1 / 15 + 1e-12)).toBe(1);
    expect(binIndex(0.2)).toBe(2); // 0.2 = 3/15 closes the third bin, although 0.2 × 15 rounds above 3
    expect(binIndex(0.5)).toBe(7); // (7/15, 8/15]
    expect(binIndex(14 / 15)).toBe(13);
    expect(binIndex(1)).toBe(14);
    for (let m = 1; m <= 15; m++) expect(binIndex(m / 15)).toBe(m - 1);
  });

  it('matches a hand computation over two occupied bins, the other 13 empty', () => {
    // Bin 14 (13/15, 14/15] ∋ 0.9: y = 1, 1, 0 → acc 2/3, conf 0.9 → gap 0.2333…
    // Bin  3 (2/15, 3/15]  ∋ 0.2: y = 0 → acc 0, conf 0.2 → gap 0.2
    // ECE = 3/4 · 0.23333 + 1/4 · 0.2 = 0.225
    const s = pairs([0.9, 0.9, 0.9, 0.2], [1, 1, 0, 0]);
    expect(expectedCalibrationError(s)).toBeCloseTo(0.225, 12);
    const bins = reliabilityBins(s);
    expect(bins).toHaveLength(15);
    expect(bins.filter((b) => b.n > 0).map((b) => b.index)).toEqual([2, 13]);
    expect(bins[13]).toMatchObject({ n: 3, lo: 13 / 15, hi: 14 / 15 });
    expect(bins[13]!.accuracy).toBeCloseTo(2 / 3, 12);
    expect(bins[0]).toEqual({ index: 0, lo: 0, hi: 1 / 15, n: 0, confidence: null, accuracy: null });
  });

  it('is 0 when every bin is perfectly calibrated, and |acc − p| for a constant confidence', () => {
    expect(expectedCalibrationError(pairs([1, 1, 0, 0], [1, 1, 0, 0]))).toBe(0);
    expect(expectedCalibrationError(pairs([0.5, 0.5], [1, 0]))).toBe(0);
    // Constant 0.7, accuracy 1/4 → 0.45.
    expect(expectedCalibrationError(pairs([0.7, 0.7, 0.7, 0.7], [1, 0, 0, 0]))).toBeCloseTo(0.45, 12);
  });

  it('counts confidence exactly 0 and 1 (extreme bins) and is null for no pairs', () => {
    // 0 → bin 1 with y = 1: gap 1; 1 → bin 15 with y = 1: gap 0 → ECE 0.5
    expect(expectedCalibrationError(pairs([0, 1], [1, 1]))).toBe(0.5);
    expect(expectedCalibrationError([])).toBeNull();
  });

  it('takes another number of bins (10) and rejects a bad one', () => {
    // One bin of 10 holds both: acc 0.5, conf 0.55 → 0.05; with 15 they split.
    expect(expectedCalibrationError(pairs([0.52, 0.58], [1, 0]), 10)).toBeCloseTo(0.05, 12);
    expect(expectedCalibrationError(pairs([0.52, 0.58], [1, 0]), 15)).toBeCloseTo(0.5 * 0.48 + 0.5 * 0.58, 12);
    expect(() => reliabilityBins([], 0)).toThrow(/positive integer/);
  });
});

describe('AUROC (ties one half)', () => {
  it('matches the Mann–Whitney count by hand', () => {
    // Correct: 0.9, 0.4; incorrect: 0.4, 0.1. Pairs: (0.9>0.4)=1, (0.9>0.1)=1, (0.4=0.4)=½, (0.4>0.1)=1 → 3.5/4
    expect(auroc(pairs([0.9, 0.4, 0.4, 0.1], [1, 1, 0, 0]))).toBe(0.875);
    expect(auroc(pairs([0.9, 0.4, 0.4], [1, 0, 1]))).toBe(0.75);
  });

  it('is 1 for perfect, 0 for reversed and 0.5 for a constant confidence', () => {
    expect(auroc(pairs([0.9, 0.8, 0.2], [1, 1, 0]))).toBe(1);
    expect(auroc(pairs([0.1, 0.8, 0.9], [1, 0, 0]))).toBe(0);
    expect(auroc(pairs([0.6, 0.6, 0.6, 0.6], [1, 0, 1, 0]))).toBe(0.5);
    expect(auroc(pairs([1, 1, 0], [1, 0, 0]))).toBe(0.75);
  });

  it('is null (undefined) for an all-correct or all-incorrect cell, and for no pairs', () => {
    expect(auroc(pairs([0.9, 0.2], [1, 1]))).toBeNull();
    expect(auroc(pairs([0.9, 0.2], [0, 0]))).toBeNull();
    expect(auroc([])).toBeNull();
  });

  it('does not depend on the order of the input', () => {
    const a = pairs([0.3, 0.7, 0.7, 0.2, 0.9, 0.5], [0, 1, 0, 0, 1, 1]);
    expect(auroc([...a].reverse())).toBe(auroc(a));
    // By hand: correct 0.7, 0.9, 0.5 vs incorrect 0.3, 0.7, 0.2: 0.7→(1,½,1) 0.9→3 0.5→(1,0,1) = 7.5/9
    expect(auroc(a)).toBeCloseTo(7.5 / 9, 12);
  });
});

describe('summarizeConfidence', () => {
  it('gathers accuracy, mean confidence and the three metrics; an all-correct group has no AUROC', () => {
    const s = summarizeConfidence(pairs([1, 1, 1], [1, 1, 1]));
    expect(s).toEqual({ n: 3, accuracy: 1, meanConfidence: 1, brier: 0, ece: 0, auroc: null });
    expect(summarizeConfidence([])).toEqual({ n: 0, accuracy: null, meanConfidence: null, brier: null, ece: null, auroc: null });
  });
});

describe('summarizeConfidenceColumns', () => {
  it('gives summarizeConfidence of the same pairs bit for bit, ties and empty classes included', () => {
    let s = 9;
    const rand = (): number => (s = (Math.imul(s, 1664525) + 1013904223) >>> 0) / 2 ** 32;
    for (let t = 0; t < 200; t++) {
      const n = Math.floor(rand() * 60);
      const grid = [0, 4, 15][t % 3]!;
      const pairs = Array.from({ length: n }, () => ({ p: grid > 0 ? Math.floor(rand() * (grid + 1)) / grid : rand(), y: t % 17 === 0 ? 1 : rand() < 0.5 ? 1 : 0 }));
      const columns = summarizeConfidenceColumns(Float64Array.from(pairs, (x) => x.p), Uint8Array.from(pairs, (x) => x.y));
      expect(columns).toEqual(summarizeConfidence(pairs));
    }
  });

  it('refuses a confidence outside [0, 1], naming its index', () => {
    expect(() => summarizeConfidenceColumns(Float64Array.of(0.2, 1.5), Uint8Array.of(1, 0))).toThrow(/confidence 1 is 1.5/);
  });
});
