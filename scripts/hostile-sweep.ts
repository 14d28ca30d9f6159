/**
 * A sweep of hostile inputs against the CLI, on the local path only (simulated providers, no
 * network): mutated campaign files, design data files, bring-your-own reply files and flags, each
 * made from the three demos in a temporary copy (examples/ is never edited). Every case runs the
 * real binary in its own process with a timeout and is sorted into
 *   ok        exit 0 and its invariant holds (output equal to the unmutated run's where the
 *             mutation must not matter), or a clear refusal (exit non-zero, a message, no stack)
 *   wrong     exit 0 where a refusal was due, or results that differ from the unmutated run's
 *   vague     refused, but without naming the file the case broke
 *   crash     a stack trace, or an exit code the CLI does not document
 *   hang      still running at the timeout
 *   secret    a planted secret appears in the output
 *
 *   node --import tsx scripts/hostile-sweep.ts [--only GROUP[,GROUP]] [--out DIR] [--jobs N] [--timeout S] [--list]
 *
 * Groups: yaml, design, byo, flags. Kept out of the test suite on purpose: it takes minutes.
 */
import { spawn } from 'node:child_process';
import { execFileSync } from 'node:child_process';
import { chmod, cp, mkdir, mkdtemp, readdir, readFile, rm, symlink, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { parseArgs } from 'node:util';
import { fileURLToPath } from 'node:url';
import { parse as parseYaml, stringify } from 'yaml';

const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
const BIN = path.join(ROOT, 'bin/sondage.mjs');
/** Planted in files given by mistake; it must never come back in any output. */
const SECRET = 'sk-proj-SWEEPSECRET0a1b2c3d4e5f60718293';
const DOCUMENTED_EXITS = new Set([0, 1, 2, 3, 4, 5, 6, 7, 130]);
const GROUPS = ['yaml', 'design', 'byo', 'flags'] as const;
type Group = (typeof GROUPS)[number];

/** What an exit 0 must show: `refuse` (exit 0 is wrong), `same` (output equal to the baseline's), `same-or-refuse` (a refusal, or the baseline's output), `either`. */
type Expect = 'refuse' | 'same' | 'same-or-refuse' | 'either';

interface Case {
  readonly group: Group;
  readonly name: string;
  readonly expect: Expect;
  /** Prepares the case's folder; returns the argv (relative paths are inside the folder). */
  readonly setup: (dir: string) => Promise<string[]>;
  /** The baseline case whose output `same` compares against. */
  readonly baseline?: string;
  /** A name the refusal must contain (the file broken). */
  readonly names?: string;
  /** Result files to compare for `same` (under the folder); default: stdout. */
  readonly compare?: string;
}

interface Outcome {
  readonly c: Case;
  readonly verdict: 'ok' | 'wrong' | 'vague' | 'crash' | 'hang' | 'secret';
  readonly code: number | string;
  readonly why: string;
  readonly argv: readonly string[];
  readonly dir: string;
  readonly fingerprint: string;
}

// ---------------------------------------------------------------------------------------------
// Inputs

type Doc = Record<string, unknown>;
const STUDY_FILES: Record<string, { main: string; data: string }> = {
  far6: { main: 'demo.yaml', data: 'stories.yaml' },
  xvalue: { main: 'demo.yaml', data: 'qa-pairs.jsonl' },
  ptrue: { main: 'demo.yaml', data: 'items.jsonl' },
};

/** Copies examples/<study> into dir with data_dir pointing inside it, and a smaller design so that a plan is quick. */
async function copyStudy(study: string, dir: string): Promise<void> {
  await cp(path.join(ROOT, 'examples', study), dir, { recursive: true });
  const file = path.join(dir, 'demo.yaml');
  const text = await readFile(file, 'utf8');
  await writeFile(file, text.replace(/^data_dir: .*$/m, 'data_dir: data'));
}

async function editText(file: string, edit: (t: string) => string | Buffer): Promise<void> {
  await writeFile(file, edit(await readFile(file, 'utf8')));
}
async function editDoc(file: string, edit: (d: Doc) => void): Promise<void> {
  const doc = parseYaml(await readFile(file, 'utf8')) as Doc;
  edit(doc);
  await writeFile(file, stringify(doc));
}
const RAW = '__SWEEP_RAW__';
/** Sets a field to a raw YAML scalar (`.nan`, `1e400`, `0x10` …), which a JS value cannot express. */
async function setRaw(file: string, at: (string | number)[], raw: string): Promise<void> {
  const doc = parseYaml(await readFile(file, 'utf8')) as Doc;
  let node: Record<string | number, unknown> = doc;
  for (const key of at.slice(0, -1)) node = node[key] as Record<string | number, unknown>;
  node[at[at.length - 1]!] = RAW;
  await writeFile(file, stringify(doc).replace(RAW, raw));
}
function mkfifo(file: string): void {
  execFileSync('mkfifo', [file]);
}

const plan = (): string[] => ['plan', 'demo.yaml'];

function yamlCases(): Case[] {
  const out: Case[] = [];
  for (const study of Object.keys(STUDY_FILES)) {
    const base = `yaml/${study}/baseline`;
    const add = (name: string, expect: Expect, prepare: (dir: string) => Promise<string[] | void>, names = 'demo.yaml'): void => {
      out.push({
        group: 'yaml',
        name: `yaml/${study}/${name}`,
        expect,
        baseline: base,
        names,
        setup: async (dir) => {
          await copyStudy(study, dir);
          return (await prepare(dir)) ?? plan();
        },
      });
    };
    add('baseline', 'same', async () => undefined);
    const f = (dir: string): string => path.join(dir, 'demo.yaml');
    // Numbers of every hostile kind in every numeric field the demo has.
    // Two fields per study, six in all, so that the default sweep stays within minutes.
    const numeric: (string | number)[][] = {
      far6: [['seed'], ['budget_usd']],
      xvalue: [['concurrency'], ['models', 0, 'price', 'input_per_mtok']],
      ptrue: [['design', 'max_tokens'], ['models', 1, 'price', 'output_per_mtok']],
    }[study]!;
    const bad: [string, string, Expect][] = [
      ['nan', '.nan', 'refuse'], ['NaN-string', '"NaN"', 'refuse'], ['inf', '.inf', 'refuse'], ['minus-inf', '-.inf', 'refuse'],
      ['Infinity-string', '"Infinity"', 'refuse'], ['1e400', '1e400', 'refuse'], ['negative', '-1', 'refuse'],
      ['arabic-digits', '"١٢"', 'refuse'], ['empty-string', '""', 'refuse'], ['null', '~', 'refuse'], ['bool', 'true', 'refuse'],
      ['hex', '0x10', 'either'], ['zero', '0', 'either'], ['2^70', '1180591620717411303424', 'either'], ['fraction', '0.5', 'either'],
      ['numeric-string', '"12"', 'either'],
    ];
    for (const at of numeric) {
      for (const [label, raw, expect] of bad) {
        // A seed is any number; 0 or a fraction seeds too. Prices may be 0 (a free model).
        let e = expect;
        if (at[0] === 'seed' && ['negative', 'zero', 'fraction', '2^70', 'hex'].includes(label)) e = 'either';
        if (at[0] === 'seed' && label === '1e400') e = 'refuse';
        add(`${at.join('.')}=${label}`, e, async (dir) => setRaw(f(dir), at, raw));
      }
    }
    // Names and ids: paths, control characters, unicode.
    const names: [string, string, Expect][] = [
      ['dotdot', '"../escape"', 'refuse'], ['slash', '"a/b"', 'refuse'], ['empty', '""', 'refuse'], ['nul', '"a\\0b"', 'refuse'],
      ['newline', '"a\\nb"', 'refuse'], ['rtl-override', '"demo\\u202e"', 'either'], ['zero-width', '"de\\u200bmo"', 'either'],
      ['emoji', '"démo-🎲"', 'either'], ['long', `"${'n'.repeat(5000)}"`, 'either'], ['spaces', '"  "', 'refuse'],
    ];
    for (const [label, raw, expect] of names) add(`name=${label}`, expect, async (dir) => setRaw(f(dir), ['name'], raw));
    if (study === 'xvalue') for (const [label, raw, expect] of names) add(`models.0.id=${label}`, expect, async (dir) => setRaw(f(dir), ['models', 0, 'id'], raw));
    add('models.duplicate-id', 'refuse', async (dir) => editDoc(f(dir), (d) => ((d.models as Doc[])[1]!.id = (d.models as Doc[])[0]!.id)));
    add('models.empty-list', 'refuse', async (dir) => editDoc(f(dir), (d) => (d.models = [])));
    add('design.languages-duplicate', 'refuse', async (dir) => editDoc(f(dir), (d) => ((d.design as Doc).languages = ['en', 'en'])));
    add('design.languages-empty', 'refuse', async (dir) => editDoc(f(dir), (d) => ((d.design as Doc).languages = [])));
    add('design.languages-case', 'refuse', async (dir) => editDoc(f(dir), (d) => ((d.design as Doc).languages = ['EN'])));
    add('design.languages-unknown', 'refuse', async (dir) => editDoc(f(dir), (d) => ((d.design as Doc).languages = ['en', 'tlh'])));
    add('battery=unknown', 'refuse', async (dir) => setRaw(f(dir), ['battery'], 'far7'));
    add('battery=other-study', 'refuse', async (dir) => setRaw(f(dir), ['battery'], study === 'far6' ? 'ptrue' : 'far6'));
    add('provider=unknown', 'refuse', async (dir) => setRaw(f(dir), ['models', 0, 'provider'], 'simulatd'));
    add('data_dir=the-campaign-file', 'refuse', async (dir) => setRaw(f(dir), ['data_dir'], 'demo.yaml'));
    // The file as text: encodings, line ends, YAML features.
    add('bom', 'same', async (dir) => editText(f(dir), (t) => `\ufeff${t}`));
    add('crlf', 'same', async (dir) => editText(f(dir), (t) => t.replace(/\n/g, '\r\n')));
    add('trailing-spaces', 'same', async (dir) => editText(f(dir), (t) => t.replace(/\n/g, '   \n')));
    add('no-final-newline', 'same', async (dir) => editText(f(dir), (t) => t.trimEnd()));
    add('anchor-alias', 'same', async (dir) => editText(f(dir), (t) => t.replace(/^(\s*)price: (\{[^}]*\})/m, '$1price: &p $2').replace(/^(\s*)seed: (\d+)$/m, '$1seed: $2')));
    add('merge-key', 'either', async (dir) => editText(f(dir), (t) => t.replace(/^(\s*)price: (\{[^}]*\})/m, '$1price: &p $2').replace(/(\n\s*)price: (\{[^}]*\})(?![\s\S]*price: &p)/, '$1price: { <<: *p }')));
    add('duplicate-key', 'refuse', async (dir) => editText(f(dir), (t) => t.replace(/^seed: .*$/m, (m) => `${m}\nseed: 1`)));
    add('tab-indent', 'refuse', async (dir) => editText(f(dir), (t) => t.replace(/\n {2}- id:/, '\n\t- id:')));
    add('empty-file', 'refuse', async (dir) => writeFile(f(dir), ''));
    add('only-comments', 'refuse', async (dir) => writeFile(f(dir), '# nothing\n'));
    add('yaml-null', 'refuse', async (dir) => writeFile(f(dir), '~\n'));
    add('yaml-list', 'refuse', async (dir) => writeFile(f(dir), '- 1\n- 2\n'));
    add('yaml-scalar', 'refuse', async (dir) => writeFile(f(dir), 'hello\n'));
    add('two-documents', 'refuse', async (dir) => editText(f(dir), (t) => `${t}\n---\n${t}`));
    add('second-document-empty', 'either', async (dir) => editText(f(dir), (t) => `${t}\n---\n`));
    add('alias-bomb', 'refuse', async (dir) =>
      editText(f(dir), (t) => {
        const levels = ['a: &a ["x","x","x","x","x","x","x","x","x","x"]'];
        for (let i = 1; i < 9; i++) levels.push(`${String.fromCharCode(97 + i)}: &${String.fromCharCode(97 + i)} [${Array(10).fill(`*${String.fromCharCode(96 + i)}`).join(',')}]`);
        return `${t}\nbomb:\n${levels.map((l) => `  ${l}`).join('\n')}\n`;
      }));
    add('invalid-utf8-description', 'either', async (dir) => editText(f(dir), (t) => Buffer.concat([Buffer.from(t.replace(/^description: .*$/m, 'description: bad ')), Buffer.from([0xc3, 0x28, 0x0a])])));
    add('invalid-utf8-name', 'refuse', async (dir) => editText(f(dir), (t) => {
      const [head, tail] = t.split(/^name: .*$/m);
      return Buffer.concat([Buffer.from(`${head}name: de`), Buffer.from([0xff, 0xfe]), Buffer.from(`mo${tail}`)]);
    }));
    add('utf16le', 'either', async (dir) => editText(f(dir), (t) => Buffer.concat([Buffer.from([0xff, 0xfe]), Buffer.from(t, 'utf16le')])));
    add('nul-bytes', 'refuse', async (dir) => editText(f(dir), (t) => `${t}\0\0\0`));
    add('huge-description', 'either', async (dir) => setRaw(f(dir), ['description'], `"${'d'.repeat(4_000_000)}"`));
    add('deep-flow', 'refuse', async (dir) => editText(f(dir), (t) => `${t}\nextra: ${'['.repeat(5000)}${']'.repeat(5000)}\n`));
    // The file system.
    add('directory', 'refuse', async (dir) => { await rm(f(dir)); await mkdir(f(dir)); });
    add('missing', 'refuse', async (dir) => { await rm(f(dir)); });
    add('symlink-same-folder', 'same', async (dir) => { await symlink('demo.yaml', path.join(dir, 'link.yaml')); return ['plan', 'link.yaml']; }, 'link.yaml');
    add('symlink-dangling', 'refuse', async (dir) => { await symlink('nowhere.yaml', path.join(dir, 'link.yaml')); return ['plan', 'link.yaml']; }, 'link.yaml');
    add('symlink-loop', 'refuse', async (dir) => { await symlink('b.yaml', path.join(dir, 'a.yaml')); await symlink('a.yaml', path.join(dir, 'b.yaml')); return ['plan', 'a.yaml']; }, 'a.yaml');
    add('fifo', 'refuse', async (dir) => { await rm(f(dir)); mkfifo(f(dir)); });
    add('dev-null', 'refuse', async () => ['plan', '/dev/null'], '/dev/null');
    add('unreadable', 'either', async (dir) => chmod(f(dir), 0o000));
    add('folder-with-unicode-and-spaces', 'same', async (dir) => {
      const sub = path.join(dir, 'ラン dossier é');
      await mkdir(sub);
      for (const name of await readdir(dir)) if (name !== 'ラン dossier é') await cp(path.join(dir, name), path.join(sub, name), { recursive: true });
      return ['plan', path.join('ラン dossier é', 'demo.yaml')];
    });
    add('env-file-as-campaign', 'refuse', async (dir) => { await writeFile(path.join(dir, '.env'), `OPENAI_API_KEY=${SECRET}\nAWS_SECRET_ACCESS_KEY=${SECRET}\n`); return ['plan', '.env']; }, '.env');
    add('secret-in-unknown-field', 'refuse', async (dir) => editText(f(dir), (t) => `${t}\napi_key: ${SECRET}\n`));
    add('secret-as-provider', 'refuse', async (dir) => setRaw(f(dir), ['models', 0, 'provider'], SECRET));
  }
  return out;
}

