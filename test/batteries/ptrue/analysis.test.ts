import { describe, expect, it } from 'vitest';
import { analyzePtrueRows } from '../../../lib/batteries/ptrue/analysis/analyzeRows.js';
import { configurationCells, metricSet } from '../../../lib/batteries/ptrue/analysis/cells.js';
import { matchRow } from '../../../lib/batteries/ptrue/analysis/matching.js';
import { PATH_STEPS, pathScores, stepCondition } from '../../../lib/batteries/ptrue/analysis/ranks.js';
import { reliabilityDiagrams } from '../../../lib/batteries/ptrue/analysis/reliability.js';
import { hasStrata } from '../../../lib/batteries/ptrue/analysis/decomposition.js';
import { reliabilityBins } from '../../../lib/api/battery.js';
import { regimeOf, regimeSummaries, REGIMES } from '../../../lib/batteries/ptrue/analysis/regimes.js';
import type { PtrueRow } from '../../../lib/batteries/ptrue/analysis/types.js';
import { compliance, replies, restrictToRequested } from '../../../lib/batteries/ptrue/analysis/views.js';
import { ptrueFiles } from '../../../lib/batteries/ptrue/report/index.js';
import { expectCsvLinkUnderEveryTable } from '../../helpers/reportTables.js';
import { SIX } from './fixtures.js';

const row = (over: Partial<PtrueRow>): PtrueRow => ({
  model: 'm',
  benchmark: 'b',
  base_item: 'i1',
  stratum: null,
  content_language: null,
  q: 'en',
  r: 'en',
  v: 'en',
  correct: true,
  p_true: 0.9,
  ...over,
});

describe('matching regimes', () => {
  it('puts each of the 216 conditions in exactly one regime: 6, 30, 30, 30, 120', () => {
    const counts: Record<string, number> = {};
    for (const q of SIX) for (const r of SIX) for (const v of SIX) counts[regimeOf(q, r, v)] = (counts[regimeOf(q, r, v)] ?? 0) + 1;
    expect(counts).toEqual({ 'Q=R=V': 6, 'Q=R': 30, 'R=V': 30, 'Q=V': 30, none: 120 });
    expect(REGIMES).toEqual(['Q=R=V', 'Q=R', 'R=V', 'Q=V', 'none']);
  });

  it('reports pooled and cell-level metrics, which differ when cells differ (App. C)', () => {
    // Regime "none" with two cells: (en, fr, ko) where higher P(True) marks the correct answers, and
    // (en, ko, fr) where it marks the wrong ones. Cell AUROCs 1 and 0 → mean 0.5; pooled: by hand 0.5 too,
    // but the accuracy-weighted mixture differs for ECE.
    const rows = [
      row({ q: 'en', r: 'fr', v: 'ko', base_item: 'a', correct: true, p_true: 0.9 }),
      row({ q: 'en', r: 'fr', v: 'ko', base_item: 'b', correct: false, p_true: 0.2 }),
      row({ q: 'en', r: 'ko', v: 'fr', base_item: 'a', correct: true, p_true: 0.3 }),
      row({ q: 'en', r: 'ko', v: 'fr', base_item: 'b', correct: false, p_true: 0.7 }),
    ];
    const cells = configurationCells(rows);
    expect(cells.map((c) => c.auroc)).toEqual([1, 0]);
    const [none] = regimeSummaries(rows, cells);
    expect(none!.regime).toBe('none');
    expect(none!.cellMean.auroc).toBe(0.5);
    // Pooled: correct {0.9, 0.3} vs wrong {0.2, 0.7}: pairs 0.9>0.2, 0.9>0.7, 0.3>0.2, 0.3<0.7 → 3/4
    expect(none!.pooled.auroc).toBe(0.75);
    // Cell ECE: cell 1 bins |1−0.9|, |0−0.2| → (0.1 + 0.2)/2 = 0.15; cell 2 (0.7 + 0.7)/2 = 0.7 → mean 0.425
    expect(none!.cellMean.ece).toBeCloseTo(0.425, 12);
  });

  it('leaves an all-correct cell out of the AUROC mean and says how many cells it averaged', () => {
    const rows = [row({ base_item: 'a', correct: true, p_true: 0.9 }), row({ base_item: 'b', correct: true, p_true: 0.4 })];
    const [all] = regimeSummaries(rows, configurationCells(rows));
    expect(all!.cellMean).toMatchObject({ auroc: null, aurocCells: 0, cells: 1, accuracy: 1 });
  });
});

