import { describe, expect, it } from 'vitest';
import { CampaignFileError } from '../../../lib/errors.js';
import { analyzeXvalueRows, buildRows } from '../../../lib/batteries/xvalue/analysis/index.js';
import {
  UNREADABLE_REPLY,
  correctProbability,
  parseXvalueSimulation,
  profileSeedOf,
  trueRates,
  xvalueModelTruth,
  xvalueSimulationTruth,
  xvalueSimulator,
} from '../../../lib/batteries/xvalue/simulate/index.js';
import type { XvalueSimulationInput ,
  SimulatedXvalueJudge} from '../../../lib/batteries/xvalue/simulate/index.js';
import { CATEGORIES, LANGUAGES, STRATEGIES } from '../../../lib/batteries/xvalue/types.js';
import type { Language, QaPair, Strategy, XvalueItem } from '../../../lib/batteries/xvalue/types.js';
import type { SimulatedModel } from '../../../lib/providers/simulated/types.js';
import { chainSqlRows, examplePairs, runChain } from './fixtures.js';

const where = { file: 'demo.yaml', path: 'models[alpha].simulation' };
const req = { messages: [], settings: {} };

function judge(id: string, simulation: XvalueSimulationInput, seed = 11): SimulatedModel {
  return xvalueSimulator({ id, model: id, role: 'subject', simulation, where }, { seed });
}

/** Every enabled phase of every language of `pairs` for one simulated model, as item-level rows. */
function simulate(pairs: readonly QaPair[], model: SimulatedModel, id: string, strategies: readonly Strategy[] = STRATEGIES) {
  const languages = [...new Set(pairs.map((p) => p.language))];
  const all = languages.map((l) => runChain(pairs, l, id, (item) => model.reply(item, { ...req, item }).text, strategies));
  const items = all.flatMap((c) => c.items);
  const records = all.flatMap((c) => c.records);
  const { pairs: pairRows, facets } = chainSqlRows(items, records);
  return { rows: buildRows(pairRows, facets), records };
}

describe('the simulated X-Value judge', () => {
  it('checks its simulation block, naming the file and path', () => {
    expect(() => parseXvalueSimulation({ defonly: { fnr: 2, fpr: 0 } }, where)).toThrow(CampaignFileError);
    expect(() => parseXvalueSimulation({ defonly: { fnr: 2, fpr: 0 } }, where)).toThrow(/demo\.yaml: models\[alpha\]\.simulation\.defonly\.fnr/);
    expect(() => parseXvalueSimulation({ language_offsets: { xx: 1 } }, where)).toThrow(/language_offsets/);
    expect(parseXvalueSimulation(undefined, where)).toMatchObject({ defonly: { fnr: 0.42, fpr: 0.07 }, rubric: { fnr: 0.15, fpr: 0.3 }, reply_style: 'mixed' });
  });

  it('answers the same item the same way every time, and differently across models', async () => {
    const pairs = (await examplePairs()).filter((p) => p.language === 'es');
    const texts = (id: string) => runChain(pairs, 'es', id, (item) => judge(id, {}).reply(item, { ...req, item }).text).records.map((r) => r.text);
    expect(texts('alpha')).toEqual(texts('alpha'));
    expect(texts('alpha')).not.toEqual(texts('beta'));
  });

  it('writes replies the readers parse in all 14 languages and both styles, matching its own decisions', async () => {
    // Prepare: the example pairs copied into every language.
    const base = await examplePairs();
    const pairs = LANGUAGES.flatMap((language) => base.filter((p) => p.language === 'en').map((p) => ({ ...p, id: `${p.id}-${language}`, language })));
    for (const reply_style of ['json', 'lines'] as const) {
      const model = judge('gamma', { invalid_rate: 0, reply_style });
      const sim = model as SimulatedXvalueJudge;
      // Act
      const { rows, records } = simulate(pairs, model, 'gamma');
      // Assess: nothing unreadable, and every verdict is the one the judge decided.
      for (const r of records) for (const d of r.readings) expect(d.label, `${reply_style} ${r.item.language} ${r.item.phase} ${d.facet}: ${r.text}`).not.toBe('invalid');
      for (const v of rows.verdicts) {
        const item = records.find((r) => r.item.factors.qa_id === v.qa_id && r.item.phase === (v.strategy === 'defonly' ? 'defonly' : 'step3'))?.item as XvalueItem;
        expect(v.predicted, `${reply_style} ${v.qa_id} ${v.strategy}`).toBe(sim.decision(item, v.strategy));
      }
    }
  });

  it('makes a share invalid_rate of replies unreadable, and those read invalid', async () => {
    const pairs = await examplePairs();
    const { records } = simulate(pairs, judge('delta', { invalid_rate: 0.25 }), 'delta', ['defonly']);
    const unreadable = records.filter((r) => r.text === UNREADABLE_REPLY);
    // 70 replies, p = 0.25: SE = √(70 · 0.25 · 0.75) ≈ 3.6 replies; allow 4 SE.
    expect(Math.abs(unreadable.length - 17.5)).toBeLessThan(4 * 3.63);
    for (const r of unreadable) expect(r.readings[0]?.label).toBe('invalid');
  });

  it('reports its truth per strategy × language × category for the simulated models only', async () => {
    const pairs = await examplePairs();
    const truth = xvalueSimulationTruth(
      [
        { id: 'alpha', provider: 'simulated', model: 'alpha', settings: {}, simulation: { profile_seed: 3 } },
        { id: 'real', provider: 'openai', model: 'gpt', settings: {} },
      ],
      pairs,
    );
    expect(truth.models.map((m) => m.model)).toEqual(['alpha']);
    expect(truth.models[0]?.rates).toHaveLength(2 * 5 * 7);
    expect(truth.models[0]?.expected.filter((e) => e.group === 'overall').map((e) => e.strategy)).toEqual(['defonly', 'rubric']);
  });
});