function designCases(): Case[] {
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

/** Reply files: each study's example rows, as CSV and JSONL, mutated. Results compared to the baseline's CSVs. */
function byoCases(): Case[] {
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
    }
  }
  return out;
}

/** RFC 4180 CSV (quoted fields, doubled quotes, newlines inside quotes): enough to rewrite the example files. */
function parseCsv(text: string): string[][] {
  const out: string[][] = [];
  let row: string[] = [];
  let field = '';
  let quoted = false;
  for (let i = 0; i < text.length; i++) {
    const ch = text[i]!;
    if (quoted) {
      if (ch === '"' && text[i + 1] === '"') {
        field += '"';
        i++;
      } else if (ch === '"') quoted = false;
      else field += ch;
    } else if (ch === '"') quoted = true;
    else if (ch === ',') {
      row.push(field);
      field = '';
    } else if (ch === '\n' || ch === '\r') {
      if (ch === '\r' && text[i + 1] === '\n') i++;
      row.push(field);
      out.push(row);
      row = [];
      field = '';
    } else field += ch;
  }
  if (field || row.length) {
    row.push(field);
    out.push(row);
  }
  return out.filter((r) => r.length > 1 || r[0] !== '');
}

/** A tiny X-Value campaign (one model, one language) for flags of `run`, so that an accepted flag finishes quickly. */
async function tinyCampaign(dir: string): Promise<void> {
  await copyStudy('xvalue', dir);
  await editDoc(path.join(dir, 'demo.yaml'), (d) => {
    (d.design as Doc).languages = ['en'];
    d.models = (d.models as Doc[]).slice(0, 1);
  });
}

