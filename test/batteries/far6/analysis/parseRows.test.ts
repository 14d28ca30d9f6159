import { describe, expect, it } from 'vitest';
import { CampaignFileError } from '../../../../lib/errors.js';
import { labelKey, parseItemShareRows, parseLabelMaps } from '../../../../lib/batteries/far6/analysis/parseRows.js';

const athenaRow = {
  model: 'alpha', language: 'en', reader: 'rule', form: 'plain', constraint: 'label', story: 's1', story_group: 'violation',
  concept_pair: 'wr', construction: 'adj', named: 'notP', option_order: '1', prompt_key: 'K1',
  n_replies: '3', n_p: '1', n_notp: '1', n_both: '0', n_none: '1', n_invalid: '0',
};

describe('parseItemShareRows', () => {
  it('reads Athena strings and DuckDB bigints as numbers and attaches second_listed', () => {
    const maps = new Map([[labelKey('alpha', 'en', 'K1'), 'P' as const]]);
    const [row] = parseItemShareRows([athenaRow], maps);
    expect(row).toMatchObject({ option_order: 1, n_replies: 3, n_p: 1, n_none: 1, second_listed: 'P' });
    const [big] = parseItemShareRows([{ ...athenaRow, constraint: 'yesno', n_replies: 3n, n_p: 1n }], maps);
    expect(big).toMatchObject({ n_replies: 3, n_p: 1, second_listed: null });
  });

  it('names the row and column of a value outside the contract', () => {
    try {
      parseItemShareRows([athenaRow, { ...athenaRow, named: 'yes', n_p: '-1' }]);
      expect.unreachable();
    } catch (err) {
      expect(err).toBeInstanceOf(CampaignFileError);
      const e = err as CampaignFileError;
      expect(e.issues.map((i) => i.path)).toEqual(['rows[1].named', 'rows[1].n_p', 'rows[1].n_replies']);
      expect(e.message).toContain('item_shares.sql: rows[1].named: expected one of P, notP, got "yes"');
    }
  });

  it('refuses a row whose labels do not add up (a label outside the codebook)', () => {
    expect(() => parseItemShareRows([{ ...athenaRow, n_none: '0' }])).toThrow(/rows\[0\]\.n_replies: expected .* \(2\), got 3/);
  });
});

describe('parseLabelMaps', () => {
  const row = (letters: unknown, prompt_key = 'K1') => ({ model: 'alpha', language: 'en', prompt_key, reading_map_json: JSON.stringify({ kind: 'letter', tokens: {}, letters }) });

  it('takes the proposition of the second letter listed', () => {
    const maps = parseLabelMaps([
      row([{ letter: 'Z', proposition: 'P' }, { letter: 'W', proposition: 'notP' }]),
      row([{ letter: 'W', proposition: 'notP' }, { letter: 'Z', proposition: 'P' }], 'K2'),
    ]);
    expect(maps.get(labelKey('alpha', 'en', 'K1'))).toBe('notP');
    expect(maps.get(labelKey('alpha', 'en', 'K2'))).toBe('P');
  });

  it('refuses maps that are not one letter per side', () => {
    expect(() => parseLabelMaps([row([{ letter: 'Z', proposition: 'P' }])])).toThrow(/rows\[0\]\.reading_map_json\.letters: expected the two letters/);
    expect(() => parseLabelMaps([row([{ letter: 'Z', proposition: 'P' }, { letter: 'W', proposition: 'P' }])])).toThrow(/one letter for P and one for notP/);
    expect(() => parseLabelMaps([{ ...row([]), reading_map_json: '{not json' }])).toThrow(/rows\[0\]\.reading_map_json: expected JSON/);
  });
});
