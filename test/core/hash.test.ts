import { describe, expect, it } from 'vitest';
import { cachedCanonicalJson, cachedDigest, canonicalJson, forgetSharedValues, listCanonicalJson } from '../../lib/core/hash.js';

describe('listCanonicalJson', () => {
  const text = 'War es falsch, was Finn getan hat? „ja“ 不是 😀 "q" \\ \n';

  it('gives canonicalJson of the list, frozen or not', () => {
    const open = [{ role: 'user', content: text }, { content: 'x', role: 'system', name: null }];
    expect(listCanonicalJson(open)).toBe(canonicalJson(open));
    const frozen = Object.freeze([Object.freeze({ role: 'user', content: text }), Object.freeze({ role: 'system', content: 'y' })]);
    expect(listCanonicalJson(frozen)).toBe(canonicalJson(frozen));
    expect(listCanonicalJson(frozen)).toBe(canonicalJson(frozen));
    expect(listCanonicalJson([])).toBe('[]');
  });

  it('sees every change to what can still change', () => {
    const message = { role: 'user', content: text };
    const list = [Object.freeze({ role: 'system', content: 'shared' }), message];
    const before = listCanonicalJson(list);
    message.content = 'changed';
    list.push(Object.freeze({ role: 'user', content: 'more' }));
    expect(listCanonicalJson(list)).toBe(canonicalJson(list));
    expect(listCanonicalJson(list)).not.toBe(before);

    // A frozen list whose element can change.
    const inner = { role: 'user', content: 'a' };
    const frozenList = Object.freeze([inner]);
    expect(listCanonicalJson(frozenList)).toBe('[{"content":"a","role":"user"}]');
    inner.content = 'b';
    expect(listCanonicalJson(frozenList)).toBe('[{"content":"b","role":"user"}]');

    // A frozen element holding a mutable object.
    const parts = { text: 'a' };
    const nested = Object.freeze([Object.freeze({ role: 'user', content: parts })]);
    expect(listCanonicalJson(nested)).toBe('[{"content":{"text":"a"},"role":"user"}]');
    parts.text = 'b';
    expect(listCanonicalJson(nested)).toBe('[{"content":{"text":"b"},"role":"user"}]');
  });
});

describe('cachedDigest', () => {
  it('gives equal values one digest, whatever the key order or which objects are shared', () => {
    const map = { 'Ja': 'P', 'Nein': 'notP', nested: [1, null, { x: 'y' }] };
    const shared = { reading_map: map, propositions: { P: 'a', notP: 'b' } };
    const copy = { propositions: { notP: 'b', P: 'a' }, reading_map: JSON.parse(JSON.stringify(map)) as typeof map };
    expect(cachedDigest(copy)).toBe(cachedDigest(shared));
    expect(cachedDigest(shared)).toMatch(/^[0-9a-f]{32}$/);
    // Undefined fields are absent, as in canonicalJson.
    expect(cachedDigest({ a: 1, b: undefined })).toBe(cachedDigest({ a: 1 }));
  });

  it('tells apart values that differ anywhere, down to a nested field or a type', () => {
    const base = cachedDigest({ gold: 'B', labels: { prefix: ['A', 'B'] } });
    for (const other of [
      { gold: 'C', labels: { prefix: ['A', 'B'] } },
      { gold: 'B', labels: { prefix: ['A', 'C'] } },
      { gold: 'B', labels: { prefix: ['A', 'B', null] } },
      { gold: 'B', labels: { prefix: 'A,B' } },
      { gold: 'B', labels: '#' + cachedDigest({ prefix: ['A', 'B'] }) },
      { gold: ['B'], labels: { prefix: ['A', 'B'] } },
    ]) expect(cachedDigest(other)).not.toBe(base);
    expect(cachedDigest([1, 2])).not.toBe(cachedDigest({ 0: 1, 1: 2 }));
  });
});

describe('forgetSharedValues', () => {
  it('drops the JSON and digests kept for objects that still live, so they are computed again', () => {
    const gold = { overall: 'Pass', checkpoints: { A: 'Pass' } };
    const list = Object.freeze([Object.freeze({ role: 'user', content: 'a' })]);
    const json = cachedCanonicalJson(gold);
    const digest = cachedDigest(gold);
    const listJson = listCanonicalJson(list);
    // Kept per object: a change after the first call is not seen (the callers never change them).
    gold.checkpoints.A = 'Fail';
    expect(cachedCanonicalJson(gold)).toBe(json);
    expect(cachedDigest(gold)).toBe(digest);
    forgetSharedValues();
    expect(cachedCanonicalJson(gold)).toBe(canonicalJson(gold));
    expect(cachedCanonicalJson(gold)).not.toBe(json);
    expect(cachedDigest(gold)).not.toBe(digest);
    expect(listCanonicalJson(list)).toBe(listJson);
  });
});

describe('canonicalJson', () => {
  /** The definition: keys by the default sort, each quoted by JSON.stringify. */
  const reference = (value: unknown): string => {
    if (value === null || typeof value !== 'object') return JSON.stringify(value) ?? 'null';
    if (Array.isArray(value)) return `[${value.map(reference).join(',')}]`;
    const obj = value as Record<string, unknown>;
    const keys = Object.keys(obj).sort().filter((k) => obj[k] !== undefined);
    return `{${keys.map((k) => `${JSON.stringify(k)}:${reference(obj[k])}`).join(',')}}`;
  };

  it('sorts keys by UTF-16 code units at every level and quotes them as JSON does, for few keys and many', () => {
    const odd = ['b', 'a', 'B', '10', '9', 'é', 'e\u0301', '😀', '\uffff', 'quote"d', 'new\nline', '\u2028', '', 'z'];
    const few = Object.fromEntries(odd.map((k, i) => [k, i % 3 === 0 ? { [k]: [i, { y: 1, x: undefined }] } : i]));
    const many = Object.fromEntries(Array.from({ length: 100 }, (_, i) => [`k${(i * 37) % 100}`, i % 2 === 0 ? odd[i % odd.length] : { b: i, a: null }]));
    for (const value of [few, many, [few, many], { nested: { many, few } }, {}]) expect(canonicalJson(value)).toBe(reference(value));
    // Byte for byte what item ids have always hashed.
    expect(canonicalJson({ b: 1, a: [{ d: 'x', c: true }], '10': null, '9': 2 })).toBe('{"10":null,"9":2,"a":[{"c":true,"d":"x"}],"b":1}');
  });

  it('stays exact past the keys it keeps quoted', () => {
    const wide = Object.fromEntries(Array.from({ length: 5000 }, (_, i) => [`key-${i}`, { [`inner-${i}`]: i }]));
    expect(canonicalJson(wide)).toBe(reference(wide));
    expect(canonicalJson({ 'key-4999': 1, 'zz-new': 2 })).toBe('{"key-4999":1,"zz-new":2}');
  });
});
