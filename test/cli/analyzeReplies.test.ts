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
    expect(stdout).toContain(`results: ${out}`);
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
    expect(stderr).toContain(`1 row rejected; all are listed in ${path.join(out, 'import_issues.csv')}`);
    expect(stdout).toContain('replies: 5 of 6 rows from 2 files');
    expect(await readFile(path.join(out, 'import_issues.csv'), 'utf8')).toBe(
      `file,path,message\r\n${badFile},"row 1, field ""language""","expected one of en, zh, de, ja, ko, fr; got ""english"""\r\n`,
    );
    expect(await readdir(out)).toContain('story_scores.csv');
  });

  it('--replies and --out go together, and not with a campaign file', async () => {
    const missingOut = await runMain(['analyze', '--replies', FIXTURES]);
    expect(missingOut.code).toBe(1);
    expect(missingOut.stderr).toContain('sondage: --replies and --out go together');
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
    expect(stdout).toContain(`results: ${path.join(dir, 'data', 'campaigns', 'run-small', 'results')}`);
  }, 60_000);
});
