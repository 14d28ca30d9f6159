import { mkdtemp, readFile, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { analyzeByoFile, parseByoRows } from '../../../lib/batteries/ptrue/byo/index.js';
import { analyzePtrueRows } from '../../../lib/batteries/ptrue/analysis/analyzeRows.js';
import type { FileIssue } from '../../../lib/errors.js';
import { campaignFileError } from '../../helpers/fileErrors.js';
import { REPO_ROOT } from '../../helpers/campaigns.js';

const csv = ['item,model,q,r,v,correct,p_true,benchmark,realised', 'i1,m1,en,en,en,1,0.9,triv,en', 'i1,m1,en,en,fr,1,0.7,triv,en', 'i2,m1,en,ko,en,0,,triv,en', 'i2,m1,en,ko,fr,0,0.2,triv,en'].join('\n');

const issuesOf = (f: () => unknown): FileIssue[] => [...campaignFileError(f).issues];

describe('bring-your-own P(True) rows', () => {
  it('converts CSV and JSONL rows to analysis rows, an empty P(True) being an invalid reading', () => {
    const rows = parseByoRows(csv, 'rows.csv', 'csv');
    expect(rows).toHaveLength(4);
    expect(rows[0]).toEqual({ model: 'm1', benchmark: 'triv', base_item: 'i1', stratum: null, content_language: null, q: 'en', r: 'en', v: 'en', correct: true, p_true: 0.9, realised: 'en', exact: null, correct_alt: null });
    expect(rows[2]!.p_true).toBeNull();
    const jsonl = '{"item":"i1","model":"m1","q":"en","r":"en","v":"en","correct":true,"p_true":0.9,"benchmark":"triv","realised":"en"}';
    expect(parseByoRows(jsonl, 'rows.jsonl', 'jsonl')[0]).toEqual(rows[0]);
  });

  it('reports every bad field, duplicate and disagreeing verifier copy, with line numbers', () => {
    const bad = [
      'item,model,q,r,v,correct,p_true',
      'i1,m/1,en,en,en,1,0.9',
      'i1,m1,en,en,xx1,yes,1.4',
      'i1,m1,en,en,en,1,0.5',
      'i1,m1,en,en,en,1,0.5',
      'i1,m1,en,en,fr,0,0.5',
      ',m1,en,en,en,1,0.5',
    ].join('\n');
    expect(issuesOf(() => parseByoRows(bad, 'rows.csv', 'csv')).map((i) => `${i.path}: ${i.message.split(';')[0]}`)).toEqual([
      'line 2: model: expected letters, digits, ".", "_" or "-" (it names a folder), got "m/1"',
      'line 3: v: unknown language "xx1"',
      'line 3: correct: expected 1/0 or true/false, got "yes"',
      'line 3: p_true: expected a probability in [0, 1] (empty for an invalid reading), got "1.4"',
      'line 5: duplicate row: line 4 has the same model, item, q, r and v',
      'line 6: correct: line 4 gives the same reply (model, item, q, r) the other correctness',
      'line 7: item: missing',
    ]);
  });

  it('gives the same tables as the same rows from a campaign', async () => {
    const dir = await mkdtemp(join(tmpdir(), 'ptrue-byo-'));
    const file = join(dir, 'rows.csv');
    await writeFile(file, csv);
    const fromFile = await analyzeByoFile(file, { draws: 10, seed: 1 });
    const direct = analyzePtrueRows(parseByoRows(csv, file, 'csv'), { draws: 10, seed: 1, simulated: false });
    expect(fromFile.cells).toEqual(direct.cells);
    expect(fromFile.cells).toHaveLength(4);
    await expect(analyzeByoFile(join(dir, 'rows.txt'), { draws: 0, seed: 1 })).rejects.toThrow(/unsupported file type/);
  });
  it('gives the same results whatever the order of the rows in the file, those of the rows in a campaign order', async () => {
    const example = await readFile(join(REPO_ROOT, 'examples/ptrue/byo-rows.csv'), 'utf8');
    const [header, ...body] = example.trimEnd().split('\n');
    const reversed = [header, ...body.reverse()].join('\n');
    const opts = { draws: 50, seed: 7, simulated: false };
    const inFileOrder = analyzePtrueRows(parseByoRows(example, 'byo-rows.csv', 'csv'), opts);
    expect(inFileOrder.cells.length).toBeGreaterThan(4);
    expect(analyzePtrueRows(parseByoRows(reversed, 'reversed.csv', 'csv'), opts)).toEqual(inFileOrder);
    const rows = parseByoRows(reversed, 'reversed.csv', 'csv');
    const order = (r: (typeof rows)[number]) => [r.model, r.benchmark, r.base_item, r.q, r.r, r.v].join('\u0000');
    expect(rows.map(order)).toEqual(rows.map(order).sort());
  });

  it('never quotes a field that looks like an assignment (a .env given by mistake)', () => {
    let message = '';
    try {
      parseByoRows('OPENAI_API_KEY=sk-test-123456\nOTHER=1\n', 'env.csv', 'csv');
    } catch (err) {
      message = JSON.stringify({ m: (err as Error).message, i: (err as { issues?: unknown }).issues });
    }
    expect(message).not.toBe('');
    expect(message).not.toContain('sk-test-123456');
  });
});