describe('item rows and cells', () => {
  it('counts accuracy over every row and confidence metrics over valid P(True) only', () => {
    const m = metricSet([row({ correct: true, p_true: 1 }), row({ correct: false, p_true: null }), row({ correct: false, p_true: 0 })]);
    expect(m).toEqual({ n: 3, invalid: 1, accuracy: 1 / 3, meanConfidence: 0.5, brier: 0, ece: 0, auroc: 1 });
  });

  it('codes the regression covariates of each regime', () => {
    expect(matchRow('en', 'en', 'en')).toEqual([1, 1, 1, 1, 1]);
    expect(matchRow('en', 'en', 'fr')).toEqual([1, 1, 0, 0, 0]);
    expect(matchRow('en', 'fr', 'fr')).toEqual([1, 0, 1, 0, 0]);
    expect(matchRow('fr', 'en', 'fr')).toEqual([1, 0, 0, 1, 0]);
    expect(matchRow('zh', 'en', 'fr')).toEqual([1, 0, 0, 0, 0]);
  });

  it('scores models along the path, averaging over target languages', () => {
    expect([0, 1, 2, 3].map((s) => stepCondition(s, 'ko'))).toEqual([
      { q: 'en', r: 'en', v: 'en' },
      { q: 'ko', r: 'en', v: 'en' },
      { q: 'ko', r: 'ko', v: 'en' },
      { q: 'ko', r: 'ko', v: 'ko' },
    ]);
    const rows = [
      row({ model: 'a', correct: true }),
      row({ model: 'a', q: 'ko', correct: false }),
      row({ model: 'a', q: 'fr', correct: true }),
      row({ model: 'b', correct: false }),
      row({ model: 'b', q: 'ko', correct: true }),
      row({ model: 'b', q: 'fr', correct: true }),
    ];
    const [s0, s1] = pathScores(configurationCells(rows), 'b', 'accuracy');
    expect(s0).toEqual(new Map([['a', 1], ['b', 0]]));
    expect(s1).toEqual(new Map([['a', 0.5], ['b', 1]]));
  });

  it('restricts to replies in the requested language and reports compliance per reply, not per verifier copy', () => {
    const rows = [
      row({ base_item: 'a', r: 'ko', realised: 'ko', v: 'en' }),
      row({ base_item: 'a', r: 'ko', realised: 'ko', v: 'fr' }),
      row({ base_item: 'b', r: 'ko', realised: 'en', v: 'en' }),
      row({ base_item: 'c', r: 'ko', realised: null, v: 'en' }),
    ];
    expect(restrictToRequested(rows).map((r) => r.base_item)).toEqual(['a', 'a']);
    expect(compliance(rows)).toEqual([{ benchmark: 'b', r: 'ko', replies: 2, compliant: 1, share: 0.5 }]);
  });
});

/** Rows of three models, two benchmarks, four languages, in ptrue_rows's order (model, benchmark, base item, q, r, v), some P(True) missing. */
function manyRows(): PtrueRow[] {
  const langs = ['en', 'fr', 'ko', 'zh'];
  let s = 11;
  const rand = (): number => ((s = (Math.imul(s, 1664525) + 1013904223) >>> 0) / 2 ** 32);
  const out: PtrueRow[] = [];
  for (const model of ['a', 'b', 'c']) {
    for (const benchmark of ['lsqa', 'mmmlu']) {
      for (const item of ['i1', 'i2', 'i3']) {
        for (const q of langs) {
          for (const r of langs) {
            const correct = rand() < 0.6;
            for (const v of langs) {
              out.push(row({ benchmark, model, base_item: item, stratum: benchmark === 'lsqa' ? (item === 'i1' ? 's1' : 's2') : null, q, r, v, correct, p_true: rand() < 0.1 ? null : Math.round(rand() * 100) / 100, realised: rand() < 0.8 ? r : 'en' }));
            }
          }
        }
      }
    }
  }
  return out;
}

/** The same rows in another order (a fixed shuffle). */
function shuffled<T>(list: readonly T[]): T[] {
  const out = [...list];
  let s = 5;
  for (let i = out.length - 1; i > 0; i--) {
    s = (Math.imul(s, 1664525) + 1013904223) >>> 0;
    const j = s % (i + 1);
    [out[i], out[j]] = [out[j]!, out[i]!];
  }
  return out;
}