function flagCases(): Case[] {
  const out: Case[] = [];
  const commands = ['run', 'plan', 'analyze', 'start', 'status', 'stop', 'results', 'purge', 'batteries', 'new', 'view', 'schema'];
  const add = (name: string, expect: Expect, argv: (dir: string) => Promise<string[]> | string[], names?: string): void => {
    out.push({ group: 'flags', name: `flags/${name}`, expect, ...(names ? { names } : {}), setup: async (dir) => { await tinyCampaign(dir); return argv(dir); } });
  };
  add('no-command', 'either', () => []);
  add('unknown-command', 'refuse', () => ['frobnicate'], 'frobnicate');
  add('top-help', 'either', () => ['--help']);
  for (const c of commands) {
    add(`${c}/--help`, 'either', () => [c, '--help']);
    add(`${c}/-h`, 'either', () => [c, '-h']);
    add(`${c}/unknown-flag`, 'refuse', () => [c, 'demo.yaml', '--bogus-flag'], 'bogus-flag');
    add(`${c}/secret-as-flag`, 'refuse', () => [c, `--api-key=${SECRET}`]);
    add(`${c}/end-of-options`, 'either', () => [c, 'demo.yaml', '--']);
  }
  const run = (...flags: string[]) => (): string[] => ['run', 'demo.yaml', '--quiet', '--data-dir', 'data', ...flags];
  for (const [flag, values] of [['--threads', ['0', '-1', 'abc', '1.5', '', '1e9', 'Infinity']], ['--max-wait', ['-1', 'abc', '', 'NaN', 'Infinity']], ['--poll-interval', ['0', '-1', 'abc', '', 'NaN']]] as const) {
    for (const v of values) add(`run/${flag}=${v || 'empty'}`, 'refuse', run(`${flag}=${v}`), flag.slice(2));
  }
  add('run/data-dir-empty', 'refuse', () => ['run', 'demo.yaml', '--data-dir=']);
  add('run/data-dir-is-campaign', 'refuse', () => ['run', 'demo.yaml', '--quiet', '--data-dir', 'demo.yaml'], 'demo.yaml');
  add('run/two-campaigns', 'refuse', () => ['run', 'demo.yaml', 'demo.yaml', '--quiet']);
  add('run/flag-twice', 'either', run('--threads', '1', '--threads', '2'));
  add('run/no-campaign', 'refuse', () => ['run']);
  add('run/campaign-is-folder', 'refuse', () => ['run', '.']);
  add('run/ok', 'either', run('--threads', '1'));
  const byo = (...flags: string[]) => (): string[] => ['analyze', '--battery', 'ptrue', '--replies', path.join(ROOT, 'examples/ptrue/byo-rows.csv'), '--out', 'out', ...flags];
  // P(True) takes 0 draws (no bootstrap; its settings' minDraws).
  for (const v of ['0', '-5', 'abc', '1.5', '', '1e12', '99999999999999999999']) add(`analyze/--draws=${v || 'empty'}`, v === '0' ? 'either' : 'refuse', byo(`--draws=${v}`), 'draws');
  for (const v of ['abc', '', '1e400', '-1.5', 'NaN']) add(`analyze/--seed=${v || 'empty'}`, 'refuse', byo('--draws', '20', `--seed=${v}`), 'seed');
  add('analyze/battery-unknown', 'refuse', () => ['analyze', '--battery', 'far7', '--replies', 'x.csv', '--out', 'out'], 'far7');
  add('analyze/battery-empty', 'refuse', () => ['analyze', '--battery=', '--replies', path.join(ROOT, 'examples/ptrue/byo-rows.csv'), '--out', 'out']);
  add('analyze/replies-without-out', 'refuse', () => ['analyze', '--battery', 'ptrue', '--replies', path.join(ROOT, 'examples/ptrue/byo-rows.csv')]);
  add('analyze/out-without-replies', 'refuse', () => ['analyze', '--battery', 'ptrue', '--out', 'out']);
  add('analyze/replies-without-battery', 'refuse', () => ['analyze', '--replies', path.join(ROOT, 'examples/ptrue/byo-rows.csv'), '--out', 'out']);
  add('analyze/replies-and-campaign', 'refuse', () => ['analyze', 'demo.yaml', '--battery', 'ptrue', '--replies', path.join(ROOT, 'examples/ptrue/byo-rows.csv'), '--out', 'out']);
  add('analyze/input-no-equals', 'refuse', byo('--draws', '20', '--input', 'qa_pairs'), 'qa_pairs');
  add('analyze/input-empty-file', 'refuse', byo('--draws', '20', '--input', 'qa_pairs='), 'qa_pairs');
  add('analyze/out-empty', 'refuse', () => ['analyze', '--battery', 'ptrue', '--replies', path.join(ROOT, 'examples/ptrue/byo-rows.csv'), '--out=']);
  add('analyze/campaign-no-data', 'either', () => ['analyze', 'demo.yaml', '--data-dir', 'nothing-here']);
  add('analyze/drop-bad-rows-with-campaign', 'refuse', () => ['analyze', 'demo.yaml', '--drop-bad-rows']);
  for (const v of ['abc', '-1', '', '1e9']) add(`status/--failures=${v || 'empty'}`, 'refuse', () => ['status', 'demo.yaml', `--failures=${v}`], 'failures');
  add('status/nothing-collected', 'either', () => ['status', 'demo.yaml']);
  add('stop/nothing-running', 'either', () => ['stop', 'demo.yaml']);
  add('purge/without-yes', 'either', () => ['purge', 'demo.yaml']);
  add('purge/data-dir-is-root', 'refuse', () => ['purge', 'demo.yaml', '--data-dir', '/', '--yes']);
  add('purge/data-dir-is-campaign-folder', 'refuse', () => ['purge', 'demo.yaml', '--data-dir', '.', '--yes']);
  for (const v of ['abc', '-1', '99999', '', '1.5']) add(`view/--port=${v || 'empty'}`, 'refuse', () => ['view', 'demo.yaml', `--port=${v}`], 'port');
  add('new/dir-is-a-file', 'refuse', () => ['new', 'far6', '--dir', 'demo.yaml'], 'demo.yaml');
  add('new/unknown-battery', 'refuse', () => ['new', 'far7', '--dir', 'n'], 'far7');
  add('new/no-battery', 'either', () => ['new']);
  add('results/without-aws-stack', 'refuse', () => ['results', 'demo.yaml', '--outputs', 'nowhere.json']);
  add('start/without-aws', 'refuse', () => ['start', 'demo.yaml']);
  add('schema/extra-positional', 'either', () => ['schema', 'extra']);
  add('batteries/extra-positional', 'either', () => ['batteries', 'extra']);
  add('plan/aws', 'either', () => ['plan', 'demo.yaml', '--aws']);
  return out;
}

