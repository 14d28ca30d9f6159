import { execFileSync } from 'node:child_process';
import { cp, mkdir, readdir, readFile, rm, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { REPO_ROOT, useTempDir } from '../helpers/campaigns.js';
import { exited, runMain, spawnCli } from '../helpers/cli.js';
import { DuckDb } from '../../lib/store/DuckDb.js';

// Inputs the hostile sweep (scripts/hostile-sweep.ts, docs/troubleshooting.md) found mishandled,
// one test each: each failed before its fix.

const tmp = useTempDir('cli-sweep-findings');
const PTRUE_ROWS = path.join(REPO_ROOT, 'examples/ptrue/byo-rows.csv');
const FAR6_ROWS = path.join(REPO_ROOT, 'test/fixtures/byo/sample.csv');
const KEY = 'sk-proj-Zq3vT8wLmN4pR7sK2xY9bC6dF1gH5jA0eU';

/** The example rows with one cell of the first data row replaced. */
async function withCell(source: string, column: string, value: string): Promise<string> {
  const [header, first, ...rest] = (await readFile(source, 'utf8')).split('\n');
  const i = header!.split(',').indexOf(column);
  const cells = first!.split(',');
  cells[i] = value;
  const file = path.join(tmp.dir, `rows${path.extname(source)}`);
  await writeFile(file, [header, cells.join(','), ...rest].join('\n'));
  return file;
}

describe('analyze --replies (P(True)) on a file that is no regular file', () => {
  it('refuses a named pipe at once instead of waiting for a writer forever', async () => {
    const fifo = path.join(tmp.dir, 'rows.csv');
    execFileSync('mkfifo', [fifo]);
    const child = spawnCli(['analyze', '--battery', 'ptrue', '--replies', fifo, '--out', path.join(tmp.dir, 'out')]);
    const timer = setTimeout(() => child.kill('SIGKILL'), 30_000);
    const code = await exited(child);
    clearTimeout(timer);
    expect(code).toBe(1);
    expect(child.output().stderr).toContain(`${fifo}: not a regular file`);
  }, 40_000);

  it('says that a folder is a folder, not a file of the wrong type', async () => {
    const folder = path.join(tmp.dir, 'in');
    await mkdir(folder);
    await writeFile(path.join(folder, 'rows.csv'), await readFile(PTRUE_ROWS));
    const r = await runMain(['analyze', '--battery', 'ptrue', '--replies', folder, '--out', path.join(tmp.dir, 'out')]);
    expect(r.code).toBe(1);
    expect(r.stderr).toContain(`${folder}: is a folder; P(True) reads its rows from one file`);
    expect(r.stderr).not.toContain('unsupported file type');
  });
});

describe('analyze --replies (P(True)): p_true is a decimal number', () => {
  it.each(['0x1', '0b1', 'true'])('refuses p_true %s, which Number() would read as 1', async (cell) => {
    const r = await runMain(['analyze', '--battery', 'ptrue', '--replies', await withCell(PTRUE_ROWS, 'p_true', cell), '--out', path.join(tmp.dir, 'out'), '--draws', '0']);
    expect(r.code).toBe(1);
    expect(r.stderr).toMatch(/line 2: p_true: expected a probability in \[0, 1\]/);
  });
});

describe('a key pasted into a cell is never echoed by the refusal', () => {
  it.each([
    ['ptrue', PTRUE_ROWS, ['--draws', '0']],
    ['far6', FAR6_ROWS, ['--draws', '1']],
  ] as const)('%s: a model cell OPENAI_API_KEY=… is named as a secret, not shown', async (battery, source, extra) => {
    const out = path.join(tmp.dir, 'out');
    const r = await runMain(['analyze', '--battery', battery, '--replies', await withCell(source, 'model', `OPENAI_API_KEY=${KEY}`), '--out', out, ...extra]);
    expect(r.code).toBe(1);
    expect(r.stderr).toContain('model');
    expect(r.stderr).toContain('looks like a secret');
    const issues = await readFile(path.join(out, 'import_issues.csv'), 'utf8');
    for (const text of [r.stdout, r.stderr, issues]) expect(text).not.toContain(KEY.slice(8, 20));
  });
});

describe('plan with a design data file that is a named pipe', () => {
  it.each([
    ['far6', 'stories.yaml'],
    ['xvalue', 'qa-pairs.jsonl'],
    ['ptrue', 'items.jsonl'],
  ])('%s: %s as a pipe is refused at once, named, instead of hanging', async (study, data) => {
    const dir = path.join(tmp.dir, study);
    await cp(path.join(REPO_ROOT, 'examples', study), dir, { recursive: true });
    await rm(path.join(dir, data));
    execFileSync('mkfifo', [path.join(dir, data)]);
    const child = spawnCli(['plan', path.join(dir, 'demo.yaml')]);
    const timer = setTimeout(() => child.kill('SIGKILL'), 30_000);
    const code = await exited(child);
    clearTimeout(timer);
    expect(code).toBe(1);
    expect(child.output().stderr).toContain(`${data}: is not a regular file (a named pipe or a device)`);
  }, 40_000);
});

describe('plan with a key pasted into a campaign field', () => {
  it('names models[0].provider without quoting the key', async () => {
    const dir = path.join(tmp.dir, 'xvalue');
    await cp(path.join(REPO_ROOT, 'examples/xvalue'), dir, { recursive: true });
    const file = path.join(dir, 'demo.yaml');
    await writeFile(file, (await readFile(file, 'utf8')).replace('provider: simulated', `provider: ${KEY}`));
    const r = await runMain(['plan', file]);
    expect(r.code).toBe(1);
    expect(r.stderr).toContain('models[0].provider: text that looks like a secret');
    expect(`${r.stdout}${r.stderr}`).not.toContain(KEY.slice(8, 20));
  });
});

/** A copy of examples/<study> in the test's folder, with data_dir inside it; returns the campaign file. */
async function copyStudy(study: string): Promise<string> {
  const dir = path.join(tmp.dir, study);
  await cp(path.join(REPO_ROOT, 'examples', study), dir, { recursive: true });
  const file = path.join(dir, 'demo.yaml');
  await writeFile(file, (await readFile(file, 'utf8')).replace(/^data_dir: .*$/m, 'data_dir: data'));
  return file;
}

/** Rewrites the first line of a JSONL file through `edit`. */
async function editFirstLine(file: string, edit: (row: Record<string, unknown>) => void): Promise<void> {
  const [first, ...rest] = (await readFile(file, 'utf8')).split('\n');
  const row = JSON.parse(first!) as Record<string, unknown>;
  edit(row);
  await writeFile(file, [JSON.stringify(row), ...rest].join('\n'));
}

describe('plan with a campaign file whose data_dir is the campaign file itself', () => {
  it('refuses it, naming the file and the field', async () => {
    const file = await copyStudy('far6');
    await writeFile(file, (await readFile(file, 'utf8')).replace(/^data_dir: .*$/m, 'data_dir: ./demo.yaml'));
    const r = await runMain(['plan', file]);
    expect(r.code).toBe(1);
    expect(r.stderr).toMatch(/demo\.yaml: data_dir: "\.\/demo\.yaml" is this campaign file itself; expected a folder/);
  });
});

describe('plan (X-Value) with a QA pair that is not what the format says', () => {
  it('refuses a language code in capitals, naming the file, the line, the field and the code meant', async () => {
    const file = await copyStudy('xvalue');
    await editFirstLine(path.join(path.dirname(file), 'qa-pairs.jsonl'), (row) => (row.language = 'EN'));
    const r = await runMain(['plan', file]);
    expect(r.code).toBe(1);
    expect(r.stderr).toMatch(/qa-pairs\.jsonl: line 1, language: language "EN" is not written as a code is \(did you mean "en"\?\); expected one of .*ar, de, en/);
  });

  it('refuses an id with a line break in it', async () => {
    const file = await copyStudy('xvalue');
    await editFirstLine(path.join(path.dirname(file), 'qa-pairs.jsonl'), (row) => (row.id = 'a\nb'));
    const r = await runMain(['plan', file]);
    expect(r.code).toBe(1);
    expect(r.stderr).toContain('qa-pairs.jsonl: line 1, id: id "a\\nb" holds a control character (a line break, a tab); expected an id on one line');
  });

  it('names an empty QA file as empty, not as languages without pairs', async () => {
    const file = await copyStudy('xvalue');
    await writeFile(path.join(path.dirname(file), 'qa-pairs.jsonl'), '');
    const r = await runMain(['plan', file]);
    expect(r.code).toBe(1);
    expect(r.stderr).toContain('qa-pairs.jsonl: the file holds no QA pair; expected one pair per line as a JSON object');
  });
});

describe('plan (P(True)) with an items file that starts with a byte-order mark', () => {
  it('reads it as the other design files are read: the same plan as without', async () => {
    const file = await copyStudy('ptrue');
    const plain = await runMain(['plan', file]);
    const items = path.join(path.dirname(file), 'items.jsonl');
    await writeFile(items, `\ufeff${await readFile(items, 'utf8')}`);
    const r = await runMain(['plan', file]);
    expect(plain.code).toBe(0);
    expect(r.code).toBe(0);
    expect(r.stdout).toBe(plain.stdout);
  });
});

describe('analyze --replies (X-Value): what a verdict file must not hold', () => {
  const XV_ROWS = path.join(REPO_ROOT, 'examples/xvalue/byo-verdicts.csv');
  const pairs = `qa_pairs=${path.join(REPO_ROOT, 'examples/xvalue/qa-pairs.jsonl')}`;

  it('refuses a model cell shaped like a key and never prints it, in the terminal or in any file written', async () => {
    const out = path.join(tmp.dir, 'out');
    const r = await runMain(['analyze', '--battery', 'xvalue', '--replies', await withCell(XV_ROWS, 'model', KEY), '--out', out, '--input', pairs]);
    expect(r.code).toBe(1);
    expect(r.stderr).toContain('line 2, model: model is text that looks like a secret');
    const written = await Promise.all((await readdir(out)).map((f) => readFile(path.join(out, f), 'utf8')));
    for (const text of [r.stdout, r.stderr, ...written]) expect(text).not.toContain(KEY.slice(8, 20));
  });

  it('names a file with a header and no row', async () => {
    const file = path.join(tmp.dir, 'header-only.csv');
    await writeFile(file, `${(await readFile(XV_ROWS, 'utf8')).split('\n')[0]}\n`);
    const r = await runMain(['analyze', '--battery', 'xvalue', '--replies', file, '--out', path.join(tmp.dir, 'out'), '--input', pairs]);
    expect(r.code).toBe(1);
    expect(r.stderr).toContain(`${file}: line 2: the file has a header row and no verdict row`);
  });
});

describe('analyze --replies (FAR-6) with a 100,000-character model cell', () => {
  it('refuses the cell, which names a folder, instead of failing on the disk with EIO', async () => {
    const r = await runMain(['analyze', '--battery', 'far6', '--replies', await withCell(FAR6_ROWS, 'model', 'm'.repeat(100_000)), '--out', path.join(tmp.dir, 'out'), '--draws', '1']);
    expect(r.code).toBe(1);
    expect(r.stderr).toContain('row 1, field "model": expected a name of at most 200 characters (it names a folder)');
    expect(r.stderr).not.toContain('EIO');
  });
});

describe('sondage new given something else than a battery of one\'s own', () => {
  it('answers a built-in battery with its demo campaign', async () => {
    const r = await runMain(['new', 'far6', '--dir', path.join(tmp.dir, 'x')]);
    expect(r.code).toBe(1);
    expect(r.stderr).toMatch(/^sondage new: far6 is a built-in battery and needs nothing written; to run it, start from its demo campaign, .*examples\/far6\/demo\.yaml/);
  });

  it('answers an unknown name with the known batteries', async () => {
    const r = await runMain(['new', 'far7']);
    expect(r.code).toBe(1);
    expect(r.stderr).toContain('sondage new: "far7" is neither "battery" nor a known battery (far6, xvalue, ptrue)');
  });

  it('names a --dir that is a file', async () => {
    const file = path.join(tmp.dir, 'demo.yaml');
    await writeFile(file, 'x');
    const r = await runMain(['new', 'battery', 'mine', '--dir', file]);
    expect(r.code).toBe(1);
    expect(r.stderr).toContain('demo.yaml is a file, not a folder; give the folder to write mine/ in');
  });
});

describe('a key in every model cell of a reply file', () => {
  it.each([
    ['ptrue', PTRUE_ROWS, ['--draws', '0']],
    ['far6', FAR6_ROWS, ['--draws', '1']],
    ['xvalue', path.join(REPO_ROOT, 'examples/xvalue/byo-verdicts.csv'), ['--input', `qa_pairs=${path.join(REPO_ROOT, 'examples/xvalue/qa-pairs.jsonl')}`]],
  ] as const)('%s: is refused as a secret, and is in no output nor file written', async (battery, source, extra) => {
    // Prepare: the rows stay consistent with one another (one model throughout), so only the key check can refuse them.
    const [header, ...rows] = (await readFile(source, 'utf8')).split('\n');
    const i = header!.split(',').indexOf('model');
    const file = path.join(tmp.dir, `rows${path.extname(source)}`);
    await writeFile(file, [header, ...rows.map((r) => (r === '' ? r : r.split(',').map((c, j) => (j === i ? KEY : c)).join(',')))].join('\n'));
    const out = path.join(tmp.dir, 'out');
    // Act
    const r = await runMain(['analyze', '--battery', battery, '--replies', file, '--out', out, ...extra]);
    // Assess
    expect(r.code).toBe(1);
    expect(r.stderr).toMatch(/model.*looks like a secret/);
    const entries = await readdir(out, { recursive: true });
    expect(entries.join('\n')).not.toContain(KEY.slice(8, 20));
    const written = await Promise.all(entries.filter((f) => /\.(csv|md|html|json)$/.test(f)).map((f) => readFile(path.join(out, f), 'utf8')));
    for (const text of [r.stdout, r.stderr, ...written]) expect(text).not.toContain(KEY.slice(8, 20));
  });
});

describe('a stored Parquet part of a campaign that is cut off or of another table', () => {
  /** A one-model, one-language X-Value campaign run to the end; returns its file and the folder of its step3 partition's parts. */
  async function finishedCampaign(): Promise<{ file: string; part: (table: string) => Promise<string> }> {
    const file = await copyStudy('xvalue');
    await writeFile(file, (await readFile(file, 'utf8')).replace(/languages: \[[^\]]*\]/, 'languages: [en]'));
    const r = await runMain(['run', file, '--quiet']);
    expect(r.code).toBe(0);
    const part = async (table: string): Promise<string> => {
      const folder = path.join(path.dirname(file), 'data/campaigns/xvalue-demo/step3', table, 'model=alpha/language=en');
      const [name] = (await readdir(folder)).filter((f) => f.endsWith('.parquet'));
      return path.join(folder, name!);
    };
    return { file, part };
  }

  it.each(['analyze', 'run'])('%s refuses a replies part cut in half, naming it, instead of a DuckDB error', async (command) => {
    const { file, part } = await finishedCampaign();
    const replies = await part('replies');
    const bytes = await readFile(replies);
    await writeFile(replies, bytes.subarray(0, bytes.length >> 1));
    const r = await runMain(command === 'run' ? ['run', file, '--quiet'] : ['analyze', file]);
    expect(r.code).toBe(1);
    expect(r.stderr).toContain(`${replies}: this stored replies part cannot be used: it is not a whole Parquet file`);
  }, 60_000);

  it('analyze reads again from its replies a readings part removed, to the tables of the finished run', async () => {
    const { file, part } = await finishedCampaign();
    const results = path.join(path.dirname(file), 'data/campaigns/xvalue-demo/results/overall.csv');
    const before = await readFile(results, 'utf8');
    await rm(await part('readings'));
    await rm(results);
    const r = await runMain(['analyze', file]);
    expect(r.code).toBe(0);
    expect(r.stdout).toContain('step3: re-read 56 stored reading(s)');
    expect(r.stdout).toContain('their readings part was gone');
    expect(await readFile(results, 'utf8')).toBe(before);
  }, 60_000);

  it.each([
    ['analyze', 'removed'],
    ['run', 'removed'],
    ['analyze', 'emptied of its rows'],
  ])('%s refuses a replies part %s, whose items the ledger counts as answered, instead of tables without them', async (command, damage) => {
    const { file, part } = await finishedCampaign();
    const replies = await part('replies');
    if (damage === 'removed') await rm(replies);
    else await writeParquetLike(replies, 'SELECT * FROM part LIMIT 0');
    const r = await runMain(command === 'run' ? ['run', file] : ['analyze', file]);
    expect(r.code).toBe(1);
    expect(r.stderr).toContain(`${replies}: this step3 replies part, whose items the ledger counts as answered, ${damage === 'removed' ? 'is gone' : 'holds no rows'}; nothing was computed`);
    // Refused before the run calls the campaign complete.
    expect(r.stdout + r.stderr).not.toContain('is complete');
  }, 60_000);

  it("analyze refuses a replies part of another phase copied over one, which has the right columns but another phase's rows", async () => {
    const { file, part } = await finishedCampaign();
    const replies = await part('replies');
    const step1 = path.join(path.dirname(file), 'data/campaigns/xvalue-demo/step1/replies/model=alpha/language=en');
    const [other] = (await readdir(step1)).filter((f) => f.endsWith('.parquet'));
    await writeFile(replies, await readFile(path.join(step1, other!)));
    const r = await runMain(['analyze', file]);
    expect(r.code).toBe(1);
    expect(r.stderr).toContain(`${replies}: this stored replies part cannot be used: it holds rows of phase "step1", and it is stored in the folder of phase "step3"`);
  }, 60_000);

  it('analyze refuses a readings part copied over a replies part instead of reading its rows with NULL columns', async () => {
    const { file, part } = await finishedCampaign();
    const replies = await part('replies');
    await writeFile(replies, await readFile(await part('readings')));
    const r = await runMain(['analyze', file]);
    expect(r.code).toBe(1);
    expect(r.stderr).toContain(`${replies}: this stored replies part cannot be used: it lacks the columns attempt, status`);
  }, 60_000);
});

/** Rewrites a Parquet file with the rows `select` takes from it (`part`), in place. */
async function writeParquetLike(file: string, select: string): Promise<void> {
  const db = await DuckDb.open({ threads: 1 });
  try {
    await db.run(`CREATE TABLE part AS SELECT * FROM read_parquet('${file}')`);
    await db.run(`COPY (${select}) TO '${file}' (FORMAT parquet)`);
  } finally {
    db.close();
  }
}