describe('one pass over the rows, the same tables', () => {
  it('replies: the first row of each reply in first-seen order, whether the rows come sorted by reply or not', () => {
    const byKey = (rows: readonly PtrueRow[]): PtrueRow[] => {
      const first = new Map<string, PtrueRow>();
      for (const r of rows) {
        const key = [r.model, r.benchmark, r.base_item, r.q, r.r].join('|');
        if (!first.has(key)) first.set(key, r);
      }
      return [...first.values()];
    };
    const sorted = manyRows();
    expect(replies(sorted)).toEqual(byKey(sorted));
    expect(replies(sorted).length).toBe(sorted.length / 4);
    const mixed = shuffled(sorted);
    expect(replies(mixed)).toEqual(byKey(mixed));
    // Sorted but for one reply seen again after others: still counted once, where first seen.
    const again = [...sorted, sorted[0]!];
    expect(replies(again)).toEqual(byKey(again));
  });

  it('reliabilityDiagrams: each step pools the rows of its condition over the target languages, in row order', () => {
    const definition = (rows: readonly PtrueRow[]) => {
      const benchmarks = [...new Set(rows.map((r) => r.benchmark))].sort();
      return benchmarks.flatMap((benchmark) => {
        const mine = rows.filter((r) => r.benchmark === benchmark && r.p_true !== null);
        const targets = [...new Set(mine.map((r) => r.q))].filter((l) => l !== 'en');
        return PATH_STEPS.map((setting, step) => {
          const conditions = (step === 0 ? ['en'] : targets).map((t) => stepCondition(step, t, 'en'));
          const pairs = mine.filter((r) => conditions.some((c) => c.q === r.q && c.r === r.r && c.v === r.v)).map((r) => ({ p: r.p_true!, y: r.correct }));
          return { benchmark, setting, n: pairs.length, bins: reliabilityBins(pairs) };
        });
      });
    };
    for (const rows of [manyRows(), shuffled(manyRows())]) {
      const made = reliabilityDiagrams(rows);
      expect(made).toEqual(definition(rows));
      expect(made.every((d) => d.n > 0)).toBe(true);
    }
  });

  it('hasStrata: every row has a stratum and there are at least two', () => {
    const rows = manyRows();
    expect(hasStrata(rows.filter((r) => r.benchmark === 'lsqa'))).toBe(true);
    expect(hasStrata(rows.filter((r) => r.benchmark === 'mmmlu'))).toBe(false);
    expect(hasStrata(rows)).toBe(false);
    expect(hasStrata(rows.filter((r) => r.stratum === 's1'))).toBe(false);
    expect(hasStrata([])).toBe(false);
  });
});

describe('result files', () => {
  const rows: PtrueRow[] = [];
  for (const model of ['a', 'b']) {
    for (const q of ['en', 'ko']) {
      for (const r of ['en', 'ko']) {
        for (const v of ['en', 'ko']) {
          for (let i = 0; i < 6; i++) rows.push(row({ model, q, r, v, base_item: `i${i}`, correct: (i + (model === 'a' ? 0 : 1)) % 2 === 0, p_true: (i + 1) / 7, realised: r }));
        }
      }
    }
  }
  const results = analyzePtrueRows(rows, { draws: 20, seed: 3, simulated: true });
  const files = new Map(ptrueFiles(results, { campaign: 'demo' }));

  it('writes every table as CSV with a header, undefined values empty', () => {
    expect([...files.keys()]).toEqual(expect.arrayContaining(['cells.csv', 'regimes.csv', 'axes.csv', 'qr.csv', 'accuracy_shares.csv', 'configuration_shares.csv', 'rank_changes.csv', 'rank_reference.csv', 'matching_effects.csv', 'reliability.csv', 'restricted_cells.csv', 'summary.md', 'report.html']));
    const cells = files.get('cells.csv')!.split('\r\n');
    expect(cells[0]).toBe('benchmark,model,q,r,v,n,invalid,accuracy,mean_confidence,brier,ece,auroc');
    expect(cells).toHaveLength(1 + 2 * 8 + 1);
    expect(files.get('reliability.csv')!.split('\r\n')[0]).toBe('benchmark,setting,bin,lo,hi,n,confidence,accuracy');
  });

  it('labels simulated results and draws reliability diagrams per setting and Q × R heat maps', () => {
    expect(files.get('summary.md')).toContain('**SIMULATED**');
    const html = files.get('report.html')!;
    expect(html).toContain('SIMULATED');
    // Four settings of the path for the one benchmark.
    expect(html.match(/<svg id="rel-b-/g)).toHaveLength(4);
    // Three heat maps of 2 × 2 cells.
    expect(html.match(/class="hm-cell/g)).toHaveLength(3 * 4);
    expect(html).not.toMatch(/<script src=|https?:\/\//);
  });

  it('heads report.html with the shared shell: campaign, models, design and the spend against the cap', () => {
    const html = new Map(ptrueFiles(results, { campaign: 'demo', spend: { spentUsd: 0.42, capUsd: 5 } })).get('report.html')!;
    expect(html).toContain('<h1>P(True): demo <span class="badge">SIMULATED</span></h1>');
    expect(html).toContain('<dt>Spend</dt><dd>$0.42 of the $5 cap (8.4 %)</dd>');
    expect(html).toContain('<dt>Models</dt><dd>a, b</dd>');
    expect(html).toContain('<dt>Verifier languages</dt><dd>en, ko</dd>');
    expect(html).toContain('<meta http-equiv="Content-Security-Policy"');
    expectCsvLinkUnderEveryTable(html, 5);
  });
});
