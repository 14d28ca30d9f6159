import { describe, expect, it } from 'vitest';
import { packInOrder } from '../../lib/core/packInOrder.js';

describe('packInOrder', () => {
  it('keeps the order and starts a group when the next item would pass the capacity; a heavier item stands alone', () => {
    expect(packInOrder([5, 5, 4, 20, 1], (n) => n, 10)).toEqual([[5, 5], [4], [20], [1]]);
  });

  it('starts a group at maxCount items too', () => {
    expect(packInOrder([1, 1, 1, 1, 1], (n) => n, 100, 2)).toEqual([[1, 1], [1, 1], [1]]);
  });

  it('an empty list makes no group; weight is asked once per item, in order', () => {
    expect(packInOrder([], (n: number) => n, 10)).toEqual([]);
    const asked: string[] = [];
    packInOrder(['a', 'bb', 'c'], (s) => (asked.push(s), s.length), 2);
    expect(asked).toEqual(['a', 'bb', 'c']);
  });

  it('an error thrown by weight passes through (splitBatch refuses an oversized request so)', () => {
    expect(() => packInOrder([1, 99], (n) => {
      if (n > 10) throw new RangeError(`${n} is too large`);
      return n;
    }, 10)).toThrow('99 is too large');
  });
});
