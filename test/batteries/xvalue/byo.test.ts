import { writeFile } from 'node:fs/promises';
import { basename, join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { analyzeXvalueRows } from '../../../lib/batteries/xvalue/analysis/index.js';
import { BYO_COLUMNS, byoToRows, findByoFiles, parseByoText, readByoFiles } from '../../../lib/batteries/xvalue/byo/index.js';
import { xvalueSimulator } from '../../../lib/batteries/xvalue/simulate/index.js';
import { toCsv } from '../../../lib/report/csv.js';
import { CHECKPOINTS } from '../../../lib/batteries/xvalue/types.js';
import type { XvalueRows } from '../../../lib/batteries/xvalue/analysis/index.js';
import { tempDir } from '../../helpers/campaignFiles.js';
import { chainSqlRows, examplePairs, runChain } from './fixtures.js';
import { buildRows } from '../../../lib/batteries/xvalue/analysis/index.js';

/** The rows of a simulated run written out as verdicts brought from elsewhere. */
function asByo(rows: XvalueRows): Record<string, string>[] {
  return rows.verdicts.map((v) => {
    const out: Record<string, string> = { model: v.model, qa_id: v.qa_id, strategy: v.strategy, verdict: v.predicted === 'missing' ? '' : v.predicted };
    if (v.strategy === 'rubric') {
      const s1 = rows.step1.find((s) => s.model === v.model && s.qa_id === v.qa_id);
      out['scope'] = s1 && s1.predicted_scope !== 'missing' ? s1.predicted_scope : '';
      out['nature'] = s1 && s1.predicted_nature !== 'missing' ? s1.predicted_nature : '';
      for (const c of CHECKPOINTS) {
        const cp = rows.checkpoints.find((x) => x.model === v.model && x.qa_id === v.qa_id && x.checkpoint === c);
        // A is written with its own labels; the analysis reads Biased Prompting / Factual Error as a flag.
        out[c] = !cp || cp.predicted === 'missing' ? '' : c === 'A' && cp.predicted === 'Fail' ? 'Factual Error' : cp.predicted;
      }
    }
    return out;
  });
}

describe('bring your own verdicts', () => {
  it('gives the same tables as the run it came from, from CSV and from JSONL', async () => {
    // Prepare: a simulated run over the example pairs, written out as BYO rows.
    const pairs = await examplePairs();
    const model = xvalueSimulator({ id: 'ext', model: 'ext', role: 'subject', simulation: { invalid_rate: 0.05 }, where: { file: 'x', path: 'y' } }, { seed: 5 });
    const chains = [...new Set(pairs.map((p) => p.language))].map((l) => runChain(pairs, l, 'ext', (item) => model.reply(item, { messages: [], settings: {}, item }).text));
    const sql = chainSqlRows(chains.flatMap((c) => c.items), chains.flatMap((c) => c.records));
    const direct = buildRows(sql.pairs, sql.facets);
    const byo = asByo(direct);
    const csv = toCsv([...BYO_COLUMNS], byo);
    const jsonl = byo.map((r) => JSON.stringify(Object.fromEntries(Object.entries(r).filter(([, v]) => v !== '')))).join('\n');
    // Act
    for (const [text, format] of [[csv, 'csv'], [jsonl, 'jsonl']] as const) {
      const { rows: raw, issues: structural } = parseByoText(text, `v.${format}`, format);
      const result = byoToRows(raw, pairs);
      // Assess
      expect(structural).toEqual([]);
      expect(result.issues).toEqual([]);
      expect(result.accepted).toBe(pairs.length * 2);
      expect(analyzeXvalueRows(result.rows).overall).toEqual(analyzeXvalueRows(direct).overall);
      expect(analyzeXvalueRows(result.rows).checkpoints).toEqual(analyzeXvalueRows(direct).checkpoints);
      expect(analyzeXvalueRows(result.rows).step1Agreement).toEqual(analyzeXvalueRows(direct).step1Agreement);
    }
  });

  it('reads the example file: a rubric verdict derived by the veto, A never vetoing', async () => {
    const pairs = await examplePairs();
    const { rows: raw, issues } = await readByoFiles(await findByoFiles(join(import.meta.dirname, '../../../examples/xvalue/byo-verdicts.csv')));
    expect(issues).toEqual([]);
    const result = byoToRows(raw, pairs);
    expect(result.issues).toEqual([]);
    expect(result.rows.verdicts.map((v) => [v.qa_id, v.strategy, v.predicted])).toEqual([
      ['xv-en-01', 'defonly', 'Pass'],
      ['xv-en-02', 'defonly', 'Pass'],
      ['xv-en-08', 'defonly', 'Fail'],
      ['xv-en-01', 'rubric', 'Pass'],
      ['xv-en-02', 'rubric', 'Fail'],
      ['xv-en-08', 'rubric', 'Fail'],
      ['xv-zh-03', 'rubric', 'invalid'],
      ['xv-zh-03', 'defonly', 'Fail'],
    ]);
    expect(result.rows.step1.map((s) => s.predicted_nature)).toEqual(['Consensus', 'Consensus', 'invalid']);
  });

  it('lists bad rows with file, line and field, and keeps the good ones', async () => {
    const pairs = await examplePairs();
    const csv = [
      'model,qa_id,strategy,verdict,language,category,scope,nature,A,B,C,D,E,F,G,H',
      'm,xv-en-01,defonly,Pass,,,,,,,,,,,,', // 2: fine
      'm,xv-xx-99,defonly,Pass,,,,,,,,,,,,', // 3: unknown pair
      'm,xv-en-02,defonly,,,,,,,,,,,,,', // 4: no verdict
      'm,xv-en-03,defonly,Pass,,,,,,Fail,,,,,,', // 5: rubric column on a def-only row
      'm,xv-en-04,rubric,Maybe,,,,,,,,,,,,', // 6: bad label
      'm,xv-en-01,defonly,Fail,,,,,,,,,,,,', // 7: duplicate
      'm,xv-en-05,defonly,Pass,zh,,,,,,,,,,,', // 8: wrong language
      'bad/model,xv-en-06,defonly,Pass,,,,,,,,,,,,', // 9: model names a folder
      'm,xv-en-07,rubric,,,,,,,,,,,,,', // 10: rubric row with nothing
      'm,xv-en-08,rubric,Pass,,,,,,Pass,Pass,Pass,Pass,Pass,Fail,Pass', // 11: fine, warned (veto says Fail)
    ].join('\n');
    const { rows: raw } = parseByoText(csv, 'v.csv', 'csv');
    const result = byoToRows(raw, pairs);
    const expected = [
      ['line 3, qa_id', 'qa_id "xv-xx-99" is not among the QA pairs'],
      ['line 4, verdict', 'missing verdict; a def-only row needs'],
      ['line 5', 'a def-only row has rubric columns (B)'],
      ['line 6, verdict', 'expected a verdict as one of "Pass", "Fail", "invalid" or empty, got "Maybe"'],
      ['line 7', 'a second verdict of model m on xv-en-01 under defonly; the first is at v.csv: line 2'],
      ['line 8, language', 'pair xv-en-05 is in en, the row says zh'],
      ['line 9, model', 'expected only letters, digits'],
      ['line 10', 'a rubric row needs a verdict or the checkpoints B–H'],
    ];
    expect(result.issues.map((i) => i.path)).toEqual(expected.map(([path]) => path));
    result.issues.forEach((i, k) => expect(i.message.startsWith(expected[k]?.[1] as string), i.message).toBe(true));
    for (const i of result.issues) expect(i.file).toBe('v.csv');
    expect(result.accepted).toBe(2);
    expect(result.rejected).toBe(8);
    expect(result.warnings).toEqual([{ file: 'v.csv', path: 'line 11, verdict', message: expect.stringMatching(/differs from the one-vote veto over B–H \(Fail\)/) }]);
  });
  it('reads verdict files as campaign files are read: a byte-order mark dropped; a missing, binary or other-type file an issue, in file order', async () => {
    const { dir, cleanup } = await tempDir('xvalue-byo-read');
    try {
      const bom = join(dir, 'excel.csv');
      await writeFile(bom, '\uFEFFmodel,qa_id,strategy,verdict\nm,q1,direct,Yes\n');
      const binary = join(dir, 'binary.jsonl');
      await writeFile(binary, Buffer.from([0x7b, 0x00, 0x7d, 0x0a]));

      const { rows, issues } = await readByoFiles([bom, join(dir, 'missing.csv'), binary, join(dir, 'notes.txt')]);

      expect(rows.map((r) => r.value)).toEqual([{ model: 'm', qa_id: 'q1', strategy: 'direct', verdict: 'Yes' }]);
      expect(issues.map((i) => [basename(i.file), i.message])).toEqual([
        ['missing.csv', 'no such verdict file; check the path'],
        ['binary.jsonl', 'is not a text file (it holds binary data); expected verdicts as JSONL'],
        ['notes.txt', 'unsupported file type; expected verdicts as .jsonl (or .ndjson) or .csv'],
      ]);
    } finally {
      await cleanup();
    }
  });

  it('never quotes a header cell that looks like an assignment (a .env given by mistake)', () => {
    const text = 'OPENAI_API_KEY=sk-test-123456\nOTHER=1\n';
    const { rows: raw, issues } = parseByoText(text, 'env.csv', 'csv');
    const result = byoToRows(raw, []);
    const all = JSON.stringify([...issues, ...result.issues]);
    expect(all).not.toContain('sk-test-123456');
    expect(all).not.toContain('OPENAI_API_KEY=');
  });
});
