/**
 * Each built-in battery declares which replies stand behind a cell of its result tables; the
 * viewer uses the declaration and names no battery. Rows are shaped as the demos' CSVs have them.
 */
import { describe, expect, it } from 'vitest';
import { allBatteries, batteryNamed } from '../../lib/batteries/index.js';
import type { BatteryView } from '../../lib/battery/types.js';

const view = (name: string): BatteryView => batteryNamed(name)!.view!;

describe('battery view declarations', () => {
  it('every built-in battery declares one', () => {
    expect(allBatteries().filter((b) => !b.view).map((b) => b.name)).toEqual([]);
  });

  it('P(True): a Q×R×V cell is the verify replies of that configuration; compliance is about the responses', () => {
    const row = { benchmark: 'lsqa-demo', model: 'alpha', q: 'en', r: 'fr', v: 'ja', n: '12', accuracy: '0.66' };
    expect(view('ptrue').cellReplies('cells.csv', row, 'accuracy')).toEqual({
      phases: ['verify'],
      model: 'alpha',
      factors: { benchmark: 'lsqa-demo', question_language: 'en', response_language: 'fr', verifier_language: 'ja' },
    });
    expect(view('ptrue').cellReplies('compliance.csv', { benchmark: 'b', r: 'hi', replies: '40' }, 'share')).toEqual({ phases: ['generate'], factors: { benchmark: 'b', response_language: 'hi' } });
    // A regime pools every cell.
    expect(view('ptrue').cellReplies('regimes.csv', { benchmark: 'b', regime: 'matched' }, 'n')).toBeUndefined();
  });

  it('FAR-6: a story, a readout and a verdict category narrow the generate replies', () => {
    const story = { model: 'alpha', language: 'de', readout: 'alternative/free/judge:judge', story: 's02-shared-lunch', story_group: 'acceptable', s: '0.08' };
    expect(view('far6').cellReplies('story_scores.csv', story, 's')).toEqual({
      phases: ['generate'],
      model: 'alpha',
      language: 'de',
      factors: { story: 's02-shared-lunch', story_group: 'acceptable', form: 'alternative', constraint: 'free' },
      reader: 'judge:judge',
    });
    const cell = { model: 'alpha', language: 'de', form: 'alternative', constraint: 'label', reader: 'rule', n_p: '40' };
    expect(view('far6').cellReplies('cell_summary.csv', cell, 'n_p')).toMatchObject({ reader: 'rule', label: 'P' });
    expect(view('far6').cellReplies('cell_summary.csv', cell, 'replies')).not.toHaveProperty('label');
    const disagreement = { form: 'alternative', constraint: 'label', reader_a: 'judge:judge', reader_b: 'rule', model: 'alpha', language: 'en', n_disagree: '1' };
    expect(view('far6').cellReplies('reply_disagreement.csv', disagreement, 'n_disagree')).toMatchObject({ disagree: true, model: 'alpha', language: 'en' });
    expect(view('far6').cellReplies('readout_convergence.csv', { readout_a: 'x', readout_b: 'y', median_r: '0.9' }, 'median_r')).toBeUndefined();
  });

  it('X-Value: the strategy picks the phases, a fine-grained checkpoint its step-3 items', () => {
    const cell = { model: 'alpha', strategy: 'rubric', language: 'ar', category: 'P&G', n: '2' };
    expect(view('xvalue').cellReplies('cells.csv', cell, 'accuracy')).toEqual({ phases: ['step1', 'step2', 'step3'], model: 'alpha', language: 'ar', factors: { category: 'P&G' } });
    expect(view('xvalue').cellReplies('checkpoints.csv', { model: 'beta', strategy: 'rubric', target: 'F' }, 'f1')).toEqual({ phases: ['step3'], model: 'beta', factors: { checkpoint: 'F' } });
    expect(view('xvalue').cellReplies('checkpoints.csv', { model: 'beta', strategy: 'rubric', target: 'B' }, 'f1')).toEqual({ phases: ['step2'], model: 'beta' });
    expect(view('xvalue').cellReplies('step1_agreement.csv', { model: 'beta', language: 'zh', facet: 'scope' }, 'agreement')).toMatchObject({ phases: ['step1'] });
  });
});
