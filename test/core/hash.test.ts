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
