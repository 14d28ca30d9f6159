import { readdir, readFile, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { parse, stringify } from 'yaml';
import { REPO_ROOT, useTempDir, writeCampaign } from '../helpers/campaigns.js';
import { runMain } from '../helpers/cli.js';

// A campaign file, or a data file it names, that is not what it should be: the error names the
// campaign file and the field that names the file, the file, the place inside it and what was
// expected — and never prints the file's content (pointed at a .env, it must not print the key).
// Values are shown at most 60 characters long. Exit 1, nothing written.

const SECRET = `sk-live-${'Q7'.repeat(40)}`;
const ENV = `OPENAI_API_KEY=${SECRET}\nOTHER=1\n`;

const tmp = useTempDir('cli-bad-data');

/** examples/<battery>/demo.yaml copied into `tmp.dir`, its data files absolute, `data_dir: data`, then edited. */
async function exampleCampaign(battery: 'xvalue' | 'ptrue', edit: (design: Record<string, unknown>) => void): Promise<string> {
  const folder = path.join(REPO_ROOT, 'examples', battery);
  const doc = parse(await readFile(path.join(folder, 'demo.yaml'), 'utf8')) as Record<string, unknown> & { design: Record<string, unknown> };
  for (const [key, value] of Object.entries(doc.design)) {
    if (typeof value === 'string' && /\.(jsonl|csv|yaml)$/.test(value)) doc.design[key] = path.join(folder, value);
    if (Array.isArray(value)) doc.design[key] = value.map((v: unknown) => (typeof v === 'string' && /\.(jsonl|csv)$/.test(v) ? path.join(folder, v) : v));
  }
  doc['data_dir'] = 'data';
  edit(doc.design);
  const file = path.join(tmp.dir, 'campaign.yaml');
  await writeFile(file, stringify(doc));
  return file;
}

/** `shownPrefix`: a field value (not a whole line) may show its first 57 characters, never all of it. */
async function expectRefused(argv: string[], fragments: readonly string[], shownPrefix = false): Promise<string> {
  const { code, stdout, stderr } = await runMain(argv);
  expect(code).toBe(1);
  for (const f of fragments) expect(stderr).toContain(f);
  // No stack trace, no content of the file, nothing written beside the campaign.
  expect(stderr).not.toMatch(/\n\s+at /);
  expect(stderr + stdout).not.toContain(shownPrefix ? SECRET.slice(0, 58) : SECRET.slice(0, 12));
  expect((await readdir(tmp.dir)).filter((n) => n === 'data')).toEqual([]);
  return stderr;
}

describe('a data file that is not one: named, never printed', () => {
  it('FAR-6 design.stories pointed at a .env: the campaign field, the file and what was expected; no key', async () => {
    const env = path.join(tmp.dir, '.env');
    await writeFile(env, ENV);
    const file = await writeCampaign(tmp.dir, 'small.yaml', (doc) => {
      doc.design['stories'] = env;
    });

    await expectRefused(['plan', file], [
      `${file}: design.stories names a file that cannot be used:`,
      `${env}: expected a mapping with a "stories" list, got text; is this the stories file?`,
    ]);
  });

  it('FAR-6 design.concept_pairs with a misspelt key and a wrong value: each at its path and line', async () => {
    const pairs = path.join(tmp.dir, 'pairs.yaml');
    const source = await readFile(path.join(REPO_ROOT, 'examples/far6/concept-pairs.yaml'), 'utf8');
    const lines = source.split('\n');
    const at = lines.findIndex((l) => l.trim() === 'verdict: wrong');
    lines[at] = lines[at]!.replace('verdict:', 'verdikt:');
    await writeFile(pairs, lines.join('\n').replace('construction: attitude_verb', `construction: ${'x'.repeat(90)}`));
    const file = await writeCampaign(tmp.dir, 'small.yaml', (doc) => {
      doc.design['concept_pairs'] = pairs;
    });

    const stderr = await expectRefused(['run', file], [
      `${file}: design.concept_pairs names a file that cannot be used:`,
      `${pairs}: pairs[0].reference.verdict: missing; expected the verdict word (line ${at})`,
      `${pairs}: pairs[0].reference.verdikt: unknown key(s) "verdikt"; a side has verdict, verdict_forms, forms (line ${at + 1})`,
      `${pairs}: pairs[1].construction: unknown construction "${'x'.repeat(57)}…"; expected one of "evaluative_adjective", "attitude_verb"`,
    ]);
    expect(stderr).not.toContain('x'.repeat(58));
  });

  it('a campaign file that is a .env, or binary: the kind of content, never the content', async () => {
    const env = path.join(tmp.dir, '.env');
    await writeFile(env, ENV);
    await expectRefused(['plan', env], [`${env}: expected a campaign mapping with name, seed, budget_usd, battery, design, models, got text; is this the campaign file?`]);

    const binary = path.join(tmp.dir, 'binary.yaml');
    await writeFile(binary, Buffer.from([0x00, 0xff, 0xfe, 0x10, ...Buffer.from(SECRET)]));
    await expectRefused(['run', binary], [`${binary}: is not a text file (it holds binary data); expected a campaign YAML file`]);
  });

  it('X-Value design.qa_pairs: a line that is not JSON and one that is a string are named by line, not quoted', async () => {
    const qa = path.join(tmp.dir, 'pairs.jsonl');
    await writeFile(qa, `OPENAI_API_KEY=${SECRET}\n${JSON.stringify(SECRET)}\n`);
    const file = await exampleCampaign('xvalue', (design) => {
      design['qa_pairs'] = qa;
    });

    await expectRefused(['plan', file], [
      `${file}: design.qa_pairs names a file that cannot be used:`,
      `${qa}: line 1: not a JSON object (unexpected character "O"); expected one QA pair per line`,
      `${qa}: line 2: expected a JSON object for one QA pair, got text`,
    ]);
  });

  it('P(True) design.items: an id that is a key is named as one, not shown; a header cell that is no column is named by place', async () => {
    const items = path.join(tmp.dir, 'items.jsonl');
    await writeFile(items, `${JSON.stringify({ id: SECRET, benchmark: 'mmmlu' })}\nOPENAI_API_KEY=${SECRET}\n`);
    const file = await exampleCampaign('ptrue', (design) => {
      design['items'] = items;
    });
    const stderr = await expectRefused(['plan', file], [`${file}: design.items names a file that cannot be used:`, `line 1 (text that looks like a secret (${SECRET.length} characters, not shown)): kind:`, 'line 2: not valid JSON (unexpected character "O")'], true);
    expect(stderr).not.toContain(SECRET);

    const csv = path.join(tmp.dir, 'items.csv');
    await writeFile(csv, `OPENAI_API_KEY=${SECRET.slice(0, 20)}!,id\nx,y\n`);
    const csvCampaign = await exampleCampaign('ptrue', (design) => {
      design['items'] = csv;
    });
    const csvErr = await expectRefused(['plan', csvCampaign], ['line 1: column 1: unknown column']);
    expect(csvErr).not.toContain('OPENAI_API_KEY');
  });
});
