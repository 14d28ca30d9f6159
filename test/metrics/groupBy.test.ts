import { describe, expect, it } from 'vitest';
import { groupBy } from '../../lib/metrics/groupBy.js';

describe('groupBy', () => {
  it('keeps the groups and the rows within each in first-seen order', () => {
    // Prepare
    const rows = [
      { m: 'b', x: 1 },
      { m: 'a', x: 2 },
      { m: 'b', x: 3 },
      { m: 'c', x: 4 },
      { m: 'a', x: 5 },
    ];
    // Act
    const groups = groupBy(rows, (r) => r.m);
    // Assess
    expect([...groups.keys()]).toEqual(['b', 'a', 'c']);
    expect(groups.get('a')?.map((r) => r.x)).toEqual([2, 5]);
    expect(groups.get('b')?.map((r) => r.x)).toEqual([1, 3]);
    expect(groups.get('b')?.[0]).toBe(rows[0]);
  });

  it('takes any iterable and gives an empty map for no rows', () => {
    expect(groupBy(new Set(['x1', 'y1', 'x2']), (s) => s[0]!)).toEqual(new Map([['x', ['x1', 'x2']], ['y', ['y1']]]));
    expect(groupBy([], () => 'k').size).toBe(0);
  });
});
