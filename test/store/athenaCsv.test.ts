/**
 * Athena's result files (lib/store/athenaCsv.ts): read back exactly what the Athena stand-in writes
 * in Athena's format (every value quoted, NULL an empty unquoted field), commas, quotes and line
 * breaks inside values included; a file cut inside a quoted value is refused, naming the file.
 */
import { describe, expect, it } from 'vitest';
import { parseAthenaCsv } from '../../lib/store/athenaCsv.js';
import { athenaCsv } from '../helpers/athenaServer.js';

describe('parseAthenaCsv', () => {
  it('reads back every value, NULL apart from the empty string', () => {
    const columns = [{ name: 'item_id' }, { name: 'text' }, { name: 'n' }];
    const rows = [
      ['a', 'plain', '1'],
      ['b', 'with, comma and "quotes"', undefined],
      ['c', 'two\nlines\r\nand CRLF', '-2.5E-4'],
      ['d', '', '0'],
      [undefined, undefined, undefined],
    ];
    expect(parseAthenaCsv(athenaCsv(columns, rows))).toEqual([['item_id', 'text', 'n'], ...rows]);
    expect(parseAthenaCsv('"a","b"\n"x",')).toEqual([['a', 'b'], ['x', undefined]]);
    expect(parseAthenaCsv('')).toEqual([]);
  });

  it('refuses a file cut inside a quoted value, naming it', () => {
    expect(() => parseAthenaCsv('"a","b"\n"x","unfinished', 's3://b/athena-results/q-1.csv')).toThrow(/s3:\/\/b\/athena-results\/q-1\.csv: a quoted value opened in row 2 is never closed/);
  });
});