/** The judge profile both recovery checks simulate: error rates far apart, languages and categories spread. */
const RECOVERY_PROFILE = {
  profile_seed: 42,
  defonly: { fnr: 0.4, fpr: 0.08 },
  rubric: { fnr: 0.12, fpr: 0.32 },
  language_offsets: { en: -0.6, zh: 0.2, es: 0, ar: 0.7, ja: 0.4 },
  category_spread: 0.4,
} satisfies Omit<XvalueSimulationInput, 'invalid_rate'>;

describe('recovering the simulated truth through expand, simulate, read and the estimators', () => {
  // 150 replicate models share one profile (the same true rates) and draw independently: pooled,
  // every strategy has 150 × 70 = 10 500 verdicts, every language 2 100, every category 1 500.
  const REPLICATES = 150;
  const CONFIG: XvalueSimulationInput = { ...RECOVERY_PROFILE, invalid_rate: 0 };
  const config = parseXvalueSimulation(CONFIG, where);
  const seed = profileSeedOf(config, 'r000');

  /**
   * The expected accuracy of a group and its standard error: each verdict is right with the true
   * probability of its pair, independently, so the pooled count has variance Σ p(1 − p).
   */
  function truthOf(pairs: readonly QaPair[], strategy: Strategy): { mean: number; se: number } {
    let sum = 0;
    let variance = 0;
    for (const p of pairs) {
      const q = correctProbability(trueRates(config, seed, strategy, p.language, p.category), p.annotation.overall);
      sum += q;
      variance += q * (1 - q);
    }
    const n = pairs.length * REPLICATES;
    return { mean: sum / pairs.length, se: Math.sqrt(variance * REPLICATES) / n };
  }

  it('recovers Acc0, Acc1 and accuracy per language and category within 4 standard errors, for both strategies', async () => {
    // Prepare
    const pairs = await examplePairs();
    const verdicts = [];
    const step1 = [];
    for (let r = 0; r < REPLICATES; r++) {
      const id = `r${String(r).padStart(3, '0')}`;
      const { rows } = simulate(pairs, judge(id, CONFIG), id);
      // Pooled under one name: the analysis then counts every replicate's verdicts together.
      verdicts.push(...rows.verdicts.map((v) => ({ ...v, model: 'pool' })));
      step1.push(...rows.step1.map((s) => ({ ...s, model: 'pool' })));
    }
    // Act
    const results = analyzeXvalueRows({ verdicts, checkpoints: [], step1 });
    // Assess
    const checks: { what: string; got: number | null; mean: number; se: number }[] = [];
    for (const strategy of STRATEGIES) {
      const overall = results.overall.find((o) => o.strategy === strategy);
      expect(overall?.n).toBe(pairs.length * REPLICATES);
      expect(overall?.abstained).toBe(0);
      const neg = pairs.filter((p) => p.annotation.overall === 'Pass');
      const pos = pairs.filter((p) => p.annotation.overall === 'Fail');
      checks.push({ what: `${strategy} Acc`, got: overall?.accuracy ?? null, ...truthOf(pairs, strategy) });
      checks.push({ what: `${strategy} Acc0`, got: overall?.accuracy_negative ?? null, ...truthOf(neg, strategy) });
      checks.push({ what: `${strategy} Acc1`, got: overall?.accuracy_positive ?? null, ...truthOf(pos, strategy) });
      for (const language of new Set(pairs.map((p) => p.language))) {
        const row = results.byLanguage.find((l) => l.strategy === strategy && l.language === language);
        checks.push({ what: `${strategy} ${language}`, got: row?.accuracy ?? null, ...truthOf(pairs.filter((p) => p.language === language), strategy) });
      }
      for (const category of CATEGORIES) {
        const row = results.byCategory.find((c) => c.strategy === strategy && c.category === category);
        checks.push({ what: `${strategy} ${category}`, got: row?.accuracy ?? null, ...truthOf(pairs.filter((p) => p.category === category), strategy) });
      }
    }
    for (const c of checks) {
      expect(c.got, c.what).not.toBeNull();
      expect(Math.abs((c.got as number) - c.mean), `${c.what}: got ${c.got}, truth ${c.mean.toFixed(4)} ± ${c.se.toFixed(4)}`).toBeLessThan(4 * c.se);
    }
    // The truth the check recovers is not flat: the strategies err in opposite directions (Acc0 −
    // Acc1 > 0 for def-only, < 0 for the rubric) and languages differ by many standard errors.
    const gap = (s: Strategy) => truthOf(pairs.filter((p) => p.annotation.overall === 'Pass'), s).mean - truthOf(pairs.filter((p) => p.annotation.overall === 'Fail'), s).mean;
    expect(gap('defonly')).toBeGreaterThan(0.2);
    expect(gap('rubric')).toBeLessThan(-0.1);
    const perLanguage = ['en', 'ar'].map((l) => truthOf(pairs.filter((p) => p.language === (l as Language)), 'defonly'));
    expect((perLanguage[0]?.mean ?? 0) - (perLanguage[1]?.mean ?? 0)).toBeGreaterThan(8 * (perLanguage[0]?.se ?? 1));
    // Step 1 names the annotated nature with probability 0.8 (default): 10 500 readings, SE ≈ 0.0039.
    const nature = results.step1Agreement.find((s) => s.language === 'all' && s.facet === 'nature');
    expect(Math.abs((nature?.agreement ?? 0) - 0.8)).toBeLessThan(4 * Math.sqrt((0.8 * 0.2) / (pairs.length * REPLICATES)));
  });
});

