/** Reply files for `analyze --replies`: each study's example rows, as CSV and JSONL, mutated. */
import { cp, mkdir, readFile, rm, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { editText, mkfifo, parseCsv, toParquet } from './inputs.js';
import { ROOT, SECRET } from './types.js';
import type { Case, Expect } from './types.js';

/** Reply files: each study's example rows, as CSV and JSONL, mutated. Results compared to the baseline's CSVs. */
export function byoCases(): Case[] {
  const out: Case[] = [];
  const studies: Record<string, { source: string; extra: (dir: string) => string[] }> = {
    ptrue: { source: 'examples/ptrue/byo-rows.csv', extra: () => ['--draws', '20', '--seed', '7'] },
    xvalue: { source: 'examples/xvalue/byo-verdicts.csv', extra: () => ['--input', `qa_pairs=${path.join(ROOT, 'examples/xvalue/qa-pairs.jsonl')}`] },
    far6: { source: 'test/fixtures/byo/sample.csv', extra: () => ['--draws', '20', '--seed', '7'] },
  };
  for (const [study, s] of Object.entries(studies)) {
    const base = `byo/${study}/baseline`;
    const args = (dir: string, replies = 'rows.csv'): string[] => ['analyze', '--battery', study, '--replies', replies, '--out', 'out', ...s.extra(dir)];
    const rows = (dir: string): string => path.join(dir, 'rows.csv');
    const add = (name: string, expect: Expect, prepare: (dir: string) => Promise<void | string[]>, names = 'rows.csv'): void => {
      out.push({
        group: 'byo', name: `byo/${study}/${name}`, expect, baseline: base, names, compare: 'out',
        setup: async (dir) => { await cp(path.join(ROOT, s.source), rows(dir)); return (await prepare(dir)) ?? args(dir); },
      });
    };
    const csv = async (dir: string): Promise<string[][]> => parseCsv(await readFile(rows(dir), 'utf8'));
    const quote = (v: string): string => (/[",\n\r]/.test(v) ? `"${v.replace(/"/g, '""')}"` : v);
    const writeCsv = (dir: string, table: string[][]): Promise<void> => writeFile(rows(dir), `${table.map((r) => r.map(quote).join(',')).join('\n')}\n`);
    const table = (edit: (t: string[][]) => void) => async (dir: string): Promise<void> => { const t = await csv(dir); edit(t); await writeCsv(dir, t); };
    const cell = (column: string, value: string, row = 1) => table((t) => { const i = t[0]!.indexOf(column); if (i < 0) throw new Error(`no column ${column}`); t[row]![i] = value; });
    add('baseline', 'same', async () => undefined);
    add('rewritten-csv', 'same', table(() => undefined));
    add('bom', 'same', async (dir) => editText(rows(dir), (t) => `\ufeff${t}`));
    add('crlf', 'same', async (dir) => editText(rows(dir), (t) => t.replace(/\r?\n/g, '\r\n')));
    add('trailing-blank-lines', 'same', async (dir) => editText(rows(dir), (t) => `${t}\n\n`));
    add('columns-reordered', 'same', table((t) => { for (const r of t) r.reverse(); }));
    add('jsonl', 'same-or-refuse', async (dir) => {
      const t = await csv(dir);
      const [head, ...body] = t;
      await writeFile(path.join(dir, 'rows.jsonl'), body.map((r) => JSON.stringify(Object.fromEntries(head!.map((h, i) => [h, r[i]])))).join('\n') + '\n');
      await rm(rows(dir));
      return args(dir, 'rows.jsonl');
    }, 'rows.jsonl');
    add('folder-with-readme', 'either', async (dir) => {
      await mkdir(path.join(dir, 'in'));
      await cp(rows(dir), path.join(dir, 'in', 'rows.csv'));
      await writeFile(path.join(dir, 'in', 'README.txt'), 'notes\n');
      return args(dir, 'in');
    }, study === 'ptrue' ? 'in' : 'README.txt');
    add('folder-same-file-twice', 'refuse', async (dir) => {
      await mkdir(path.join(dir, 'in'));
      await cp(rows(dir), path.join(dir, 'in', 'a.csv'));
      await cp(rows(dir), path.join(dir, 'in', 'b.csv'));
      return args(dir, 'in');
    }, study === 'ptrue' ? 'in' : 'b.csv');
    add('duplicated-row', 'refuse', table((t) => t.push([...t[1]!])));
    add('whole-file-twice', 'refuse', table((t) => t.push(...t.slice(1).map((r) => [...r]))));
    add('column-renamed', 'refuse', table((t) => (t[0]![1] = `${t[0]![1]}_x`)));
    add('column-dropped', 'refuse', table((t) => { for (const r of t) r.splice(1, 1); }));
    add('column-extra', 'either', table((t) => t.forEach((r, i) => r.push(i === 0 ? 'extra' : 'x'))));
    add('header-duplicate-column', 'same-or-refuse', table((t) => t.forEach((r) => r.push(r[1]!))));
    add('header-only', 'refuse', table((t) => t.splice(1)));
    add('empty-file', 'refuse', async (dir) => writeFile(rows(dir), ''));
    add('ragged-row', 'refuse', table((t) => t[1]!.pop()));
    add('env-file', 'refuse', async (dir) => writeFile(rows(dir), `OPENAI_API_KEY=${SECRET}\nANTHROPIC_API_KEY=${SECRET}\n`));
    add('env-file-named-env', 'refuse', async (dir) => { await writeFile(path.join(dir, '.env'), `OPENAI_API_KEY=${SECRET}\n`); return args(dir, '.env'); }, '.env');
    add('secret-in-model-cell', 'either', cell('model', SECRET));
    add('secret-assignment-in-cell', 'either', cell('model', `OPENAI_API_KEY=${SECRET}`));
    // A key in every model cell keeps the rows consistent: only the key check stands between it and the result tables.
    add('secret-in-every-model-cell', 'either', table((t) => { const i = t[0]!.indexOf('model'); for (const r of t.slice(1)) r[i] = SECRET; }));
    add('model-cell-empty', 'refuse', cell('model', ''));
    add('model-cell-huge', 'either', cell('model', 'm'.repeat(100_000)));
    add('model-cell-newline', 'either', cell('model', 'a\nb'));
    add('model-cell-formula', 'either', cell('model', '=HYPERLINK("http://x")'));
    add('latin1', 'refuse', async (dir) => editText(rows(dir), (t) => Buffer.from(`${t.trimEnd()}\n${t.split('\n')[1]!.replace(/^[^,]*/, 'modèle-é')}\n`, 'latin1')));
    add('invalid-utf8', 'refuse', async (dir) => editText(rows(dir), (t) => Buffer.concat([Buffer.from(t), Buffer.from([0xff, 0xfe, 0x2c, 0x0a])])));
    add('nul-bytes', 'refuse', async (dir) => editText(rows(dir), (t) => `${t}\0\0\0\n`));
    add('replies-missing', 'refuse', async (dir) => { await rm(rows(dir)); });
    add('replies-directory-empty', 'refuse', async (dir) => { await mkdir(path.join(dir, 'empty')); return args(dir, 'empty'); }, 'empty');
    add('replies-fifo', 'refuse', async (dir) => { await rm(rows(dir)); mkfifo(rows(dir)); });
    add('replies-unknown-extension', 'refuse', async (dir) => { await cp(rows(dir), path.join(dir, 'rows.txt')); return args(dir, 'rows.txt'); }, 'rows.txt');
    add('replies-csv-named-parquet', 'refuse', async (dir) => { await cp(rows(dir), path.join(dir, 'rows.parquet')); return args(dir, 'rows.parquet'); }, 'rows.parquet');
    add('out-is-a-file', 'refuse', async (dir) => { await writeFile(path.join(dir, 'out'), 'x'); }, 'out');
    add('out-is-replies', 'refuse', async (dir) => ['analyze', '--battery', study, '--replies', 'rows.csv', '--out', 'rows.csv', ...s.extra(dir)], 'rows.csv');
    if (study === 'ptrue') {
      for (const [label, v, e] of [['p-comma', '0,67', 'refuse'], ['p-above-1', '1.5', 'refuse'], ['p-negative', '-0.1', 'refuse'], ['p-nan', 'NaN', 'refuse'], ['p-inf', 'Infinity', 'refuse'], ['p-word', 'high', 'refuse'], ['p-percent', '67%', 'refuse'], ['p-hex', '0x1', 'refuse'], ['p-exp', '6.7e-1', 'either'], ['p-spaces', ' 0.67 ', 'either'], ['p-empty', '', 'either']] as const) add(label, e, cell('p_true', v));
      for (const [label, v, e] of [['correct-2', '2', 'refuse'], ['correct-yes', 'yes', 'refuse'], ['correct-true', 'true', 'either'], ['correct-half', '0.5', 'refuse'], ['correct-minus', '-1', 'refuse']] as const) add(label, e, cell('correct', v));
      for (const [label, v, e] of [['q-unknown', 'tlh', 'refuse'], ['q-upper', 'EN', 'either'], ['v-empty', '', 'refuse'], ['benchmark-empty', '', 'refuse']] as const) add(label, e, cell(label.startsWith('q') ? 'q' : label.startsWith('v') ? 'v' : 'benchmark', v));
      add('item-empty', 'refuse', cell('item', ''));
    } else if (study === 'xvalue') {
      for (const [label, col, v, e] of [['verdict-lower', 'verdict', 'pass', 'either'], ['verdict-unknown', 'verdict', 'Maybe', 'refuse'], ['strategy-unknown', 'strategy', 'cot', 'refuse'], ['qa-unknown', 'qa_id', 'xv-zz-99', 'refuse'], ['language-mismatch', 'language', 'ja', 'refuse'], ['category-mismatch', 'category', 'ZZ', 'refuse'], ['qa-empty', 'qa_id', '', 'refuse']] as const) add(label, e, cell(col, v));
      add('qa-pairs-missing', 'refuse', async () => ['analyze', '--battery', study, '--replies', 'rows.csv', '--out', 'out', '--input', 'qa_pairs=nowhere.jsonl'], 'nowhere.jsonl');
      add('qa-pairs-env', 'refuse', async (dir) => { await writeFile(path.join(dir, 'qa.jsonl'), `OPENAI_API_KEY=${SECRET}\n`); return ['analyze', '--battery', study, '--replies', 'rows.csv', '--out', 'out', '--input', 'qa_pairs=qa.jsonl']; }, 'qa.jsonl');
      add('qa-pairs-not-given', 'refuse', async () => ['analyze', '--battery', study, '--replies', 'rows.csv', '--out', 'out'], 'qa_pairs');
      add('input-unknown-name', 'refuse', async (dir) => [...args(dir), '--input', 'stories=rows.csv'], 'stories');
    } else {
      for (const [label, col, v, e] of [['language-unknown', 'language', 'tlh', 'refuse'], ['form-unknown', 'form', 'weird', 'refuse'], ['constraint-unknown', 'constraint', 'weird', 'refuse'], ['repeat-negative', 'repeat', '-1', 'refuse'], ['repeat-word', 'repeat', 'one', 'refuse'], ['option-order-2', 'option_order', '2', 'refuse'], ['named-unknown', 'named', 'Q', 'refuse'], ['readings-bad-json', 'readings', '[{"reader":', 'refuse'], ['reading-map-bad-json', 'reading_map', '{', 'refuse'], ['reading-label-unknown', 'readings', '[{"reader":"rule","label":"maybe"}]', 'refuse'], ['text-empty', 'text', '', 'either'], ['text-huge', 'text', 'Non'.repeat(50_000), 'either']] as const) add(label, e, cell(col, v));
      // FAR-6 also reads Parquet (docs/byo.md): the same rows written by DuckDB, then broken.
      const parquet = (select: string) => async (dir: string): Promise<string[]> => {
        await toParquet(rows(dir), path.join(dir, 'rows.parquet'), select);
        await rm(rows(dir));
        return args(dir, 'rows.parquet');
      };
      add('parquet', 'same', parquet('SELECT * FROM rows'), 'rows.parquet');
      add('parquet-no-rows', 'refuse', parquet('SELECT * FROM rows LIMIT 0'), 'rows.parquet');
      add('parquet-column-dropped', 'refuse', parquet('SELECT * EXCLUDE (model) FROM rows'), 'rows.parquet');
      add('parquet-repeat-as-text', 'refuse', parquet(`SELECT * REPLACE ('one' AS repeat) FROM rows`), 'rows.parquet');
      add('parquet-secret-in-model', 'either', parquet(`SELECT * REPLACE ('${SECRET}' AS model) FROM rows`), 'rows.parquet');
      add('parquet-truncated', 'refuse', async (dir) => {
        const argv = await parquet('SELECT * FROM rows')(dir);
        const bytes = await readFile(path.join(dir, 'rows.parquet'));
        await writeFile(path.join(dir, 'rows.parquet'), bytes.subarray(0, Math.floor(bytes.length / 2)));
        return argv;
      }, 'rows.parquet');
    }
  }
  return out;
}
