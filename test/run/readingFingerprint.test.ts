/**
 * Readings' fingerprints: what changes them (a phase's reader, its version, an item's extras) and
 * what does not (which object holds the extras), and the digests that let a partition skip the
 * re-read check.
 */
import { describe, expect, it } from 'vitest';
import type { PhaseSpec } from '../../lib/battery/types.js';
import type { PromptItem } from '../../lib/core/types.js';
import { itemsDigest, readingFingerprint } from '../../lib/run/readings.js';

const generate = { name: 'generate' } as Pick<PhaseSpec, 'name' | 'readerVersion'>;

function item(id: string, extras: unknown): PromptItem {
  return { item_id: id, prompt_key: id, campaign: 'c', phase: 'generate', battery: 'b', model: 'm', language: 'en', factors: { n: 1 }, messages: [], settings: {}, extras } as PromptItem;
}

describe('readingFingerprint', () => {
  it('changes with the extras a reader consults, the phase and its reader version, and with nothing else', () => {
    const map = { A: 'P', B: 'notP' };
    const fp = readingFingerprint(generate, item('a', { gold: 'B', reading_map: map }));
    // The same values in other objects, keys in another order: the same fingerprint.
    expect(readingFingerprint(generate, item('a', { reading_map: { B: 'notP', A: 'P' }, gold: 'B' }))).toBe(fp);
    expect(fp).toMatch(/^[0-9a-f]{16}$/);
    const others = [
      readingFingerprint(generate, item('a', { gold: 'C', reading_map: map })),
      readingFingerprint(generate, item('a', { gold: 'B', reading_map: { A: 'P', B: 'notP', C: 'both' } })),
      readingFingerprint({ name: 'judge' }, item('a', { gold: 'B', reading_map: map })),
      readingFingerprint({ name: 'generate', readerVersion: '2' }, item('a', { gold: 'B', reading_map: map })),
      readingFingerprint(generate, item('a', undefined)),
      readingFingerprint(generate, item('a', 'B')),
    ];
    expect(new Set([fp, ...others]).size).toBe(others.length + 1);
  });

  it('one extras object read by two phases gives each phase its own fingerprint, every time', () => {
    const shared = { gold: 'B' };
    const judge = { name: 'judge' };
    const a = readingFingerprint(generate, item('a', shared));
    const b = readingFingerprint(judge, item('b', shared));
    expect(b).not.toBe(a);
    expect(readingFingerprint(generate, item('c', shared))).toBe(a);
    expect(readingFingerprint(judge, item('d', shared))).toBe(b);
  });
});

describe('itemsDigest', () => {
  it('changes with an item id, an item extras or the order, not with the objects that hold them', () => {
    const items = [item('a', { gold: 'B' }), item('b', { gold: 'C' }), item('c', undefined)];
    const digest = itemsDigest(items);
    expect(itemsDigest([item('a', { gold: 'B' }), item('b', { gold: 'C' }), item('c', undefined)])).toBe(digest);
    for (const other of [
      [item('a', { gold: 'B' }), item('b', { gold: 'D' }), item('c', undefined)],
      [item('a', { gold: 'B' }), item('x', { gold: 'C' }), item('c', undefined)],
      [item('b', { gold: 'C' }), item('a', { gold: 'B' }), item('c', undefined)],
      [item('a', { gold: 'B' }), item('b', { gold: 'C' })],
      [item('a', { gold: 'B' }), item('b', { gold: 'C' }), item('c', null), item('d', undefined)],
    ]) expect(itemsDigest(other)).not.toBe(digest);
  });
});
