import { readFile, readdir, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { RESULT_FILES } from '../../lib/batteries/far6/analysis/index.js';
import { REPO_ROOT, tempDir, writeCampaign } from '../helpers/campaigns.js';
import { runMain } from '../helpers/cli.js';

// `sondage analyze --replies <file-or-dir> --out <dir>`, beside the campaign form it extends.

const FIXTURES = path.join(REPO_ROOT, 'test/fixtures/byo');

let dir: string;
let cleanup: () => Promise<void>;
beforeEach(async () => {
  ({ dir, cleanup } = await tempDir('cli-byo'));
});
afterEach(() => cleanup());

describe('sondage analyze --replies', () => {
  it('analyses a folder of replies and writes the results files of a run', async () => {
    const out = path.join(dir, 'results');

    const { code, stdout, stderr } = await runMain(['analyze', '--battery', 'far6', '--replies', FIXTURES, '--out', out]);

    expect(stderr).toBe('');
    expect(code).toBe(0);
    expect(stdout).toContain('replies: 7 of 7 rows from 2 files; readings: 4 given, 4 by the token rule');
    expect(stdout).toContain(`results: ${path.relative(process.cwd(), out)}\n`);
    const files = await readdir(out);
    for (const name of RESULT_FILES) expect(files).toContain(name);
    expect(files).not.toContain('import_issues.csv');
    expect(await readFile(path.join(out, 'reply_totals.csv'), 'utf8')).toContain('m2,fr,2,2,2,0,0');
  });

  it('lists bad rows by file, row and field, writes them to import_issues.csv, analyses the rest and exits 1', async () => {
    const replies = path.join(dir, 'replies');
    const { mkdir } = await import('node:fs/promises');
    await mkdir(replies);
    const good = await readFile(path.join(FIXTURES, 'sample.jsonl'), 'utf8');
    await writeFile(path.join(replies, 'good.jsonl'), good);
    const bad = good.split('\n')[0]!.replace('"language":"en"', '"language":"english"').replace('"story":"s1"', '"story":"s2"');
    await writeFile(path.join(replies, 'bad.jsonl'), `${bad}\n`);
    const out = path.join(dir, 'out');

    const { code, stdout, stderr } = await runMain(['analyze', '--battery', 'far6', '--replies', replies, '--out', out]);

    expect(code).toBe(1);
    const badFile = path.join(replies, 'bad.jsonl');
    expect(stderr).toContain(`${badFile}: row 1, field "language": expected one of en, zh, de, ja, ko, fr; got "english"`);
    expect(stderr).toContain(`1 row rejected; all are listed in ${path.relative(process.cwd(), path.join(out, 'import_issues.csv'))}`);
    expect(stdout).toContain('replies: 5 of 6 rows from 2 files');
    expect(await readFile(path.join(out, 'import_issues.csv'), 'utf8')).toBe(
      `file,path,message\r\n${badFile},"row 1, field ""language""","expected one of en, zh, de, ja, ko, fr; got ""english"""\r\n`,
    );
    expect(await readdir(out)).toContain('story_scores.csv');
  });

  it('--replies and --out go together, and not with a campaign file', async () => {
    const missingOut = await runMain(['analyze', '--replies', FIXTURES]);
    expect(missingOut.code).toBe(1);
    expect(missingOut.stderr).toContain('sondage analyze: --replies and --out go together');
    const both = await runMain(['analyze', 'campaign.yaml', '--replies', FIXTURES, '--out', dir]);
    expect(both.code).toBe(1);
    expect(both.stderr).toContain('give either a campaign file or --replies, not both');
    const onRun = await runMain(['run', 'campaign.yaml', '--replies', FIXTURES]);
    expect(onRun.code).toBe(1);
    expect(onRun.stderr).toContain("Unknown option '--replies'");
  });

  it('an unreadable replies file is an error naming it', async () => {
    const file = path.join(dir, 'r.jsonl');
    await writeFile(file, '{"model": \n');
    const { code, stderr } = await runMain(['analyze', '--battery', 'far6', '--replies', file, '--out', path.join(dir, 'out')]);
    expect(code).toBe(1);
    expect(stderr).toContain(`${file}: cannot be read as JSONL`);
  });

  it('sondage analyze <campaign.yaml> still analyses a collected campaign', async () => {
    const file = await writeCampaign(dir, 'small.yaml');
    expect((await runMain(['run', file, '--quiet'])).code).toBe(0);
    const { code, stdout } = await runMain(['analyze', file]);
    expect(code).toBe(0);
    expect(stdout).toContain(`results: ${path.relative(process.cwd(), path.join(dir, 'data', 'campaigns', 'run-small', 'results'))}`);
  }, 60_000);
});

describe('sondage analyze --replies for batteries whose rows go straight to the estimators', () => {
  const XVALUE = path.join(REPO_ROOT, 'examples/xvalue');

  it('X-Value verdicts, scored against the QA pairs given with --input, write the tables of a run', async () => {
    const out = path.join(dir, 'xv');
    const { code, stdout, stderr } = await runMain(['analyze', '--battery', 'xvalue', '--replies', path.join(XVALUE, 'byo-verdicts.csv'), '--out', out, '--input', `qa_pairs=${path.join(XVALUE, 'qa-pairs.jsonl')}`]);
    expect(stderr).toBe('');
    expect(code).toBe(0);
    expect(stdout).toContain('verdicts: 7 of 7 rows from 1 file, scored against 70 QA pairs');
    expect((await readdir(out)).sort()).toEqual(expect.arrayContaining(['overall.csv', 'by_language.csv', 'checkpoints.csv', 'summary.md', 'report.html']));
    expect(await readFile(path.join(out, 'overall.csv'), 'utf8')).toMatch(/^model,strategy,n,/);
  });

  it('a bad X-Value row is listed in import_issues.csv and the rest analysed; exit 1', async () => {
    const file = path.join(dir, 'v.csv');
    const text = await readFile(path.join(XVALUE, 'byo-verdicts.csv'), 'utf8');
    await writeFile(file, `${text.trimEnd()}\nmy-model,xv-nope-01,defonly,Pass,,,,,,,,,,,,\n`);
    const out = path.join(dir, 'xv-bad');
    const { code, stdout, stderr } = await runMain(['analyze', '--battery', 'xvalue', '--replies', file, '--out', out, '--input', `qa_pairs=${path.join(XVALUE, 'qa-pairs.jsonl')}`]);
    expect(code).toBe(1);
    expect(stderr).toContain(`${file}: line 9, qa_id: qa_id "xv-nope-01" is not among the QA pairs given`);
    expect(stdout).toContain('verdicts: 7 of 8 rows');
    expect(await readFile(path.join(out, 'import_issues.csv'), 'utf8')).toContain('xv-nope-01');
  });

  it('--input is checked against what the battery takes', async () => {
    const replies = path.join(XVALUE, 'byo-verdicts.csv');
    const missing = await runMain(['analyze', '--battery', 'xvalue', '--replies', replies, '--out', dir]);
    expect(missing.code).toBe(1);
    expect(missing.stderr).toContain('--input qa_pairs=FILE is required');
    const unknown = await runMain(['analyze', '--battery', 'far6', '--replies', FIXTURES, '--out', dir, '--input', 'pairs=x.jsonl']);
    expect(unknown.code).toBe(1);
    expect(unknown.stderr).toContain('--input pairs: battery far6 takes no other input');
    const malformed = await runMain(['analyze', '--battery', 'xvalue', '--replies', replies, '--out', dir, '--input', 'qa_pairs']);
    expect(malformed.code).toBe(1);
    expect(malformed.stderr).toContain('--input qa_pairs: expected NAME=PATH');
    expect(await readdir(dir)).toEqual([]);
  });

  it('P(True) rows are analysed by the estimators; a file with a bad row is refused whole, every problem named', async () => {
    const rows = ['item,model,q,r,v,correct,p_true,benchmark'];
    for (const item of ['i1', 'i2', 'i3', 'i4']) for (const q of ['en', 'fr']) for (const v of ['en', 'fr']) rows.push(`${item},m1,${q},${q},${v},${item === 'i1' || item === 'i3' ? 1 : 0},${item === 'i1' ? 0.9 : 0.4},triv`);
    const file = path.join(dir, 'rows.csv');
    await writeFile(file, `${rows.join('\n')}\n`);
    const out = path.join(dir, 'pt');
    const ok = await runMain(['analyze', '--battery', 'ptrue', '--replies', file, '--out', out]);
    expect(ok.stderr).toBe('');
    expect(ok.code).toBe(0);
    expect(ok.stdout).toContain('rows: 16 from 1 file');
    expect(await readdir(out)).toEqual(expect.arrayContaining(['cells.csv', 'regimes.csv', 'summary.md', 'report.html']));

    await writeFile(file, `${rows.join('\n')}\ni5,m1,en,en,en,maybe,0.5,triv\n`);
    const bad = await runMain(['analyze', '--battery', 'ptrue', '--replies', file, '--out', path.join(dir, 'pt-bad')]);
    expect(bad.code).toBe(1);
    expect(bad.stderr).toContain(`${file}: line 18: correct: expected 1/0 or true/false, got "maybe"`);
  });
});
