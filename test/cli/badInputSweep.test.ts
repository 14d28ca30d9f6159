import { mkdir, readdir, readFile, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { parse, stringify } from 'yaml';
import { REPO_ROOT, useTempDir } from '../helpers/campaigns.js';
import { runMain } from '../helpers/cli.js';

// What a newcomer gets wrong first, on each battery's example campaign and through each command
// that reads a campaign file: one clear line per problem naming the file, the field (and line)
// and what was expected; exit 1; no stack trace; nothing written beside the campaign.

const BATTERIES = ['far6', 'xvalue', 'ptrue'] as const;

const tmp = useTempDir('sweep', 'all');

/** examples/<battery>/demo.yaml in its own folder under `tmp.dir`, data files absolute, `data_dir: data`, edited. */
async function example(battery: string, name: string, edit: (doc: Record<string, unknown> & { models: Record<string, unknown>[] }) => void): Promise<string> {
  const source = path.join(REPO_ROOT, 'examples', battery);
  const doc = parse(await readFile(path.join(source, 'demo.yaml'), 'utf8')) as Record<string, unknown> & { design: Record<string, unknown>; models: Record<string, unknown>[] };
  for (const [key, value] of Object.entries(doc.design)) {
    if (typeof value === 'string' && /\.(ya?ml|jsonl|csv)$/.test(value)) doc.design[key] = path.join(source, value);
    if (Array.isArray(value)) doc.design[key] = value.map((v: unknown) => (typeof v === 'string' && /\.(jsonl|csv)$/.test(v) ? path.join(source, v) : v));
  }
  doc['data_dir'] = 'data';
  edit(doc);
  const folder = path.join(tmp.dir, `${battery}-${name}`);
  await mkdir(folder, { recursive: true });
  const file = path.join(folder, 'campaign.yaml');
  await writeFile(file, stringify(doc));
  return file;
}

async function expectRefused(argv: readonly string[], says: string): Promise<void> {
  const { code, stdout, stderr } = await runMain(argv);
  expect(stderr).toContain(says);
  expect(stderr).not.toMatch(/\n\s+at /);
  expect(stdout).toBe('');
  expect(code).toBe(1);
}

describe('a campaign file that is not one', () => {
  const cases: readonly [string, (file: string) => Promise<void>, string][] = [
    ['a folder', (f) => mkdir(f), 'is a folder; expected a campaign YAML file'],
    ['an empty file', (f) => writeFile(f, ''), 'the file is empty; expected a campaign mapping with name, seed, budget_usd, battery, design, models'],
    ['words, not YAML', (f) => writeFile(f, 'OPENAI_API_KEY=sk-live-not-for-your-eyes\n'), 'expected a campaign mapping with name, seed, budget_usd, battery, design, models, got text; is this the campaign file?'],
    ['binary', (f) => writeFile(f, Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a, 0x00, 0xff])), 'is not a text file (it holds binary data); expected a campaign YAML file'],
    ['broken YAML', (f) => writeFile(f, 'name: [unclosed\n'), 'line 2, column 1: invalid YAML:'],
  ];
  const runs = cases.flatMap(([name, make, says]) => ['plan', 'run', 'analyze', 'status', 'stop'].map((command) => ({ name, make, says, command })));
  it.each(runs)('$command on $name: exit 1, the file and what was expected, never its content', async ({ name, make, says, command }) => {
    const folder = path.join(tmp.dir, `file-${command}-${name.replace(/\W+/g, '-')}`);
    await mkdir(folder, { recursive: true });
    const file = path.join(folder, 'campaign.yaml');
    await make(file);

    await expectRefused([command, file], `${file}: ${says}`);

    const { stderr } = await runMain([command, file]);
    expect(stderr).not.toContain('sk-live');
    expect(await readdir(folder)).toEqual(['campaign.yaml']);
  });
});

describe.each(BATTERIES)('the %s example, edited the way newcomers edit it', (battery) => {
  const cases: readonly [string, (doc: Record<string, unknown> & { models: Record<string, unknown>[] }) => void, string][] = [
    ['an unknown top-level key', (doc) => (doc['colour'] = 'blue'), 'unknown key "colour"; known keys here: name, description, seed, budget_usd, data_dir'],
    ['a model id with a slash', (doc) => (doc.models[0]!['id'] = 'org/alpha'), 'models[0].id: "org/alpha" is not a safe id; use lowercase letters, digits'],
    ['budget 0', (doc) => (doc['budget_usd'] = 0), 'budget_usd: must be greater than 0, got 0'],
    [
      // Checked by the battery's own simulator when the file is read: plan refuses what run would.
      'a misspelt simulation key',
      (doc) => (doc.models[0]!['simulation'] = { ...(doc.models[0]!['simulation'] as object), error_rte: 0.1 }),
      'models[0].simulation.error_rte: unknown key; known keys here:',
    ],
    ['a negative budget', (doc) => (doc['budget_usd'] = -5), 'budget_usd: must be greater than 0, got -5'],
    [
      'a real provider without a price',
      (doc) => {
        doc.models[0] = { id: 'alpha', provider: 'openai', model: 'gpt-unknown-9' };
      },
      'models[0].price: no list price is known for openai/gpt-unknown-9',
    ],
  ];
  const runs = cases.flatMap(([name, edit, says]) => ['plan', 'run'].map((command) => ({ name, edit, says, command })));
  it.each(runs)('$command refuses $name: exit 1, the field and its line, nothing written', async ({ name, edit, says, command }) => {
    const file = await example(battery, `${command}-${name.replace(/\W+/g, '-')}`, edit);

    await expectRefused([command, file], says);

    const { stderr } = await runMain([command, file]);
    expect(stderr).toMatch(/\(line \d+\)/);
    expect(await readdir(path.dirname(file))).toEqual(['campaign.yaml']);
  });
});