describe('simulation_truth.json describes the replies the simulator wrote, unreadable ones included', () => {
  // 100 replicate judges of one profile, 10 % of every phase's replies unreadable: per strategy
  // 7 000 verdicts pooled. The rubric verdict rests on six replies, so unreadable replies cost it
  // far more than the def-only verdict — the truth must count them, or the check cannot pass.
  const REPLICATES = 100;
  const CONFIG: XvalueSimulationInput = { ...RECOVERY_PROFILE, invalid_rate: 0.1 };
  const config = parseXvalueSimulation(CONFIG, where);

  it('recovers accuracy, Acc0, Acc1, abstention and every language and category within 4 standard errors; the all-readable truth is far off', async () => {
    // Prepare
    const pairs = await examplePairs();
    const verdicts = [];
    for (let r = 0; r < REPLICATES; r++) {
      const id = `i${String(r).padStart(3, '0')}`;
      verdicts.push(...simulate(pairs, judge(id, CONFIG), id).rows.verdicts.map((v) => ({ ...v, model: 'pool' })));
    }
    // Act: the analysis, and the truth as simulation_truth.json states it.
    const results = analyzeXvalueRows({ verdicts, checkpoints: [], step1: [] });
    const truthOf = (group: readonly QaPair[], strategy: Strategy) => {
      const e = xvalueModelTruth('i000', config, group).expected.find((x) => x.strategy === strategy && x.group === 'overall');
      const n = group.length * REPLICATES;
      return { mean: e?.accuracy ?? NaN, abstention: e?.abstention ?? NaN, se: Math.sqrt((e?.variance ?? NaN) * REPLICATES) / n };
    };
    // Assess
    const neg = pairs.filter((p) => p.annotation.overall === 'Pass');
    const pos = pairs.filter((p) => p.annotation.overall === 'Fail');
    const checks: { what: string; got: number | null | undefined; mean: number; se: number }[] = [];
    for (const strategy of STRATEGIES) {
      const overall = results.overall.find((o) => o.strategy === strategy);
      const all = truthOf(pairs, strategy);
      checks.push({ what: `${strategy} Acc`, got: overall?.accuracy, ...all });
      checks.push({ what: `${strategy} Acc0`, got: overall?.accuracy_negative, ...truthOf(neg, strategy) });
      checks.push({ what: `${strategy} Acc1`, got: overall?.accuracy_positive, ...truthOf(pos, strategy) });
      // Abstentions: a binomial share of the pooled verdicts.
      const n = pairs.length * REPLICATES;
      checks.push({ what: `${strategy} abstention`, got: (overall?.abstained ?? NaN) / n, mean: all.abstention, se: Math.sqrt((all.abstention * (1 - all.abstention)) / n) });
      for (const language of new Set(pairs.map((p) => p.language))) {
        const row = results.byLanguage.find((l) => l.strategy === strategy && l.language === language);
        checks.push({ what: `${strategy} ${language}`, got: row?.accuracy, ...truthOf(pairs.filter((p) => p.language === language), strategy) });
      }
      for (const category of CATEGORIES) {
        const row = results.byCategory.find((c) => c.strategy === strategy && c.category === category);
        checks.push({ what: `${strategy} ${category}`, got: row?.accuracy, ...truthOf(pairs.filter((p) => p.category === category), strategy) });
      }
    }
    for (const c of checks) {
      expect(typeof c.got, c.what).toBe('number');
      expect(Math.abs((c.got as number) - c.mean), `${c.what}: got ${c.got}, truth ${c.mean.toFixed(4)} ± ${c.se.toFixed(4)}`).toBeLessThan(4 * c.se);
    }
    // The truth without unreadable replies (what simulation_truth.json stated before it counted
    // them) misses the analysed rubric accuracy by far more than 4 standard errors.
    const readable = xvalueModelTruth('i000', parseXvalueSimulation({ ...CONFIG, invalid_rate: 0 }, where), pairs).expected.find((x) => x.strategy === 'rubric' && x.group === 'overall');
    const rubric = checks.find((c) => c.what === 'rubric Acc');
    expect(((readable?.accuracy ?? 0) - (rubric?.got as number)) / (rubric?.se ?? 1)).toBeGreaterThan(10);
  });

  it('states the invalid rate it counted, per model', async () => {
    const pairs = await examplePairs();
    const truth = xvalueSimulationTruth([{ id: 'alpha', provider: 'simulated', model: 'alpha', settings: {}, simulation: { invalid_rate: 0.05 } }], pairs);
    expect(truth.models[0]?.invalid_rate).toBe(0.05);
    const overall = truth.models[0]?.expected.find((e) => e.strategy === 'defonly' && e.group === 'overall');
    // Def-only: one reply, so exactly 5 % of its verdicts are expected invalid.
    expect(overall?.abstention).toBeCloseTo(0.05, 12);
  });
});
