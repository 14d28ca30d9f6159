/** The campaign file itself: hostile numbers and names, YAML features, encodings, the file system. */
import { chmod, cp, mkdir, readdir, rm, symlink, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { copyStudy, editDoc, editText, mkfifo, plan, setRaw, STUDY_FILES } from './inputs.js';
import type { Doc } from './inputs.js';
import { SECRET } from './types.js';
import type { Case, Expect } from './types.js';

export function yamlCases(): Case[] {
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
