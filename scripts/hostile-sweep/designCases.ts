/** The design data files a campaign names: stories and concept pairs (FAR-6), QA pairs (X-Value), items (P(True)). */
import { cp, mkdir, readFile, rm, symlink, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { copyStudy, editDoc, editText, mkfifo, plan, STUDY_FILES } from './inputs.js';
import type { Doc } from './inputs.js';
import { SECRET } from './types.js';
import type { Case, Expect } from './types.js';

export function designCases(): Case[] {
  const out: Case[] = [];
  for (const [study, files] of Object.entries(STUDY_FILES)) {
    const base = `design/${study}/baseline`;
    const data = (dir: string): string => path.join(dir, files.data);
    const add = (name: string, expect: Expect, prepare: (dir: string) => Promise<void | string[]>, names = files.data): void => {
      out.push({ group: 'design', name: `design/${study}/${name}`, expect, baseline: base, names, setup: async (dir) => { await copyStudy(study, dir); return (await prepare(dir)) ?? plan(); } });
    };
    add('baseline', 'same', async () => undefined);
    add('bom', 'same', async (dir) => editText(data(dir), (t) => `\ufeff${t}`));
    add('crlf', 'same', async (dir) => editText(data(dir), (t) => t.replace(/\n/g, '\r\n')));
    add('no-final-newline', 'same', async (dir) => editText(data(dir), (t) => t.trimEnd()));
    add('empty-file', 'refuse', async (dir) => writeFile(data(dir), ''));
    add('directory', 'refuse', async (dir) => { await rm(data(dir)); await mkdir(data(dir)); });
    add('missing', 'refuse', async (dir) => rm(data(dir)));
    add('fifo', 'refuse', async (dir) => { await rm(data(dir)); mkfifo(data(dir)); });
    add('symlink', 'same', async (dir) => { await cp(data(dir), path.join(dir, `real-${files.data}`)); await rm(data(dir)); await symlink(`real-${files.data}`, data(dir)); });
    add('nul-bytes', 'refuse', async (dir) => editText(data(dir), (t) => `${t}\0\0\n`));
    add('env-file', 'refuse', async (dir) => writeFile(data(dir), `OPENAI_API_KEY=${SECRET}\n`));
    add('invalid-utf8', 'refuse', async (dir) => editText(data(dir), (t) => {
      const at = t.indexOf('\n', t.length / 2);
      return Buffer.concat([Buffer.from(t.slice(0, at - 3)), Buffer.from([0xc3, 0x28]), Buffer.from(t.slice(at - 3))]);
    }));
    add('latin1', 'refuse', async (dir) => editText(data(dir), (t) => Buffer.from([...t].map((ch) => (ch.charCodeAt(0) > 0xff ? 'é' : ch)).join(''), 'latin1')));
    if (files.data.endsWith('.jsonl')) {
      const lines = async (dir: string): Promise<Doc[]> => (await readFile(data(dir), 'utf8')).split('\n').filter((l) => l.trim()).map((l) => JSON.parse(l) as Doc);
      const write = (dir: string, rows: Doc[]): Promise<void> => writeFile(data(dir), `${rows.map((r) => JSON.stringify(r)).join('\n')}\n`);
      const editRow = (edit: (row: Doc, rows: Doc[]) => void) => async (dir: string): Promise<void> => {
        const rows = await lines(dir);
        edit(rows[0]!, rows);
        await write(dir, rows);
      };
      add('bad-json-line', 'refuse', async (dir) => editText(data(dir), (t) => t.replace('\n', '\n{"id": "broken",\n')));
      add('blank-line-inside', 'same', async (dir) => editText(data(dir), (t) => t.replace('\n', '\n\n   \n')));
      add('json-array', 'refuse', async (dir) => writeFile(data(dir), JSON.stringify(await lines(dir))));
      add('array-line', 'refuse', async (dir) => editText(data(dir), (t) => t.replace('\n', '\n[1,2,3]\n')));
      add('null-line', 'refuse', async (dir) => editText(data(dir), (t) => t.replace('\n', '\nnull\n')));
      add('duplicate-id', 'refuse', editRow((row, rows) => rows.push({ ...row })));
      add('duplicate-id-other-content', 'refuse', editRow((row, rows) => rows.push({ ...rows[1]!, id: row.id })));
      add('id-empty', 'refuse', editRow((row) => (row.id = '')));
      add('id-number', 'refuse', editRow((row) => (row.id = 7)));
      add('id-newline', 'refuse', editRow((row) => (row.id = 'a\nb')));
      add('unknown-field', 'refuse', editRow((row) => (row.zz_extra = 1)));
      add('secret-in-field', 'refuse', editRow((row) => (row.api_key = SECRET)));
      add('proto-key', 'refuse', async (dir) => editText(data(dir), (t) => t.replace(/^\{/, '{"__proto__": {"polluted": 1}, ')));
      add('duplicate-json-key', 'either', async (dir) => editText(data(dir), (t) => t.replace(/^\{"id": "([^"]+)"/, '{"id": "$1", "id": "$1"')));
      if (study === 'ptrue') {
        add('missing-language', 'refuse', editRow((row) => delete (row.question as Doc).hi));
        add('question-empty', 'refuse', editRow((row) => ((row.question as Doc).en = '')));
        add('question-whitespace', 'refuse', editRow((row) => ((row.question as Doc).en = '   ')));
        add('question-huge', 'either', editRow((row) => ((row.question as Doc).en = 'q'.repeat(200_000))));
        add('answer-out-of-range', 'refuse', editRow((row) => (row.answer = 'E')));
        add('answer-lowercase', 'either', editRow((row) => (row.answer = 'b')));
        add('answer-empty', 'refuse', editRow((row) => (row.answer = '')));
        add('answer-number', 'refuse', editRow((row) => (row.answer = 1)));
        add('answer-two-letters', 'refuse', editRow((row) => (row.answer = 'AB')));
        add('options-three', 'refuse', editRow((row) => ((row.options as Doc).en = ['54', '56', '58'])));
        add('options-one', 'refuse', editRow((row) => { for (const l of Object.keys(row.options as Doc)) (row.options as Doc)[l] = ['56']; row.answer = 'A'; }));
        add('options-duplicate', 'either', editRow((row) => { for (const l of Object.keys(row.options as Doc)) (row.options as Doc)[l] = ['56', '56', '58', '64']; }));
        add('options-empty-string', 'refuse', editRow((row) => ((row.options as Doc).en = ['', '56', '58', '64'])));
        add('options-missing-language', 'refuse', editRow((row) => delete (row.options as Doc).hi));
        add('kind-unknown', 'refuse', editRow((row) => (row.kind = 'essay')));
        add('short-answer-no-answer', 'refuse', editRow((_row, rows) => { const r = rows.find((x) => x.kind !== 'multiple_choice')!; delete r.answer; delete r.answers; }));
        add('items-csv-instead', 'same', async (dir) => editText(path.join(dir, 'demo.yaml'), (t) => t.replace('items: items.jsonl', 'items: items.csv')), 'items.csv');
      } else {
        add('language-unknown', 'refuse', editRow((row) => (row.language = 'tlh')));
        add('language-case', 'refuse', editRow((row) => (row.language = 'EN')));
        add('category-unknown', 'refuse', editRow((row) => (row.category = 'ZZ')));
        add('overall-lowercase', 'either', editRow((row) => ((row.annotation as Doc).overall = 'pass')));
        add('overall-unknown', 'refuse', editRow((row) => ((row.annotation as Doc).overall = 'Maybe')));
        add('checkpoint-missing', 'refuse', editRow((row) => delete ((row.annotation as Doc).checkpoints as Doc).A));
        add('checkpoint-extra', 'refuse', editRow((row) => (((row.annotation as Doc).checkpoints as Doc).Z = 'Pass')));
        add('scope-unknown', 'refuse', editRow((row) => ((row.annotation as Doc).scope = 'Galactic')));
        add('answer-huge', 'either', editRow((row) => (row.answer = 'a'.repeat(200_000))));
        add('question-empty', 'refuse', editRow((row) => (row.question = '')));
        add('annotation-missing', 'refuse', editRow((row) => delete row.annotation));
        add('qa-pairs-list-twice', 'refuse', async (dir) => editText(path.join(dir, 'demo.yaml'), (t) => t.replace(/qa_pairs: qa-pairs.jsonl/, 'qa_pairs: [qa-pairs.jsonl, qa-pairs.jsonl]')));
      }
    } else {
      // FAR-6: stories.yaml and concept-pairs.yaml.
      const pairs = (dir: string): string => path.join(dir, 'concept-pairs.yaml');
      const story = (edit: (s: Doc, all: Doc[]) => void) => (dir: string): Promise<void> => editDoc(data(dir), (d) => edit((d.stories as Doc[])[0]!, d.stories as Doc[]));
      add('duplicate-story-id', 'refuse', story((s, all) => all.push(structuredClone(s))));
      add('story-missing-language', 'refuse', story((s) => delete (s.renderings as Doc).ja));
      add('story-group-unknown', 'refuse', story((s) => (s.group = 'weird')));
      add('story-text-empty', 'refuse', story((s) => (((s.renderings as Doc).en as Doc).text = '')));
      add('story-agent-not-in-text', 'either', story((s) => (((s.renderings as Doc).en as Doc).agent = 'Zebulon')));
      add('story-agent-empty', 'refuse', story((s) => (((s.renderings as Doc).en as Doc).agent = '')));
      add('story-text-huge', 'either', story((s) => (((s.renderings as Doc).en as Doc).text = `Finn ${'w'.repeat(200_000)}`)));
      add('story-text-number', 'refuse', story((s) => (((s.renderings as Doc).en as Doc).text = 42)));
      add('story-id-number', 'refuse', story((s) => (s.id = 42)));
      add('stories-not-a-list', 'refuse', async (dir) => writeFile(data(dir), 'stories: hello\n'));
      add('stories-empty', 'refuse', async (dir) => writeFile(data(dir), 'stories: []\n'));
      add('tab-indent', 'refuse', async (dir) => editText(data(dir), (t) => t.replace(/\n {2}- id:/, '\n\t- id:')));
      add('duplicate-key', 'refuse', async (dir) => editText(data(dir), (t) => t.replace(/^(\s+)group: acceptable$/m, '$1group: acceptable\n$1group: violation')));
      add('pairs-duplicate-id', 'refuse', async (dir) => editDoc(pairs(dir), (d) => (d.pairs as Doc[]).push(structuredClone((d.pairs as Doc[])[0]!))), 'concept-pairs.yaml');
      add('pairs-empty', 'refuse', async (dir) => writeFile(pairs(dir), 'pairs: []\n'), 'concept-pairs.yaml');
      add('pairs-bom-crlf', 'same', async (dir) => editText(pairs(dir), (t) => `\ufeff${t.replace(/\n/g, '\r\n')}`));
      add('pairs-missing', 'refuse', async (dir) => rm(pairs(dir)), 'concept-pairs.yaml');
      add('pairs-directory', 'refuse', async (dir) => { await rm(pairs(dir)); await mkdir(pairs(dir)); }, 'concept-pairs.yaml');
      add('pairs-fifo', 'refuse', async (dir) => { await rm(pairs(dir)); mkfifo(pairs(dir)); }, 'concept-pairs.yaml');
      add('pairs-alias-bomb', 'refuse', async (dir) => editText(pairs(dir), (t) => {
        const levels = ['a: &a ["x","x","x","x","x","x","x","x","x","x"]'];
        for (let i = 1; i < 9; i++) levels.push(`${String.fromCharCode(97 + i)}: &${String.fromCharCode(97 + i)} [${Array(10).fill(`*${String.fromCharCode(96 + i)}`).join(',')}]`);
        return `${t}\n${levels.join('\n')}\n`;
      }), 'concept-pairs.yaml');
    }
  }
  return out;
}

