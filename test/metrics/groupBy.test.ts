import { describe, expect, it } from 'vitest';
import { groupBy, groupByParts } from '../../lib/metrics/groupBy.js';

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

describe('groupByParts', () => {
  const rows = [
    { m: 'b', q: 'en', v: 'fr', x: 1 },
    { m: 'a', q: 'en', v: 'fr', x: 2 },
    { m: 'b', q: 'en', v: 'fr', x: 3 },
    { m: 'b', q: 'de', v: 'fr', x: 4 },
    { m: 'a', q: 'en', v: 'de', x: 5 },
    { m: 'a', q: 'en', v: 'fr', x: 6 },
  ];
  type Row = (typeof rows)[number];
  const parts = [(r: Row) => r.m, (r: Row) => r.q, (r: Row) => r.v];

  it('gives the groups, keys and order of groupBy over the joined key', () => {
    const byParts = groupByParts(rows, parts, '|');
    const byKey = groupBy(rows, (r) => `${r.m}|${r.q}|${r.v}`);
    expect([...byParts.entries()]).toEqual([...byKey.entries()]);
    expect([...byParts.keys()]).toEqual(['b|en|fr', 'a|en|fr', 'b|de|fr', 'a|en|de']);
    expect(byParts.get('a|en|fr')?.map((r) => r.x)).toEqual([2, 6]);
    expect(byParts.get('b|en|fr')?.[1]).toBe(rows[2]);
  });

  it('puts parts that join to one key into one group, as the key string would', () => {
    const odd = [
      { m: 'a|b', q: 'c', v: 'd', x: 1 },
      { m: 'a', q: 'b|c', v: 'd', x: 2 },
      { m: 'a', q: 'b', v: 'c|d', x: 3 },
    ];
    const byParts = groupByParts(odd, parts, '|');
    expect([...byParts.entries()]).toEqual([...groupBy(odd, (r) => `${r.m}|${r.q}|${r.v}`).entries()]);
    expect(byParts.get('a|b|c|d')?.map((r) => r.x)).toEqual([1, 2, 3]);
  });

  it('takes one part, and gives an empty map for no rows', () => {
    expect([...groupByParts(rows, [(r) => r.v], '|').keys()]).toEqual(['fr', 'de']);
    expect(groupByParts([], parts, '|').size).toBe(0);
    expect(() => groupByParts(rows, [], '|')).toThrow('no parts');
  });
});
