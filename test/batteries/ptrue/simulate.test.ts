import { describe, expect, it } from 'vitest';
import { ptrue as ptrueBattery } from '../../../lib/batteries/ptrue/index.js';
import { expandGenerate, expandVerify } from '../../../lib/batteries/ptrue/expand.js';
import { firstTokenProbability } from '../../../lib/battery/readers/firstTokenProbability.js';
import { readGenerate } from '../../../lib/batteries/ptrue/read/readers.js';
import {
  confidenceTruth,
  parsePtrueSimulation,
  ptrueSimulationSchema,
  ptrueSimulator,
  replyTruth,
  sideLogprobs,
  SimulatedPtrueJudge,
  SimulatedPtrueRespondent,
} from '../../../lib/batteries/ptrue/simulate/index.js';
import { CampaignFileError } from '../../../lib/errors.js';
import { syntheticItems, testPlan } from './fixtures.js';

const where = { file: 'demo.yaml', path: 'models[0].simulation' };

describe('simulated P(True) models', () => {
  it('spreads each side over its variants so that max True / max False is exactly the drawn P(True)', () => {
    const lp = { ...sideLogprobs(['True', ' True', 'true'], Math.log(0.7)), ...sideLogprobs(['False', ' False'], Math.log(0.3)) };
    const r = firstTokenProbability(lp, { true: ['True', ' True', 'true'], false: ['False', ' False'] });
    expect(r.ok && r.p).toBeCloseTo(0.7, 12);
    expect(lp[' True']!.logprob).toBeLessThan(lp.True!.logprob);
  });

  it('answers verify items with the candidates asked for, finite even at extreme P(True)', async () => {
    const plan = await testPlan(syntheticItems(2), ['m']);
    const cfg = ptrueSimulationSchema.parse({ discrimination: 10, noise: 0.01, verifier_bias: { en: 10 } });
    const model = new SimulatedPtrueRespondent({ seed: 1, modelId: 'm', config: cfg });
    const ctx = { campaign: 'c', subject: 'm', answerer: { id: 'm', settings: {} }, language: 'en' };
    const g = expandGenerate(plan, ctx)[0]!;
    const text = model.reply(g, { messages: g.messages, settings: g.settings, item: g }).text;
    const v = expandVerify(plan, ctx, [g], () => ({ text, attempt: 1, logprobs: null }))[0]!;
    const out = model.reply(v, { messages: v.messages, settings: v.settings, item: v });
    expect(Object.keys(out.logprobs!).sort()).toEqual(Object.keys(v.settings.candidate_logprobs!.tokens).sort());
    expect(Object.values(out.logprobs!).every((x) => Number.isFinite(x.logprob) && x.exact)).toBe(true);
    expect(JSON.parse(JSON.stringify(out.logprobs))).toEqual(out.logprobs);
    // The reply is read as its truth says: correct option ↔ high P(True).
    const truth = replyTruth(cfg, { seed: 1, model: 'm', baseItem: g.factors.base_item, q: 'en', r: 'en' }, g.factors.kind, null);
    expect(readGenerate(plan.identify, g, { text, attempt: 1, logprobs: null })[0]!.label).toBe(truth.unextractable ? 'unextractable' : truth.correct ? 'correct' : 'incorrect');
    expect(out.text).toBe(truth.correct ? 'True' : 'False');
  });

  it('refuses a judge item, and the judge refuses a generate item', async () => {
    const plan = await testPlan(syntheticItems(2), ['m']);
    const g = expandGenerate(plan, { campaign: 'c', subject: 'm', answerer: { id: 'm', settings: {} }, language: 'en' })[0]!;
    const judge = new SimulatedPtrueJudge(1, 'j', { error_rate: 0, malformed_rate: 0, latency_ms: 0, transient_error_rate: 0 });
    expect(() => judge.reply(g)).toThrow(/the judge answers judge items, not generate/);
    expect(() => new SimulatedPtrueRespondent({ seed: 1, modelId: 'm', config: ptrueSimulationSchema.parse({}) }).reply({ ...g, phase: 'judge' }, { messages: [], settings: {} })).toThrow(/not judge/);
  });

  it('builds the judge for the judge role and the respondent otherwise; a bad block names file and path', () => {
    expect(ptrueSimulator({ id: 'j', model: 'j', role: 'judge', simulation: { malformed_rate: 0.1 }, where }, { seed: 1 })).toBeInstanceOf(SimulatedPtrueJudge);
    expect(ptrueSimulator({ id: 'm', model: 'm', role: 'subject', simulation: {}, where }, { seed: 1 })).toBeInstanceOf(SimulatedPtrueRespondent);
    try {
      parsePtrueSimulation({ accuracy: 1.5, colour: 'red' }, where);
      expect.unreachable();
    } catch (err) {
      expect(err).toBeInstanceOf(CampaignFileError);
      expect((err as CampaignFileError).issues.map((i) => i.path)).toEqual(['models[0].simulation.accuracy', 'models[0].simulation.colour']);
    }
  });

  it('has population truths that match their definitions', () => {
    // No discrimination: AUROC ½; zero bias and κ: P(True) ~ σ(N(0, 1)), mean ½ by symmetry.
    const flat = confidenceTruth({ accuracy: 0.5, bias: 0, kappa: 0, noise: 1 });
    expect(flat.auroc).toBeCloseTo(0.5, 6);
    expect(flat.meanConfidence).toBeCloseTo(0.5, 6);
    // A tiny noise puts every correct answer at σ(b + κ): ECE = |acc − conf| over the two spikes.
    const spikes = confidenceTruth({ accuracy: 0.6, bias: 0, kappa: 1, noise: 1e-4 });
    const hi = 1 / (1 + Math.exp(-1));
    expect(spikes.ece).toBeCloseTo(0.6 * (1 - hi) + 0.4 * (1 - hi), 4);
    expect(spikes.auroc).toBeCloseTo(1, 6);
  });
});

describe('the battery object (draft)', () => {
  it('declares its phases, an optional judge, its data file, and a vocabulary covering what its readers write', () => {
    expect(ptrueBattery.phaseCatalog.map((p) => p.name)).toEqual(['generate', 'verify', 'judge']);
    expect(ptrueBattery.roles.judge!.required).toBe(false);
    expect(ptrueBattery.dataFiles(ptrueBattery.design.parse({ items: 'items.csv' }))).toEqual([{ field: 'design.items', file: 'items.csv' }]);
    expect(ptrueBattery.vocabulary.ptrue).toEqual(['True', 'False', 'invalid']);
    expect(ptrueBattery.vocabulary['judge:*']).toEqual(['correct', 'incorrect', 'malformed']);
    expect(ptrueBattery.vocabulary.language).toEqual(expect.arrayContaining(['en', 'zh', 'fr', 'ja', 'ko', 'hi', 'und']));
    expect(ptrueBattery.prompts.factors.map((c) => c.name)).toContain('verifier_language');
  });
});
