import { describe, expect, it } from 'vitest';
import { CampaignFileError } from '../../lib/errors.js';
import { RowReader } from '../../lib/query/rowReader.js';

describe('RowReader.readRows', () => {
  it('reads every row with one reader and returns what the callback built', () => {
    const rows = [{ n: 1 }, { n: '2' }];
    expect(RowReader.readRows('q.sql', rows, (rd, r, i) => rd.number(r, i, 'n') * 10)).toEqual([10, 20]);
  });

  it('reports the broken values of all rows at once, naming the query file', () => {
    const rows = [{ n: 'x' }, { n: 3 }, { n: null }];
    let caught: unknown;
    try {
      RowReader.readRows('q.sql', rows, (rd, r, i) => rd.number(r, i, 'n'));
    } catch (err) {
      caught = err;
    }
    expect(caught).toBeInstanceOf(CampaignFileError);
    expect((caught as CampaignFileError).issues.map((x) => x.path)).toEqual(['rows[0].n', 'rows[2].n']);
    expect((caught as Error).message).toContain('q.sql');
  });
});
