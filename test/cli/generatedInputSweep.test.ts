import { mkdir, readdir, readFile, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { parse, stringify } from 'yaml';
import { REPO_ROOT, useTempDir } from '../helpers/campaigns.js';
import { runMain } from '../helpers/cli.js';

// Bad inputs that nobody wrote by hand: every field of each study's example campaign, and of the
// first record of its design data, is given a value of the wrong kind (another type, null, an
// unknown key beside it, an absurd number). Each must be refused by `plan` (exit 1, every line
// naming the file, no stack trace, nothing written); none may be accepted and planned. Fields
// whose schema accepts more than one form are listed in ACCEPTED with the reason.

type Doc = Record<string, unknown>;
type Path = (string | number)[];

function paths(value: unknown, at: Path = []): Path[] {
  const out: Path[] = at.length > 0 ? [at] : [];
  // Two entries of a list are enough to reach every field; the rest repeat them.
  if (Array.isArray(value)) value.slice(0, 2).forEach((v, i) => out.push(...paths(v, [...at, i])));
  else if (value !== null && typeof value === 'object') for (const [k, v] of Object.entries(value)) out.push(...paths(v, [...at, k]));
  return out;
}
const get = (doc: unknown, p: Path): unknown => p.reduce<unknown>((node, key) => (node as Record<string | number, unknown> | undefined)?.[key], doc);
function set(doc: unknown, p: Path, value: unknown): void {
  (get(doc, p.slice(0, -1)) as Record<string | number, unknown>)[p[p.length - 1]!] = value;
}

/** Values of the wrong kind for `value`: another type, null, and for mappings an unknown key. */
function wrongKinds(value: unknown): [string, unknown][] {
  if (typeof value === 'number') return [['a word', 'twelve'], ['a list', [value]], ['null', null], ['1e308', 1e308]];
  if (typeof value === 'string') return [['a mapping', { x: 1 }], ['a list', [value]], ['null', null]];
  if (typeof value === 'boolean') return [['a word', 'yes'], ['null', null]];
  if (Array.isArray(value)) return [['a word', 'just-a-word'], ['a mapping', { x: 1 }], ['null', null]];
  if (value !== null && typeof value === 'object') return [['a word', 'just-a-word'], ['a list', [1, 2]], ['null', null], ['an unknown key', { ...value, zz_unknown_key: 1 }]];
  return [];
}

/** Accepted on purpose: the schema takes these forms too. */
const ACCEPTED: readonly RegExp[] = [
  /^xvalue design\.qa_pairs a list$/, // one file or a list of files (Towards Cross-lingual Values Judgment ships one per language)
  /^\w+ budget_usd 1e308$/, // a budget is a cap, not a price: a huge one is allowed
  /^\w+ seed 1e308$/, // any number seeds
  /^ptrue items\.jsonl 0\.subject null$/, // the subject is optional metadata
  /^xvalue qa-pairs\.jsonl 0\.annotation\.checkpoints\.[E-H] a list$/, // "None", or the offending sentences (§4.2)
];

const tmp = useTempDir('generated-sweep', 'all');

interface Case {
  readonly name: string;
  readonly write: (folder: string) => Promise<string>;
  /** The file every line of the refusal must name. */
  readonly names: (folder: string) => string;
}

async function exampleCampaign(battery: string): Promise<Doc> {
  const source = path.join(REPO_ROOT, 'examples', battery);
  const doc = parse(await readFile(path.join(source, 'demo.yaml'), 'utf8')) as Doc & { design: Doc };
  for (const [key, value] of Object.entries(doc.design)) {
    if (typeof value === 'string' && /\.(ya?ml|jsonl|csv)$/.test(value)) doc.design[key] = path.join(source, value);
  }
  doc['data_dir'] = 'data';
  return doc;
}

async function campaignCases(battery: string): Promise<Case[]> {
  const base = await exampleCampaign(battery);
  // One model of the list reaches every field a model has; the roles stay whole.
  base['models'] = (base['models'] as unknown[]).slice(0, 1);
  return paths(base).flatMap((p) =>
    wrongKinds(get(base, p)).map(([kind, value]) => ({
      name: `${battery} ${p.join('.')} ${kind}`,
      write: async (folder: string) => {
        const doc = structuredClone(base);
        set(doc, p, value);
        const file = path.join(folder, 'campaign.yaml');
        await writeFile(file, stringify(doc));
        return file;
      },
      names: (folder: string) => path.join(folder, 'campaign.yaml'),
    })),
  );
}

const DATA_FILES: readonly [battery: string, field: string, file: string][] = [
  ['far6', 'stories', 'stories.yaml'],
  ['far6', 'concept_pairs', 'concept-pairs.yaml'],
  ['xvalue', 'qa_pairs', 'qa-pairs.jsonl'],
  ['ptrue', 'items', 'items.jsonl'],
];

async function dataFileCases(battery: string, field: string, name: string): Promise<Case[]> {
  const base = await exampleCampaign(battery);
  const text = await readFile(path.join(REPO_ROOT, 'examples', battery, name), 'utf8');
  const jsonl = name.endsWith('.jsonl');
  const data: unknown = jsonl ? text.split('\n').filter((l) => l.trim() !== '').map((l) => JSON.parse(l) as unknown) : parse(text);
  // The first record of the file (the first of its top-level list for YAML files).
  const first: Path = jsonl ? [0] : [Object.keys(data as Doc)[0]!, 0];
  return paths(get(data, first), first).flatMap((p) =>
    wrongKinds(get(data, p)).map(([kind, value]) => ({
      name: `${battery} ${name} ${p.join('.')} ${kind}`,
      write: async (folder: string) => {
        const edited = structuredClone(data);
        set(edited, p, value);
        await writeFile(path.join(folder, name), jsonl ? (edited as unknown[]).map((r) => JSON.stringify(r)).join('\n') + '\n' : stringify(edited));
        const doc = structuredClone(base) as Doc & { design: Doc };
        doc.design[field] = path.join(folder, name);
        const file = path.join(folder, 'campaign.yaml');
        await writeFile(file, stringify(doc));
        return file;
      },
      names: (folder: string) => path.join(folder, name),
    })),
  );
}

describe('generated bad inputs: every field given a value of the wrong kind', () => {
  it('each is refused by plan with the file named on every line, no stack trace, nothing written', async () => {
    const cases = [
      ...(await Promise.all(['far6', 'xvalue', 'ptrue'].map(campaignCases))).flat(),
      ...(await Promise.all(DATA_FILES.map(([b, f, n]) => dataFileCases(b, f, n)))).flat(),
    ];
    const wrong: string[] = [];
    let refused = 0;
    for (const [i, c] of cases.entries()) {
      const folder = path.join(tmp.dir, String(i));
      await mkdir(folder, { recursive: true });
      const before = new Set(await readdir(folder));
      const file = await c.write(folder);
      for (const f of await readdir(folder)) before.add(f);
      const { code, stdout, stderr } = await runMain(['plan', file]);
      const accepted = ACCEPTED.some((re) => re.test(c.name));
      const lines = stderr.split('\n').filter((l) => l.trim() !== '');
      if (/\n\s+at /.test(stderr)) wrong.push(`${c.name}: a stack trace`);
      else if (accepted) continue;
      else if (code !== 1) wrong.push(`${c.name}: exit ${code}${code === 0 ? ' (planned as if nothing were wrong)' : ''}`);
      else if (stdout !== '') wrong.push(`${c.name}: refused, but printed a plan`);
      // The first line names the file at fault; a campaign naming a bad data file says so first.
      else if (!lines.some((l) => l.includes(c.names(folder)))) wrong.push(`${c.name}: the refusal does not name ${path.basename(c.names(folder))}: ${lines[0] ?? ''}`);
      else if ((await readdir(folder)).some((f) => !before.has(f))) wrong.push(`${c.name}: wrote ${(await readdir(folder)).filter((f) => !before.has(f)).join(', ')}`);
      else refused++;
    }
    expect(wrong).toEqual([]);
    // The generator reaches the fields it should: a few hundred cases, nearly all refused.
    expect(cases.length).toBeGreaterThan(400);
    expect(refused).toBeGreaterThan(cases.length - 20);
  }, 600_000);
});
