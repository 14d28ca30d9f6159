import { describe, expect, it } from 'vitest';
import { AdmissionOffset } from '../../lib/run/admissionOffset.js';

/** `n` replies 100 ms apart from `t`: estimate 600, deficits from `deficit(i)`. Returns the time after. */
function replies(offset: AdmissionOffset, t: number, n: number, deficit: (i: number) => number): number {
  for (let i = 0; i < n; i++, t += 100) offset.note(600, deficit(i), t);
  return t;
}

describe('AdmissionOffset', () => {
  it("takes off the largest margin a window of replies showed: the calls that found the server's bucket full", () => {
    const offset = new AdmissionOffset(0);
    // The server counts 593 of 600. A third of the calls arrive to a full bucket (deficit 593);
    // the others find some of earlier calls' cost unrefilled, and show smaller margins.
    let t = replies(offset, 0, 100, (i) => (i % 3 === 0 ? 593 : 640 + i));
    expect(offset.discount(600, t - 100)).toBe(0); // the first window is not over yet
    expect(offset.discount(600, t)).toBe(7);
    // Never above 2 % of an estimate, whatever the margin.
    t = replies(offset, t, 100, () => 560);
    expect(offset.discount(600, t)).toBe(12);
    expect(offset.discount(100, t)).toBe(2);
  });

  it("drops the discount within two windows once the server's deficit stays up", () => {
    const offset = new AdmissionOffset(0);
    let t = replies(offset, 0, 100, () => 593);
    expect(offset.discount(600, t)).toBe(7);
    // The client now admits more than the server refills: every call finds a backlog.
    t = replies(offset, t, 50, (i) => 650 + 10 * i);
    expect(offset.discount(600, t)).toBe(7);
    t = replies(offset, t, 100, (i) => 1150 + 10 * i);
    expect(offset.discount(600, t)).toBe(0);
  });

  it('makes no discount from a window with too few replies, or one older than a window', () => {
    const offset = new AdmissionOffset(0);
    replies(offset, 0, 9, () => 593);
    expect(offset.discount(600, 10_000)).toBe(0);
    const stale = new AdmissionOffset(0);
    replies(stale, 0, 50, () => 593);
    expect(stale.discount(600, 19_999)).toBe(7);
    const later = new AdmissionOffset(0);
    replies(later, 0, 50, () => 593);
    expect(later.discount(600, 20_000)).toBe(0);
  });

  it("stops for good at a deficit under 90 % of the estimate: a header taken when the server answered, or a count far off the estimate's", () => {
    const offset = new AdmissionOffset(0);
    let t = replies(offset, 0, 100, () => 590);
    expect(offset.discount(600, t)).toBe(10);
    offset.note(600, 539, t);
    expect(offset.distrusted).toBe(true);
    expect(offset.discount(600, t)).toBe(0);
    t = replies(offset, t, 300, () => 595);
    expect(offset.discount(600, t)).toBe(0);
  });

  it('ignores replies that tell nothing', () => {
    const offset = new AdmissionOffset(0);
    for (let t = 0; t < 10_000; t += 100) {
      offset.note(0, 0, t);
      offset.note(600, Number.NaN, t);
      offset.note(600, -1, t);
    }
    expect(offset.discount(600, 10_000)).toBe(0);
    expect(offset.distrusted).toBe(false);
  });
});
