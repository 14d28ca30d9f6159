import { readFile, readdir, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { RESULT_FILES } from '../../lib/batteries/far6/analysis/index.js';
import { REPO_ROOT, useTempDir, writeCampaign } from '../helpers/campaigns.js';
import { runMain } from '../helpers/cli.js';

// `sondage analyze --replies <file-or-dir> --out <dir>`, beside the campaign form it extends.

const FIXTURES = path.join(REPO_ROOT, 'test/fixtures/byo');

const tmp = useTempDir('cli-byo');

describe('sondage analyze --replies', () => {
  it('analyses a folder of replies and writes the results files of a run', async () => {
    const out = path.join(tmp.dir, 'results');

    const { code, stdout, stderr } = await runMain(['analyze', '--battery', 'far6', '--replies', FIXTURES, '--out', out]);

    // The samples are not a full design: m1's items in en have no row in de and the other way round.
    expect(stderr).toContain('notice: 4 cells of the design the rows claim have no row; analysed as they stand');
    expect(stderr).toContain('model m1: story s1, form plain, constraint free, named P, option_order 0 has no row in en (the model has rows in de, en)');
    expect(code).toBe(0);
    expect(stdout).toContain('replies: 7 of 7 rows from 2 files; readings: 4 given, 4 by the token rule');
    expect(stdout).toContain('settings: draws 300, seed');
    expect(stdout).toContain(`results: ${path.relative(process.cwd(), out)}\n`);
    const files = await readdir(out);
    for (const name of RESULT_FILES) expect(files).toContain(name);
    expect(await readFile(path.join(out, 'import_issues.csv'), 'utf8')).toMatch(/^file,location,field,kind,message\r\n.*,,,missing cell,"model m1: /);
    expect(JSON.parse(await readFile(path.join(out, 'byo_manifest.json'), 'utf8'))).toMatchObject({ battery: 'far6', outcome: 'analysed', issues: { 'missing cell': 4 } });
    expect(await readFile(path.join(out, 'reply_totals.csv'), 'utf8')).toContain('m2,fr,2,2,2,0,0');
  });

  it('refuses a file with a bad row, naming file, row and field, in import_issues.csv too; --drop-bad-rows analyses the rest', async () => {
    const replies = path.join(tmp.dir, 'replies');
    const { mkdir } = await import('node:fs/promises');
    await mkdir(replies);
    const good = await readFile(path.join(FIXTURES, 'sample.jsonl'), 'utf8');
    await writeFile(path.join(replies, 'good.jsonl'), good);
    const bad = good.split('\n')[0]!.replace('"language":"en"', '"language":"english"').replace('"story":"s1"', '"story":"s2"');
    await writeFile(path.join(replies, 'bad.jsonl'), `${bad}\n`);
    const out = path.join(tmp.dir, 'out');

    const refused = await runMain(['analyze', '--battery', 'far6', '--replies', replies, '--out', out]);

    expect(refused.code).toBe(1);
    const badFile = path.join(replies, 'bad.jsonl');
    expect(refused.stderr).toContain('unknown language in "language": 1');
    expect(refused.stderr).toContain(`${badFile}: row 1, field "language": unknown language "english"; expected one of en, zh, de, ja, ko, fr (did you mean "en"?)`);
    expect(refused.stderr).toContain(`refused: 1 problem in the rows; nothing analysed. All are listed in ${path.relative(process.cwd(), path.join(out, 'import_issues.csv'))}; --drop-bad-rows analyses the valid rows`);
    expect(await readFile(path.join(out, 'import_issues.csv'), 'utf8')).toContain(
      `${badFile},row 1,language,unknown language,"unknown language ""english""; expected one of en, zh, de, ja, ko, fr (did you mean ""en""?)"\r\n`,
    );
    expect(await readdir(out)).not.toContain('story_scores.csv');
    expect(JSON.parse(await readFile(path.join(out, 'byo_manifest.json'), 'utf8'))).toMatchObject({ outcome: 'refused', bad_rows: 'refuse the input' });

    const dropped = await runMain(['analyze', '--battery', 'far6', '--replies', replies, '--out', out, '--drop-bad-rows']);
    expect(dropped.code).toBe(0);
    expect(dropped.stderr).toContain(`1 problem: those rows are left out (--drop-bad-rows); listed in ${path.relative(process.cwd(), path.join(out, 'import_issues.csv'))}`);
    expect(dropped.stdout).toContain('replies: 5 of 6 rows from 2 files');
    expect(await readdir(out)).toContain('story_scores.csv');
  });

  it('--replies and --out go together, and not with a campaign file', async () => {
    const missingOut = await runMain(['analyze', '--replies', FIXTURES]);
    expect(missingOut.code).toBe(1);
    expect(missingOut.stderr).toContain('sondage analyze: --replies and --out go together');
    const both = await runMain(['analyze', 'campaign.yaml', '--replies', FIXTURES, '--out', tmp.dir]);
    expect(both.code).toBe(1);
    expect(both.stderr).toContain('give either a campaign file or --replies, not both');
    const onRun = await runMain(['run', 'campaign.yaml', '--replies', FIXTURES]);
    expect(onRun.code).toBe(1);
    expect(onRun.stderr).toContain("Unknown option '--replies'");
  });

  it('an unreadable replies file is an error naming it', async () => {
    const file = path.join(tmp.dir, 'r.jsonl');
    await writeFile(file, '{"model": \n');
    const { code, stderr } = await runMain(['analyze', '--battery', 'far6', '--replies', file, '--out', path.join(tmp.dir, 'out')]);
    expect(code).toBe(1);
    expect(stderr).toContain(`${file}: line 1: not valid JSON (the JSON ends too early)`);
    expect(stderr).toContain('refused: 1 problem in the rows; nothing analysed');
  });

  it('sondage analyze <campaign.yaml> still analyses a collected campaign', async () => {
    const file = await writeCampaign(tmp.dir, 'small.yaml');
    expect((await runMain(['run', file, '--quiet'])).code).toBe(0);
    const { code, stdout } = await runMain(['analyze', file]);
    expect(code).toBe(0);
    expect(stdout).toContain(`results: ${path.relative(process.cwd(), path.join(tmp.dir, 'data', 'campaigns', 'run-small', 'results'))}`);
  }, 60_000);
});

describe('sondage analyze --replies for batteries whose rows go straight to the estimators', () => {
  const XVALUE = path.join(REPO_ROOT, 'examples/xvalue');

  it('X-Value verdicts, scored against the QA pairs given with --input, write the tables of a run', async () => {
    const out = path.join(tmp.dir, 'xv');
    const { code, stdout, stderr } = await runMain(['analyze', '--battery', 'xvalue', '--replies', path.join(XVALUE, 'byo-verdicts.csv'), '--out', out, '--input', `qa_pairs=${path.join(XVALUE, 'qa-pairs.jsonl')}`]);
    expect(stderr).toBe('');
    expect(code).toBe(0);
    expect(stdout).toContain('verdicts: 8 of 8 rows from 1 file, scored against 70 QA pairs');
    expect((await readdir(out)).sort()).toEqual(expect.arrayContaining(['overall.csv', 'by_language.csv', 'checkpoints.csv', 'summary.md', 'report.html']));
    expect(await readFile(path.join(out, 'overall.csv'), 'utf8')).toMatch(/^model,strategy,n,/);
  });

  it('a bad X-Value row refuses the file, listed in import_issues.csv; --drop-bad-rows analyses the rest', async () => {
    const file = path.join(tmp.dir, 'v.csv');
    const text = await readFile(path.join(XVALUE, 'byo-verdicts.csv'), 'utf8');
    await writeFile(file, `${text.trimEnd()}\nmy-model,xv-nope-01,defonly,Pass,,,,,,,,,,,,\n`);
    const out = path.join(tmp.dir, 'xv-bad');
    const pairs = `qa_pairs=${path.join(XVALUE, 'qa-pairs.jsonl')}`;
    const { code, stderr } = await runMain(['analyze', '--battery', 'xvalue', '--replies', file, '--out', out, '--input', pairs]);
    expect(code).toBe(1);
    expect(stderr).toContain(`${file}: line 10, qa_id: qa_id "xv-nope-01" is not among the QA pairs given`);
    expect(await readFile(path.join(out, 'import_issues.csv'), 'utf8')).toContain('xv-nope-01');
    expect(await readdir(out)).not.toContain('overall.csv');
    const dropped = await runMain(['analyze', '--battery', 'xvalue', '--replies', file, '--out', out, '--input', pairs, '--drop-bad-rows']);
    expect(dropped.code).toBe(0);
    expect(dropped.stdout).toContain('verdicts: 8 of 9 rows');
    expect(await readdir(out)).toContain('overall.csv');
  });

  it('--input is checked against what the battery takes', async () => {
    const replies = path.join(XVALUE, 'byo-verdicts.csv');
    const missing = await runMain(['analyze', '--battery', 'xvalue', '--replies', replies, '--out', tmp.dir]);
    expect(missing.code).toBe(1);
    expect(missing.stderr).toContain('--input qa_pairs=FILE is required');
    const unknown = await runMain(['analyze', '--battery', 'far6', '--replies', FIXTURES, '--out', tmp.dir, '--input', 'pairs=x.jsonl']);
    expect(unknown.code).toBe(1);
    expect(unknown.stderr).toContain('--input pairs: battery far6 takes no other input');
    const malformed = await runMain(['analyze', '--battery', 'xvalue', '--replies', replies, '--out', tmp.dir, '--input', 'qa_pairs']);
    expect(malformed.code).toBe(1);
    expect(malformed.stderr).toContain('--input qa_pairs: expected NAME=PATH');
    expect(await readdir(tmp.dir)).toEqual([]);
  });

  it('P(True) rows are analysed by the estimators; a file with a bad row is refused whole, every problem named', async () => {
    const rows = ['item,model,q,r,v,correct,p_true,benchmark'];
    for (const item of ['i1', 'i2', 'i3', 'i4']) for (const q of ['en', 'fr']) for (const v of ['en', 'fr']) rows.push(`${item},m1,${q},${q},${v},${item === 'i1' || item === 'i3' ? 1 : 0},${item === 'i1' ? 0.9 : 0.4},triv`);
    const file = path.join(tmp.dir, 'rows.csv');
    await writeFile(file, `${rows.join('\n')}\n`);
    const out = path.join(tmp.dir, 'pt');
    const ok = await runMain(['analyze', '--battery', 'ptrue', '--replies', file, '--out', out]);
    expect(ok.stderr).toBe('');
    expect(ok.code).toBe(0);
    expect(ok.stdout).toContain('rows: 16 of 16 from 1 file');
    expect(ok.stdout).toContain('settings: draws 200, seed 1');
    expect(await readdir(out)).toEqual(expect.arrayContaining(['cells.csv', 'regimes.csv', 'summary.md', 'report.html']));

    await writeFile(file, `${rows.join('\n')}\ni5,m1,en,en,en,maybe,0.5,triv\n`);
    const bad = await runMain(['analyze', '--battery', 'ptrue', '--replies', file, '--out', path.join(tmp.dir, 'pt-bad')]);
    expect(bad.code).toBe(1);
    expect(bad.stderr).toContain(`${file}: line 18: correct: expected 1/0 or true/false, got "maybe"`);
    expect(await readdir(path.join(tmp.dir, 'pt-bad'))).toEqual(['byo_manifest.json', 'import_issues.csv']);
  });
});
