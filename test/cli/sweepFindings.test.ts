import { execFileSync } from 'node:child_process';
import { cp, mkdir, readFile, rm, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { REPO_ROOT, useTempDir } from '../helpers/campaigns.js';
import { exited, runMain, spawnCli } from '../helpers/cli.js';

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