// ---------------------------------------------------------------------------------------------
// Running and judging

const STACK = /^\s+at .+(\(.*:\d+:\d+\)|:\d+:\d+)$|node:internal|Uncaught|UnhandledPromiseRejection/m;

function runCli(argv: readonly string[], cwd: string, timeoutMs: number): Promise<{ code: number | string; stdout: string; stderr: string }> {
  return new Promise((resolve) => {
    const child = spawn(process.execPath, [BIN, ...argv], { cwd, stdio: ['ignore', 'pipe', 'pipe'], detached: true, env: { ...process.env, NO_COLOR: '1', FORCE_COLOR: '0' } });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (d: Buffer) => (stdout += d.toString('utf8')));
    child.stderr.on('data', (d: Buffer) => (stderr += d.toString('utf8')));
    const timer = setTimeout(() => {
      try { process.kill(-child.pid!, 'SIGKILL'); } catch { /* already gone */ }
      resolve({ code: 'timeout', stdout, stderr });
    }, timeoutMs);
    child.on('exit', (code, signal) => {
      clearTimeout(timer);
      // Let the pipes drain.
      setImmediate(() => resolve({ code: code ?? signal ?? -1, stdout, stderr }));
    });
  });
}

async function resultFingerprint(dir: string, c: Case, stdout: string): Promise<string> {
  if (!c.compare) return stdout.split(dir).join('<DIR>');
  const folder = path.join(dir, c.compare);
  const files = (await readdir(folder).catch(() => [] as string[])).filter((f) => f.endsWith('.csv') && f !== 'import_issues.csv').sort();
  const parts = await Promise.all(files.map(async (f) => `== ${f}\n${await readFile(path.join(folder, f), 'utf8')}`));
  return parts.join('\n');
}

