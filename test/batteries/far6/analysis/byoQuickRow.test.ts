import { describe, expect, it } from 'vitest';
import { validateFile } from '../../../../lib/batteries/far6/byo/index.js';
import { isJsonError, normalize } from '../../../../lib/batteries/far6/byo/fieldValues.js';
import { quickRow } from '../../../../lib/batteries/far6/byo/quickRow.js';
import { BYO_COLUMNS, byoRowSchema, withDefaults } from '../../../../lib/batteries/far6/byo/schema.js';
import type { ByoRow } from '../../../../lib/batteries/far6/byo/schema.js';
import { asCsvRecord, edgeRows, FULL_ROW, MINIMAL_ROW } from '../../../fixtures/byo/edgeRows.js';

const KNOWN = new Set(BYO_COLUMNS);

/** What the schema says of a record, given to it as validate.ts gives it (the reference). */
function bySchema(record: Record<string, unknown>, fromCsv: boolean): ByoRow | undefined {
  const value: Record<string, unknown> = {};
  for (const [k, v] of Object.entries(record)) {
    if (!KNOWN.has(k)) continue;
    const n = normalize(k, v, fromCsv);
    if (isJsonError(n)) return undefined;
    if (n !== null || k === 'text') value[k] = n;
  }
  const parsed = byoRowSchema.safeParse(value);
  return parsed.success ? withDefaults(parsed.data) : undefined;
}

describe('the quick check of valid rows agrees with the schema', () => {
  const cases = edgeRows();

  for (const [format, fromCsv] of [
    ['JSON', false],
    ['CSV', true],
  ] as const) {
    it(`accepts only rows the schema accepts, with the same values (${format}: wrong types, missing fields, nulls, NaN, huge numbers, unknown nested keys)`, () => {
      let accepted = 0;
      let schemaAccepted = 0;
      for (const [name, record] of cases) {
        const input = fromCsv ? asCsvRecord(record) : record;
        const quick = quickRow(input, fromCsv);
        const reference = bySchema(input, fromCsv);
        if (reference) schemaAccepted++;
        if (!quick) continue;
        accepted++;
        // toEqual: a field the quick row gives as undefined is one the schema's output leaves out.
        expect(reference, name).toBeDefined();
        expect(quick, name).toEqual(reference);
      }
      // It declines only the unusual (keys the schema strips, JSON text, dates, big integers).
      expect(accepted).toBeGreaterThan(0.9 * schemaAccepted);
    });
  }

  it('takes a full and a minimal row, with the defaults of the schema', () => {
    expect(quickRow({ ...FULL_ROW }, false)).toEqual(withDefaults(byoRowSchema.parse(FULL_ROW)));
    expect(quickRow({ ...MINIMAL_ROW }, false)).toMatchObject({ story_group: 'ungrouped', construction: 'plain', text: null });
    expect(quickRow(asCsvRecord(FULL_ROW), true)).toMatchObject({ option_order: 1, repeat: 2, cost_usd: 0.0000455, simulated: false, readings: FULL_ROW['readings'] });
  });

  it('the messages about bad rows are the schema\'s, as before the quick check', () => {
    const { language: _omit, ...noLanguage } = FULL_ROW;
    // Captured from validateFile before quickRow.ts existed.
    const cases: [Record<string, unknown>, string[]][] = [
      [{ ...FULL_ROW, story: 7 }, ['row 1, field "story": expected string, got 7']],
      [noLanguage, ['row 1, field "language": missing; expected one of en, zh, de, ja, ko, fr']],
      [{ ...FULL_ROW, form: null }, ['row 1, field "form": missing; expected one of plain, negint, alternative, ornot']],
      [{ ...FULL_ROW, cost_usd: Number.NaN }, ['row 1, field "cost_usd": expected number, got NaN']],
      [{ ...FULL_ROW, cost_usd: Number.NEGATIVE_INFINITY }, ['row 1, field "cost_usd": expected number, got -Infinity']],
      [{ ...FULL_ROW, repeat: 2 ** 53 }, ['row 1, field "repeat": Too big: expected int to be <=9007199254740991; got 9007199254740992']],
      [{ ...FULL_ROW, input_tokens: 1e20 }, ['row 1, field "input_tokens": Too big: expected int to be <=9007199254740991; got 100000000000000000000']],
      [{ ...FULL_ROW, attempt: 1.5 }, ['row 1, field "attempt": expected an integer, got 1.5']],
      [{ ...FULL_ROW, option_order: 2 }, ['row 1, field "option_order": Too big: expected number to be <=1; got 2']],
      [{ ...FULL_ROW, model: '..' }, ['row 1, field "model": expected a folder name, not "." or ".."; got ".."']],
      [{ ...FULL_ROW, readings: [{ reader: 'r', label: 'maybe' }] }, ['row 1, field "readings[0].label": expected one of P, notP, both, none, invalid; got "maybe"']],
      [{ ...FULL_ROW, reading_map: { kind: 'none', tokens: {}, particles: null } }, ['row 1, field "reading_map.particles": expected object, got null']],
      [{ ...FULL_ROW, reading_map: { kind: 'none', tokens: { a: 'maybe' } } }, ['row 1, field "reading_map.tokens.a": expected one of P, notP; got "maybe"']],
      [
        { ...FULL_ROW, reading_map: { kind: 'letter', tokens: { a: 'P' }, letters: [{ letter: 'A', proposition: 'P' }, { letter: 'B', proposition: 'P' }] } },
        ['row 1, field "reading_map.letters": a label item needs its two letters in listed order, one for P and one for notP; got a list'],
      ],
      [{ ...FULL_ROW, readings: '[not json' }, ['row 1, field "readings": expected JSON (unexpected character "o"), got "[not json"']],
      // A key the schema does not know inside a reading is dropped, as zod drops it; the row stays.
      [{ ...FULL_ROW, readings: [{ reader: 'r', label: 'P', extra: 1 }] }, []],
    ];
    for (const [record, expected] of cases) {
      const v = validateFile({ file: 'f.jsonl', format: 'jsonl', records: [record] });
      expect(v.issues.map((i) => `${i.path}: ${i.message}`)).toEqual(expected);
    }
  });

  it('a row it takes and a row it leaves to the schema give the same table row', () => {
    const rows: ByoRow[] = [];
    // The extra key makes the quick check decline; the schema strips it.
    const records = [{ ...FULL_ROW }, { ...FULL_ROW, readings: (FULL_ROW['readings'] as object[]).map((r) => ({ ...r, extra: 1 })) }];
    validateFile({ file: 'f.jsonl', format: 'jsonl', records }, (r) => rows.push(r.value));
    expect(rows).toHaveLength(2);
    expect(rows[1]).toEqual(rows[0]);
  });
});
