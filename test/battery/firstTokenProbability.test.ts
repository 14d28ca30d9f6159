import { describe, expect, it } from 'vitest';
import { firstTokenProbability, readFirstTokenProbability } from '../../lib/battery/readers/index.js';
import type { ReplyView } from '../../lib/battery/types.js';

const SETS = { true: ['True', ' True', 'true'], false: ['False', ' False', 'false'] };
const lp = (logprob: number, exact = true) => ({ logprob, exact });
const reply = (logprobs: ReplyView['logprobs']): ReplyView => ({ text: 'True', attempt: 1, logprobs });

describe('first-token P(True)', () => {
  it('normalises the largest True variant against the largest False variant', () => {
    // max True = ln 0.6 (" True"), max False = ln 0.2 ("False") → 0.6 / 0.8
    const r = firstTokenProbability({ True: lp(Math.log(0.1)), ' True': lp(Math.log(0.6)), False: lp(Math.log(0.2)), ' False': lp(Math.log(0.05)), Hmm: lp(Math.log(0.05)) }, SETS);
    expect(r).toMatchObject({ ok: true, trueToken: ' True', falseToken: 'False', bound: 'exact' });
    if (r.ok) expect(r.p).toBeCloseTo(0.75, 12);
  });

  it('is the max, not the sum, of the variants', () => {
    const r = firstTokenProbability({ True: lp(Math.log(0.3)), true: lp(Math.log(0.3)), False: lp(Math.log(0.4)) }, SETS);
    if (!r.ok) throw new Error(r.reason);
    expect(r.p).toBeCloseTo(0.3 / 0.7, 12);
  });

  it('gives 0 and 1 at the extremes without overflow', () => {
    const high = firstTokenProbability({ True: lp(0), False: lp(-1000) }, SETS);
    const low = firstTokenProbability({ True: lp(-1000), False: lp(0) }, SETS);
    const none = firstTokenProbability({ True: lp(Number.NEGATIVE_INFINITY), False: lp(-3) }, SETS);
    expect(high.ok && high.p).toBe(1);
    expect(low.ok && low.p).toBe(0);
    expect(none.ok && none.p).toBe(0);
  });

  it('is invalid when a side or the logprobs are missing', () => {
    expect(firstTokenProbability(null, SETS)).toEqual({ ok: false, reason: 'no-logprobs' });
    expect(firstTokenProbability({}, SETS)).toEqual({ ok: false, reason: 'no-logprobs' });
    expect(firstTokenProbability({ False: lp(-0.1) }, SETS)).toEqual({ ok: false, reason: 'no-true-candidate' });
    expect(firstTokenProbability({ True: lp(-0.1), Yes: lp(-2) }, SETS)).toEqual({ ok: false, reason: 'no-false-candidate' });
  });

  it('marks a value resting on a top-k bound as a lower or upper bound, and refuses two bounds', () => {
    // False outside the top-k: its logprob ≤ −3.2, so P(True) ≥ the computed value.
    const lower = firstTokenProbability({ True: lp(-0.31), False: lp(-3.2, false) }, SETS);
    expect(lower).toMatchObject({ ok: true, bound: 'lower' });
    const upper = firstTokenProbability({ True: lp(-3.2, false), False: lp(-0.31) }, SETS);
    expect(upper).toMatchObject({ ok: true, bound: 'upper' });
    expect(firstTokenProbability({ True: lp(-3.2, false), False: lp(-3.2, false) }, SETS)).toEqual({ ok: false, reason: 'both-bounded' });
  });

  it('counts a side exact when its largest variant is exact, even if another variant is bounded', () => {
    const r = firstTokenProbability({ True: lp(-0.2), ' True': lp(-4, false), False: lp(-1.9) }, SETS);
    expect(r).toMatchObject({ ok: true, trueToken: 'True', bound: 'exact' });
    // An exact entry wins a tie with a bound.
    expect(firstTokenProbability({ True: lp(-2, false), ' True': lp(-2), False: lp(-1) }, SETS)).toMatchObject({ ok: true, trueToken: ' True', bound: 'exact' });
  });

  it('refuses a surface form listed on both sides', () => {
    expect(() => firstTokenProbability({ T: lp(-1) }, { true: ['T'], false: ['T'] })).toThrow(/both a True and a False variant/);
  });
});

describe('the ptrue reading', () => {
  it('stores P(True) as the value, True/False as the label and the evidence as JSON', () => {
    const d = readFirstTokenProbability(reply({ True: lp(-0.105), False: lp(-2.354) }), SETS);
    expect(d.reader).toBe('ptrue');
    expect(d.label).toBe('True');
    expect(d.value).toBeCloseTo(1 / (1 + Math.exp(-2.354 + 0.105)), 12);
    expect(JSON.parse(d.raw!)).toEqual({ p_true: d.value, true: ['True', -0.105], false: ['False', -2.354], bound: 'exact' });
    expect(readFirstTokenProbability(reply({ True: lp(-2), False: lp(-0.2) }), SETS).label).toBe('False');
  });

  it('is invalid with a null value when a candidate is missing, and records label prefixes', () => {
    expect(readFirstTokenProbability(reply({ True: lp(-0.1) }), SETS)).toEqual({ reader: 'ptrue', label: 'invalid', value: null, raw: '{"invalid":"no-false-candidate"}' });
    const prefix = readFirstTokenProbability(reply({ V: lp(-0.5), F: lp(-1.5) }), { true: ['V'], false: ['F'] }, { reader: 'ptrue', prefixOnly: ['V'] });
    expect(JSON.parse(prefix.raw!).prefix).toEqual(['V']);
  });
});
