import { mkdir, readFile, readdir } from 'node:fs/promises';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { RESULT_FILES } from '../../../../lib/batteries/far6/analysis/index.js';
import type { AnalysisResults } from '../../../../lib/batteries/far6/analysis/index.js';
import { analyzeReplies } from '../../../../lib/analysis/analyzeReplies.js';
import { far6 } from '../../../../lib/batteries/far6/index.js';
import { runCampaign } from '../../../../lib/run/runCampaign.js';
import { exportRun } from '../../../fixtures/byo/exportRun.js';
import type { ExportFormat } from '../../../fixtures/byo/exportRun.js';
import { loadContext, tempDir, writeCampaign } from '../../../helpers/campaigns.js';

// A small simulated run, its replies exported as a researcher would hold them, analysed again with
// analyzeReplies: every results file but the summary and the HTML report (which name the campaign and
// the source) must come out identical.

let dir: string;
let cleanup: () => Promise<void>;
let dataDir: string;
let replyCount: number;
const CAMPAIGN = 'run-small';
const NAMING_THE_SOURCE: readonly string[] = ['summary.md', 'report.html'];
const COMPARED = RESULT_FILES.filter((f) => !NAMING_THE_SOURCE.includes(f));

beforeAll(async () => {
  ({ dir, cleanup } = await tempDir('byo-rt'));
  dataDir = path.join(dir, 'data');
  const file = await writeCampaign(dir, 'small.yaml');
  const run = await runCampaign(await loadContext(file), { dataDir });
  replyCount = ((run.analysis as AnalysisResults | undefined)?.replyTotals ?? []).reduce((n, t) => n + t.attempts, 0);
  expect(replyCount).toBeGreaterThan(100);
}, 60_000);
afterAll(() => cleanup());

async function runResult(name: string): Promise<string> {
  return readFile(path.join(dataDir, 'campaigns', CAMPAIGN, 'results', name), 'utf8');
}

async function expectSameResults(out: string): Promise<void> {
  for (const name of COMPARED) {
    const ours = await readFile(path.join(out, name), 'utf8');
    expect(ours, name).toBe(await runResult(name));
  }
}

describe('bring your own replies: a run exported and analysed again gives the run\'s results', () => {
  it.each<[ExportFormat, boolean]>([
    ['jsonl', false],
    ['csv', false],
    ['parquet', false],
    ['jsonl', true],
    ['csv', true],
    ['parquet', true],
  ])('%s (rule readings from the reading map: %s)', async (format, ruleFromMap) => {
    const file = path.join(dir, `${format}-${ruleFromMap}`, `replies.${format}`);
    await mkdir(path.dirname(file), { recursive: true });
    const rows = await exportRun(dataDir, CAMPAIGN, file, format, { ruleFromMap });
    expect(rows).toBe(replyCount);
    const out = path.join(dir, `out-${format}-${ruleFromMap}`);

    const result = await analyzeReplies(far6, { replies: file, out });

    expect(result.issues).toEqual([]);
    expect(result.summary).toMatchObject({ files: 1, rows, accepted: rows, rejected: 0 });
    if (ruleFromMap) expect(result.summary.readingsComputed).toBeGreaterThan(0);
    else expect(result.summary.readingsComputed).toBe(0);
    const storyScores = await readFile(path.join(out, 'story_scores.csv'), 'utf8');
    expect(storyScores.split('\n').length).toBeGreaterThan(50);
    expect(storyScores).toBe(await runResult('story_scores.csv'));
    await expectSameResults(out);
    expect(await readFile(path.join(out, 'summary.md'), 'utf8')).toMatch(/^# FAR-6 analysis: byo \(simulated\)/);
    expect((await readdir(path.join(result.tablesDir!, 'generate', 'replies'))).sort()).toEqual(['model=alpha', 'model=beta']);
  });

  it('a folder with one model as JSONL and the other as Parquet gives the same results', async () => {
    const folder = path.join(dir, 'split');
    await mkdir(path.join(folder, 'nested'), { recursive: true });
    const a = await exportRun(dataDir, CAMPAIGN, path.join(folder, 'alpha.jsonl'), 'jsonl', { model: 'alpha' });
    const b = await exportRun(dataDir, CAMPAIGN, path.join(folder, 'nested', 'beta.parquet'), 'parquet', { model: 'beta', ruleFromMap: true });
    expect(a + b).toBe(replyCount);
    const out = path.join(dir, 'out-split');

    const result = await analyzeReplies(far6, { replies: folder, out });

    expect(result.summary).toMatchObject({ files: 2, rows: replyCount, accepted: replyCount });
    await expectSameResults(out);
    // A second import into the same folder replaces the tables instead of adding to them.
    await analyzeReplies(far6, { replies: path.join(folder, 'alpha.jsonl'), out });
    expect(await readdir(path.join(out, 'tables', 'generate', 'replies'))).toEqual(['model=alpha']);
  });
});
