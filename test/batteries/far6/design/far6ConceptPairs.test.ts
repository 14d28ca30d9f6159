import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { stringify } from 'yaml';
import { CONSTRUCTIONS, loadConceptPairs, parseConceptPairs } from '../../../../lib/batteries/far6/design/index.js';
import { LANGUAGES } from '../../../../lib/batteries/far6/types.js';
import type { Language } from '../../../../lib/batteries/far6/types.js';
import { campaignFileError } from '../../../helpers/fileErrors.js';

const EXAMPLE = 'examples/far6/concept-pairs.yaml';
const FILE = 'pairs.yaml';

const en = () => ({
  id: 'en.wrong-right',
  language: 'en',
  construction: 'evaluative_adjective',
  reference: { verdict: 'wrong', forms: { adj: 'wrong' } },
  counterpart: { verdict: 'right', forms: { adj: 'right' } },
});


describe('loadConceptPairs — the example file', () => {
  const pairs = loadConceptPairs(EXAMPLE, [...LANGUAGES]);

  it('holds an evaluative adjective and an attitude verb pair in every language', () => {
    for (const language of LANGUAGES) {
      const own = pairs.filter((p) => p.language === language);
      expect(own.length, language).toBeGreaterThanOrEqual(2);
      expect(new Set(own.map((p) => p.construction)), language).toEqual(new Set(CONSTRUCTIONS));
    }
    expect(new Set(pairs.map((p) => p.id)).size).toBe(pairs.length);
  });

  it('returns only the campaign languages, in file order', () => {
    const some: Language[] = ['ja', 'de'];
    const picked = loadConceptPairs(EXAMPLE, some);
    expect(picked.map((p) => p.id)).toEqual(pairs.filter((p) => some.includes(p.language)).map((p) => p.id));
  });

  it('defaults verdict_forms to an empty list', () => {
    expect(pairs.find((p) => p.id === 'en.wrong-right')!.reference.verdict_forms).toEqual([]);
  });
});

describe('loadConceptPairs — bad input names file, path and what was expected', () => {
  it('rejects an unknown language', () => {
    const err = campaignFileError(() => parseConceptPairs({ pairs: [{ ...en(), language: 'es' }] }, FILE, ['en']));
    expect(err.message).toContain('pairs.yaml: pairs[0].language: unknown language "es"; expected one of "en"');
    expect(err.issues[0]).toMatchObject({ file: FILE, path: 'pairs[0].language' });
  });

  it('rejects a missing form, listing the forms the templates need', () => {
    const pair = en();
    const broken = { ...pair, counterpart: { verdict: 'right', forms: {} } };
    const err = campaignFileError(() => parseConceptPairs({ pairs: [broken] }, FILE, ['en']));
    expect(err.message).toBe('pairs.yaml: pairs[0].counterpart.forms.adj: missing form "adj"; the en evaluative_adjective templates need "adj"');
  });

  it('rejects a form no template uses (a misspelt key)', () => {
    const pair = { ...en(), reference: { verdict: 'wrong', forms: { adj: 'wrong', adjj: 'wrong' } } };
    const err = campaignFileError(() => parseConceptPairs({ pairs: [pair] }, FILE, ['en']));
    expect(err.issues.map((i) => i.path)).toEqual(['pairs[0].reference.forms.adjj']);
    expect(err.message).toContain('unknown form "adjj"');
  });

  it('rejects a campaign language without any pair', () => {
    const err = campaignFileError(() => parseConceptPairs({ pairs: [en()] }, FILE, ['en', 'ko']));
    expect(err.issues).toEqual([
      { file: FILE, path: 'pairs', message: 'no concept pair for campaign language "ko"; expected at least one pair with language: ko' },
    ]);
  });

  it('rejects a duplicate id, pointing at the first', () => {
    const err = campaignFileError(() => parseConceptPairs({ pairs: [en(), en()] }, FILE, ['en']));
    expect(err.message).toBe('pairs.yaml: pairs[1].id: duplicate id "en.wrong-right" (first at pairs[0]); ids must be unique');
  });

  it('rejects an id whose prefix is another language', () => {
    const err = campaignFileError(() => parseConceptPairs({ pairs: [{ ...en(), id: 'de.wrong-right' }] }, FILE, ['en']));
    expect(err.issues[0]!.path).toBe('pairs[0].id');
  });

  it('rejects a verdict opening claimed by both sides', () => {
    const pair = { ...en(), counterpart: { verdict: 'right', verdict_forms: ['Wrong'], forms: { adj: 'right' } } };
    const err = campaignFileError(() => parseConceptPairs({ pairs: [pair] }, FILE, ['en']));
    expect(err.message).toContain('pairs[0].counterpart: verdict opening "wrong" is also the reference side');
  });

  it('rejects an unknown construction and a missing term', () => {
    const { counterpart: _c, ...noCounterpart } = en();
    const err = campaignFileError(() => parseConceptPairs({ pairs: [{ ...en(), construction: 'adverb' }, noCounterpart] }, FILE, ['en']));
    expect(err.issues.map((i) => i.path)).toEqual(['pairs[0].construction', 'pairs[1].counterpart']);
    expect(err.issues[0]!.message).toContain('expected one of "evaluative_adjective", "attitude_verb"');
  });

  it('collects every issue of a file into one error', () => {
    const err = campaignFileError(() =>
      parseConceptPairs({ pairs: [en(), en(), { ...en(), id: 'en.x', reference: { verdict: 'x', forms: {} } }] }, FILE, ['en', 'fr']),
    );
    expect(err.issues.map((i) => i.path)).toEqual(['pairs[1].id', 'pairs[2].reference.forms.adj', 'pairs']);
  });

  it('names the file when it is missing or not YAML', () => {
    const dir = mkdtempSync(join(tmpdir(), 'far6-pairs-'));
    const missing = join(dir, 'missing.yaml');
    expect(campaignFileError(() => loadConceptPairs(missing, ['en'])).message).toContain(`${missing}: no such concept-pair file; check the path`);
    const bad = join(dir, 'bad.yaml');
    writeFileSync(bad, 'pairs: [\n  - id: x\n');
    expect(campaignFileError(() => loadConceptPairs(bad, ['en'])).message).toMatch(new RegExp(`${bad.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')}: line \\d+, column \\d+: invalid YAML`));
  });

  it('reads a YAML file through the same checks', () => {
    const dir = mkdtempSync(join(tmpdir(), 'far6-pairs-'));
    const file = join(dir, 'pairs.yaml');
    writeFileSync(file, stringify({ pairs: [{ ...en(), language: 'xx' }] }));
    const err = campaignFileError(() => loadConceptPairs(file, ['en']));
    expect(err.issues[0]).toMatchObject({ file, path: 'pairs[0].language' });
  });
});
