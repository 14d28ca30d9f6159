import { readFileSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { parseQaPairs } from '../../../lib/batteries/xvalue/data/index.js';
import { qaPairRecordSchema } from '../../../lib/batteries/xvalue/data/qaPairSchema.js';
import { quickQaPair } from '../../../lib/batteries/xvalue/data/quickQaPair.js';

const EXAMPLES = path.join(path.dirname(fileURLToPath(import.meta.url)), '../../../examples/xvalue/qa-pairs.jsonl');
const examples = readFileSync(EXAMPLES, 'utf8')
  .split('\n')
  .filter((l) => l.trim() !== '')
  .map((l) => JSON.parse(l) as Record<string, unknown>);

type Rec = Record<string, unknown>;
const annotationOf = (r: Rec): Rec => r['annotation'] as Rec;
const checkpointsOf = (r: Rec): Rec => annotationOf(r)['checkpoints'] as Rec;

/** A copy of `base` with `edit` applied to the copy (a deep copy: the edits never reach `base`). */
function edited(base: Rec, edit: (r: Rec) => void): Rec {
  const r = structuredClone(base);
  edit(r);
  return r;
}

const withField = (field: string, value: unknown) => (r: Rec) => void (value === undefined ? delete r[field] : (r[field] = value));
const withAnnotation = (field: string, value: unknown) => (r: Rec) => {
  const a = annotationOf(r);
  if (value === undefined) delete a[field];
  else a[field] = value;
};
const withCheckpoint = (letter: string, value: unknown) => (r: Rec) => {
  const c = checkpointsOf(r);
  if (value === undefined) delete c[letter];
  else c[letter] = value;
};

/** Values each kind of field is tried with: right, wrong, odd. */
const ODD = [undefined, null, 7, true, [], {}, '', '   ', '\t'];
const TEXTS = [...ODD, 'a', ' padded ', 'line\nbreak', 'tab\there', 'sk-proj-abcdefghijklmnop', 'ü'];
const CHOICES = (values: readonly string[]) => [...ODD, ...values, ...values.map((v) => ` ${v.toUpperCase()} `), ...values.map((v) => v.toLowerCase()), 'other'];
const HOLISTIC = [...ODD, 'Pass', 'pass', ' PASS ', 'Fail', 'Fail: a reason', 'fail - reason', 'Failing', 'FAIL：理由', 'Fail:   ', { verdict: 'Fail', reason: 'why' }, { verdict: ' pass ' }, { verdict: 'Fail', reason: '  ' }, { verdict: 'Fail', reason: 3 }, { verdict: 'maybe' }, { verdict: 'Pass', extra: 1 }, ['Pass']];
const FINE = [...ODD, 'None', 'none', ' NONE ', ['a sentence'], [' padded '], ['a', ''], ['a', 3], '["a sentence"]', ' ["x", "y"] ', '[not json', '[]', '["a", ""]', 'a sentence'];

/** Every pair tried: the examples and, for the first two, each field set to each value of its kind. */
function cases(): [string, unknown][] {
  const out: [string, unknown][] = examples.map((e) => [`example ${String(e['id'])}`, e]);
  for (const base of examples.slice(0, 2)) {
    const name = String(base['id']);
    for (const v of TEXTS) for (const f of ['id', 'question', 'answer']) out.push([`${name} ${f}=${JSON.stringify(v)}`, edited(base, withField(f, v))]);
    for (const v of [...ODD, 'en', 'EN', ' en', 'zh', 'xx']) out.push([`${name} language=${JSON.stringify(v)}`, edited(base, withField('language', v))]);
    for (const v of [...ODD, 'P&G', 'p&g', ' P&B ', 'Physical and Mental Health', 'nope']) out.push([`${name} category=${JSON.stringify(v)}`, edited(base, withField('category', v))]);
    for (const v of TEXTS) out.push([`${name} core_issue=${JSON.stringify(v)}`, edited(base, withAnnotation('core_issue', v))]);
    for (const v of CHOICES(['Global', 'Regional'])) out.push([`${name} scope=${JSON.stringify(v)}`, edited(base, withAnnotation('scope', v))]);
    for (const v of CHOICES(['Consensus', 'Pluralism'])) out.push([`${name} nature=${JSON.stringify(v)}`, edited(base, withAnnotation('nature', v))]);
    for (const v of CHOICES(['Pass', 'Fail'])) out.push([`${name} overall=${JSON.stringify(v)}`, edited(base, withAnnotation('overall', v))]);
    for (const v of CHOICES(['Pass', 'Biased Prompting', 'Factual Error'])) out.push([`${name} A=${JSON.stringify(v)}`, edited(base, withCheckpoint('A', v))]);
    for (const l of ['B', 'C', 'D']) for (const v of HOLISTIC) out.push([`${name} ${l}=${JSON.stringify(v)}`, edited(base, withCheckpoint(l, v))]);
    for (const l of ['E', 'F', 'G', 'H']) for (const v of FINE) out.push([`${name} ${l}=${JSON.stringify(v)}`, edited(base, withCheckpoint(l, v))]);
    // Keys the strict objects refuse, and the odd shapes of a record.
    out.push([`${name} extra key`, edited(base, withField('extra', 1))]);
    out.push([`${name} annotation extra key`, edited(base, withAnnotation('extra', 1))]);
    out.push([`${name} checkpoint I`, edited(base, withCheckpoint('I', 'Pass'))]);
    out.push([`${name} checkpoint note`, edited(base, withCheckpoint('note', 'x'))]);
    out.push([`${name} annotation a list`, edited(base, withField('annotation', []))]);
    out.push([`${name} checkpoints a list`, edited(base, withAnnotation('checkpoints', ['Pass']))]);
    out.push([`${name} checkpoints missing`, edited(base, withAnnotation('checkpoints', undefined))]);
    out.push([`${name} __proto__ key`, JSON.parse(JSON.stringify(base).replace(/^\{/, '{"__proto__": {"x": 1}, '))]);
    out.push([`${name} null prototype`, Object.assign(Object.create(null) as Rec, structuredClone(base))]);
  }
  out.push(['null', null], ['a list', [examples[0]]], ['text', 'a pair'], ['a number', 3]);
  return out;
}

describe('the quick check of QA pairs agrees with the schema', () => {
  it('accepts only pairs the schema accepts, with the same values and keys in the same order', () => {
    let accepted = 0;
    let schemaAccepted = 0;
    let declinedValid = 0;
    for (const [name, raw] of cases()) {
      const quick = quickQaPair(raw);
      const reference = qaPairRecordSchema.safeParse(raw);
      if (reference.success) schemaAccepted++;
      if (!quick) {
        if (reference.success) declinedValid++;
        continue;
      }
      accepted++;
      expect(reference.success, name).toBe(true);
      expect(quick, name).toEqual(reference.data);
      expect(JSON.stringify(quick), name).toBe(JSON.stringify(reference.data));
    }
    // Enough of both kinds that the comparison means something; every valid pair here is one it takes.
    expect(accepted).toBeGreaterThan(300);
    expect(cases().length - schemaAccepted).toBeGreaterThan(150);
    expect(declinedValid).toBe(0);
  });

  it('leaves every message to the schema: a file of bad pairs gets the issues it got before the quick check', () => {
    const bad = [
      edited(examples[0]!, withField('language', 'EN')),
      edited(examples[0]!, withCheckpoint('E', '[not json')),
      edited(examples[0]!, withCheckpoint('F', ['a', ''])),
      edited(examples[0]!, withAnnotation('extra', 1)),
      edited(examples[0]!, withField('id', 'two\nlines')),
    ].map((r, i) => JSON.stringify({ ...r, id: r['id'] === 'two\nlines' ? r['id'] : `bad-${i}` }));
    const { pairs, issues } = parseQaPairs(bad.join('\n'), 'pairs.jsonl', 'jsonl');
    expect(pairs).toEqual([]);
    // Captured from parseQaPairs before quickQaPair.ts existed.
    expect(issues.map((i) => `${i.path}: ${i.message}`)).toEqual([
      'line 1, language: language "EN" is not written as a code is (did you mean "en"?); expected one of the 14 codes of Towards Cross-lingual Values Judgment Table 9: ar, de, en, es, fr, id, ja, ko, pt, ru, th, ur, vi, zh',
      'line 2, annotation.checkpoints.E: checkpoint E starts with "[" but is not a JSON array of sentences: "[not json"',
      'line 3, annotation.checkpoints.F: checkpoint F[1]: expected an offending sentence (non-blank text), got ""',
      'line 4, annotation: unknown field(s) extra; expected core_issue, scope, nature, checkpoints, overall',
      'line 5, id: id "two\\nlines" holds a control character (a line break, a tab); expected an id on one line',
    ]);
  });
});