async function judge(c: Case, dir: string, timeoutMs: number, baselines: Map<string, string>): Promise<Outcome> {
  let argv: string[];
  try {
    argv = await c.setup(dir);
  } catch (err) {
    return { c, verdict: 'crash', code: 'setup', why: `the sweep could not prepare the case: ${(err as Error).message}`, argv: [], dir, fingerprint: '' };
  }
  const r = await runCli(argv, dir, timeoutMs);
  const all = `${r.stdout}\n${r.stderr}`;
  const o = (verdict: Outcome['verdict'], why: string, fingerprint = ''): Outcome => ({ c, verdict, code: r.code, why, argv, dir, fingerprint });
  if (r.code === 'timeout') return o('hang', `still running after ${timeoutMs / 1000} s`);
  if (all.includes('SWEEPSECRET')) return o('secret', 'a planted secret is in the output');
  if (STACK.test(all)) return o('crash', `stack trace: ${(all.match(STACK)?.[0] ?? '').trim().slice(0, 120)}`);
  if (typeof r.code !== 'number' || !DOCUMENTED_EXITS.has(r.code)) return o('crash', `undocumented exit ${r.code}: ${r.stderr.trim().split('\n')[0]?.slice(0, 160) ?? ''}`);
  if (r.code === 0) {
    if (c.expect === 'refuse') return o('wrong', `accepted (exit 0) where a refusal was due: ${r.stdout.trim().split('\n')[0]?.slice(0, 160) ?? ''}`);
    const fingerprint = await resultFingerprint(dir, c, r.stdout);
    if ((c.expect === 'same' || c.expect === 'same-or-refuse') && c.baseline && c.baseline !== c.name) {
      const want = baselines.get(c.baseline);
      if (want === undefined) return o('wrong', `no baseline ${c.baseline} to compare with`);
      if (want !== fingerprint) return o('wrong', `exit 0, results differ from ${c.baseline}`, fingerprint);
    }
    return o('ok', 'exit 0', fingerprint);
  }
  if (c.expect === 'same') return o('wrong', `refused where the unmutated run succeeds: ${r.stderr.trim().split('\n')[0]?.slice(0, 200) ?? ''}`);
  if (!r.stderr.trim()) return o('vague', `exit ${r.code} with nothing on stderr`);
  if (c.names && !all.includes(c.names)) return o('vague', `exit ${r.code}, the message does not name ${c.names}: ${r.stderr.trim().split('\n')[0]?.slice(0, 200) ?? ''}`);
  return o('ok', `refused: ${r.stderr.trim().split('\n')[0]?.slice(0, 120) ?? ''}`);
}

