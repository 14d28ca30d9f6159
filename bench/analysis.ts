/**
 * The TypeScript stages of the FAR-6 analysis at full size, on synthetic item rows (the output of
 * item_shares.sql): 8 models × 6 languages, 105 stories (Korean and French 45), every question
 * form and answer constraint with its readers, two concept pairs, both keyings, two orders — about
 * 900,000 item rows — then story scores and per-cell habits (estimate), model identity with 300
 * story-bootstrap draws (seed 000 §5), habit variance (§6) and the result files. Prints the time of
 * each stage and the peak RSS. The SQL stage and the million-reply run are bench/local-throughput.
 *
 *   node --import tsx bench/analysis.ts
 *   node --import tsx bench/analysis.ts --models 2 --stories 20   # a quick look
 */
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { parseArgs } from 'node:util';
import { estimate } from '../lib/analysis/estimators.js';
import { habitAnalysis } from '../lib/analysis/habits.js';
import { identityAnalysis } from '../lib/analysis/identity.js';
import { writeResults } from '../lib/analysis/report.js';
import { summarizeCells } from '../lib/analysis/summarizeCells.js';
import type { AnalysisResults, ItemShareRow } from '../lib/analysis/types.js';
import { seededRandom } from '../lib/design/hash.js';
import type { AnswerConstraint, QuestionForm } from '../lib/design/types.js';

const { values } = parseArgs({
  options: {
    models: { type: 'string', default: '8' },
    stories: { type: 'string', default: '105' },
    draws: { type: 'string', default: '300' },
  },
});
const nModels = Number(values.models);
const nStories = Number(values.stories);
const draws = Number(values.draws);

const LANGS = ['en', 'zh', 'de', 'ja', 'ko', 'fr'] as const;
const SHORT = new Set(['ko', 'fr']);
const FORMS: QuestionForm[] = ['plain', 'negint', 'alternative', 'ornot'];
const READERS: Record<AnswerConstraint, string[]> = {
  free: ['judge:sonnet'],
  verdict: ['rule', 'rule+', 'judge:sonnet'],
  yesno: ['rule', 'judge:sonnet'],
  label: ['rule'],
};
const GROUPS = ['acceptable', 'contested', 'violation'] as const;

function logistic(x: number): number {
  return 1 / (1 + Math.exp(-x));
}

/** Item rows with a story consensus, a model signature, a small language shift and a keying bias. */
function syntheticRows(): ItemShareRow[] {
  const rnd = seededRandom(2026);
  const normal = (): number => Math.sqrt(-2 * Math.log(1 - rnd())) * Math.cos(2 * Math.PI * rnd());
  const stories = Array.from({ length: nStories }, (_, k) => ({ id: `story${String(k).padStart(3, '0')}`, group: GROUPS[k % 3] as string, base: (k % 3 - 1) * 2.2 + 0.8 * normal() }));
  const rows: ItemShareRow[] = [];
  for (let m = 0; m < nModels; m++) {
    const model = `model${m}`;
    const signature = stories.map(() => normal());
    for (const language of LANGS) {
      const bias = -0.1 + 0.06 * normal();
      const inCell = SHORT.has(language) ? stories.filter((_, k) => k % 7 < 3) : stories;
      for (const [k, story] of inCell.entries()) {
        const pi = logistic(story.base + (signature[k] as number) + 0.2 * normal());
        for (const form of FORMS) {
          for (const constraint of ['free', 'verdict', 'yesno', 'label'] as const) {
            for (const reader of READERS[constraint]) {
              for (const pair of ['wr', 'os']) {
                for (const named of ['P', 'notP'] as const) {
                  for (const order of [0, 1]) {
                    const n = rnd() < 0.1 ? 3 : 1;
                    const p = Math.min(1, Math.max(0, named === 'P' ? pi + bias : pi - bias));
                    let nP = 0;
                    for (let i = 0; i < n; i++) if (rnd() < p) nP += 1;
                    rows.push({
                      model, language, reader, form, constraint, story: story.id, story_group: story.group,
                      concept_pair: pair, construction: `${form}-${pair}`, named, option_order: order,
                      prompt_key: `${model}|${language}|${story.id}|${form}|${constraint}|${pair}|${named}|${order}`,
                      n_replies: n, n_p: nP, n_notp: n - nP, n_both: 0, n_none: 0, n_invalid: 0,
                      second_listed: constraint === 'label' ? (order === 0 ? 'notP' : 'P') : null,
                    });
                  }
                }
              }
            }
          }
        }
      }
    }
  }
  return rows;
}

let peak = 0;
function rssMb(): number {
  const now = process.memoryUsage().rss / 2 ** 20;
  peak = Math.max(peak, now);
  return now;
}

async function stage<T>(name: string, f: () => T | Promise<T>): Promise<T> {
  const t0 = performance.now();
  const out = await f();
  const ms = performance.now() - t0;
  console.log(`${name.padEnd(40)} ${(ms / 1000).toFixed(2).padStart(7)} s   rss ${rssMb().toFixed(0).padStart(5)} MB`);
  return out;
}

const total0 = performance.now();
const rows = await stage('synthetic item rows (not timed work)', syntheticRows);
console.log(`  ${rows.length} item rows, ${nModels * LANGS.length} cells, ${nStories} stories, ${draws} draws`);
const t0 = performance.now();
const est = await stage('estimate: story scores, habits', () => estimate(rows));
const cellSummary = await stage('cell summary', () => summarizeCells(rows));
const identity = await stage('identity: pairs, neighbours, bootstrap', () => identityAnalysis(est.storyScores, { bootstrapDraws: draws, minCommonStories: est.minCommonStories }));
const habits = await stage('habit variance, sign changes', () => habitAnalysis(est.cellHabits));
const results: AnalysisResults = { ...est, cellSummary, replyTotals: [], itemRows: rows.length, simulated: true, identity, habits };
const dir = await mkdtemp(path.join(os.tmpdir(), 'sondage-bench-analysis-'));
await stage('result files (CSV, summary.md)', () => writeResults((name, text) => writeFile(path.join(dir, name), text), results, { campaign: 'bench', simulated: true }));
await rm(dir, { recursive: true, force: true });
const analysisS = (performance.now() - t0) / 1000;
const resourcePeak = process.resourceUsage().maxRSS / 1024;
for (const c of identity.counts) {
  console.log(`  ${c.readout} ${c.metric}: same-model nearest ${c.same_model} of ${c.n_cells} (random ${c.expected_random.toFixed(1)})`);
}
console.log(`analysis stages: ${analysisS.toFixed(2)} s; total with generation ${((performance.now() - total0) / 1000).toFixed(2)} s`);
console.log(`peak RSS: ${Math.max(peak, resourcePeak).toFixed(0)} MB (includes the synthetic rows held in memory)`);