async function main(): Promise<number> {
  const { values } = parseArgs({ options: { only: { type: 'string' }, out: { type: 'string' }, jobs: { type: 'string' }, timeout: { type: 'string' }, list: { type: 'boolean' }, help: { type: 'boolean', short: 'h' }, match: { type: 'string' } } });
  if (values.help) {
    process.stdout.write(`usage: node --import tsx scripts/hostile-sweep.ts [--only GROUP[,GROUP]] [--match TEXT] [--out DIR] [--jobs N] [--timeout S] [--list]

Runs the CLI on several hundred hostile inputs made from the three demos (in temporary copies) and
sorts each outcome: ok (exit 0 with its invariant, or a clear refusal), wrong (exit 0 where a
refusal was due, or results unlike the unmutated run's), vague (a refusal not naming the file),
crash (stack trace or undocumented exit code), hang (timeout), secret (a planted secret echoed).
  --only    groups: ${GROUPS.join(', ')} (default: all)
  --match   only the cases whose name contains TEXT
  --out     keep the case folders and write report.tsv there (default: a temporary folder, removed)
  --jobs    cases at a time (default 2)
  --timeout seconds per case before it counts as a hang (default 60)
  --list    print the case names and stop
Exit status: 0 when every case is ok, 1 otherwise.
`);
    return 0;
  }
  const only = values.only ? values.only.split(',') : [...GROUPS];
  for (const g of only) if (!(GROUPS as readonly string[]).includes(g)) throw new Error(`--only: unknown group ${g} (groups: ${GROUPS.join(', ')})`);
  const all = [...yamlCases(), ...designCases(), ...byoCases(), ...flagCases()];
  let cases = all.filter((c) => only.includes(c.group));
  if (values.match) cases = cases.filter((c) => c.name.includes(values.match!) || c.name.endsWith('/baseline'));
  // Baselines of the selected cases run first: the others compare with them.
  const needed = new Set(cases.map((c) => c.baseline).filter(Boolean));
  cases = [...all.filter((c) => needed.has(c.name) && !cases.includes(c)), ...cases];
  const ordered = [...cases.filter((c) => c.name === c.baseline), ...cases.filter((c) => c.name !== c.baseline)];
  if (values.list) {
    process.stdout.write(`${ordered.map((c) => `${c.name}\t${c.expect}`).join('\n')}\n`);
    return 0;
  }
  const jobs = Math.max(1, Number(values.jobs ?? 2));
  const timeoutMs = Math.max(1, Number(values.timeout ?? 60)) * 1000;
  const root = values.out ? path.resolve(values.out) : await mkdtemp(path.join(os.tmpdir(), 'hostile-sweep-'));
  await mkdir(root, { recursive: true });
  const baselines = new Map<string, string>();
  const outcomes: Outcome[] = [];
  const started = Date.now();
  const runOne = async (c: Case, i: number): Promise<void> => {
    const dir = path.join(root, `${String(i).padStart(4, '0')}-${c.name.replace(/[^\w.=-]+/g, '_').slice(0, 80)}`);
    await mkdir(dir, { recursive: true });
    const outcome = await judge(c, dir, timeoutMs, baselines);
    if (c.name === c.baseline) {
      if (outcome.verdict !== 'ok') throw new Error(`baseline ${c.name} failed: ${outcome.why}`);
      baselines.set(c.name, outcome.fingerprint);
    }
    outcomes.push(outcome);
    process.stderr.write(`\r${outcomes.length}/${ordered.length} ${Math.round((Date.now() - started) / 1000)} s `);
  };
  const baselineCases = ordered.filter((c) => c.name === c.baseline);
  const rest = ordered.filter((c) => c.name !== c.baseline);
  let next = 0;
  const pool = async (list: readonly Case[], offset: number): Promise<void> => {
    next = 0;
    await Promise.all(Array.from({ length: jobs }, async () => {
      while (next < list.length) {
        const i = next++;
        await runOne(list[i]!, offset + i);
      }
    }));
  };
  await pool(baselineCases, 0);
  await pool(rest, baselineCases.length);
  process.stderr.write('\n');

  const verdicts = ['ok', 'wrong', 'vague', 'crash', 'hang', 'secret'] as const;
  const lines = [`group\tcases\t${verdicts.join('\t')}`];
  for (const g of GROUPS.filter((x) => only.includes(x) || ordered.some((c) => c.group === x))) {
    const mine = outcomes.filter((o) => o.c.group === g);
    lines.push(`${g}\t${mine.length}\t${verdicts.map((v) => mine.filter((o) => o.verdict === v).length).join('\t')}`);
  }
  lines.push(`total\t${outcomes.length}\t${verdicts.map((v) => outcomes.filter((o) => o.verdict === v).length).join('\t')}`);
  process.stdout.write(`${lines.join('\n')}\n`);
  const bad = outcomes.filter((o) => o.verdict !== 'ok').sort((a, b) => a.c.name.localeCompare(b.c.name));
  for (const o of bad) {
    process.stdout.write(`\n${o.verdict.toUpperCase()} ${o.c.name} (exit ${o.code}): ${o.why}\n  reproduce: cd ${o.dir} && node ${BIN} ${o.argv.map((a) => (/^[\w./=-]+$/.test(a) ? a : JSON.stringify(a.length > 80 ? `${a.slice(0, 80)}…` : a))).join(' ')}\n`);
  }
  process.stdout.write(`\n${outcomes.length} cases in ${Math.round((Date.now() - started) / 1000)} s; ${bad.length} not clean\n`);
  if (values.out) {
    await writeFile(path.join(root, 'report.tsv'), `case\texpect\tverdict\texit\twhy\n${outcomes.map((o) => [o.c.name, o.c.expect, o.verdict, o.code, o.why.replace(/\s+/g, ' ')].join('\t')).join('\n')}\n`);
  } else {
    await rm(root, { recursive: true, force: true });
  }
  return bad.length === 0 ? 0 : 1;
}

process.exitCode = await main();
