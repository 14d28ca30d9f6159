/**
 * Full-size FAR-6 inventory through the local run: 8 simulated models × 6 languages × 105 stories,
 * every question form and answer constraint, repeats on a seeded subset — about a million replies —
 * with zero simulated latency. Prints the time of each stage, replies per second end to end and
 * peak memory (RSS, which includes DuckDB's native memory).
 *
 *   npm run bench:local-throughput                # full size
 *   npm run bench:local-throughput -- --stories 20 --models 2   # a quick look
 *
 * Target (issue 2): ≥ 10,000 replies/s end to end, < 2 GB peak RSS.
 */
import { mkdtemp, rm } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { parseArgs } from 'node:util';
import { writeFullSizeCampaign } from './fullSizeCampaign.js';
import { loadRunContext } from '../lib/run/context.js';
import { runCampaign } from '../lib/run/runCampaign.js';
import { ProgressBar } from '../lib/run/progress.js';

const { values } = parseArgs({
  options: {
    stories: { type: 'string', default: '105' },
    models: { type: 'string', default: '8' },
    fraction: { type: 'string', default: '0.6' },
    keep: { type: 'boolean', default: false },
  },
});
const nStories = Number(values.stories);
const nModels = Number(values.models);

const dir = await mkdtemp(path.join(os.tmpdir(), 'sondage-bench-'));
const file = await writeFullSizeCampaign(dir, { stories: nStories, models: nModels, repeatFraction: Number(values.fraction) }, 'bench.yaml');

let peakRss = 0;
let stage = 'load + plan';
const stagePeak: Record<string, number> = {};
let peakHeap = 0;
const sampler = setInterval(() => {
  const rss = process.memoryUsage.rss();
  peakHeap = Math.max(peakHeap, process.memoryUsage().heapUsed);
  peakRss = Math.max(peakRss, rss);
  stagePeak[stage] = Math.max(stagePeak[stage] ?? 0, rss);
}, 100);
const t0 = performance.now();
const ctx = await loadRunContext(file);
const phaseStart: Record<string, number> = {};
const phaseEnd: Record<string, number> = {};
const bar = new ProgressBar();
const summary = await runCampaign(ctx, {
  progress: {
    start(label, total) {
      phaseStart[label] = performance.now();
      if (process.env['BENCH_MEMORY']) console.error(`\nbefore ${label}:`, process.memoryUsage());
      stage = label;
      bar.start(label, total);
    },
    tick: (d, e) => bar.tick(d, e),
    finish(e) {
      bar.finish(e);
      for (const k of Object.keys(phaseStart)) if (!(k in phaseEnd)) phaseEnd[k] = performance.now();
      stage = 'analyse';
    },
  },
});
const tEnd = performance.now();
if (process.env['BENCH_MEMORY']) console.error('\nend:', process.memoryUsage());
clearInterval(sampler);
peakRss = Math.max(peakRss, process.memoryUsage.rss(), process.resourceUsage().maxRSS * 1024);

const generated = summary.phases.find((p) => p.phase === 'generate')?.done ?? 0;
const judged = summary.phases.find((p) => p.phase === 'judge')?.done ?? 0;
const secs = (a: number, b: number) => ((b - a) / 1000).toFixed(1);
const tPlan = phaseStart['generate']!;
const analysisStart = phaseEnd['judge'] ?? phaseEnd['generate']!;
console.log(`
local-throughput: ${nModels} simulated models × 6 languages × ${nStories} stories, repeats 3 × ${values.fraction}
  requests planned         ${summary.plan.totals.items} (${generated} replies + ${judged} judge calls)
  load + plan (expand)     ${secs(t0, tPlan)} s
  generate                 ${secs(phaseStart['generate']!, phaseEnd['generate']!)} s
  judge                    ${secs(phaseStart['judge']!, phaseEnd['judge']!)} s
  analyse (SQL + stats)    ${secs(analysisStart, tEnd)} s
  total                    ${secs(t0, tEnd)} s
  replies/s end to end     ${Math.round(generated / ((tEnd - t0) / 1000))}  (model replies; ${Math.round((generated + judged) / ((tEnd - t0) / 1000))} counting judge calls)
  peak RSS                 ${(peakRss / 2 ** 20).toFixed(0)} MiB  (${Object.entries(stagePeak)
  .map(([k, v]) => `${k} ${(v / 2 ** 20).toFixed(0)}`)
  .join(', ')})
  peak JS heap used        ${(peakHeap / 2 ** 20).toFixed(0)} MiB
`);
if (!values.keep) await rm(dir, { recursive: true, force: true });
else console.log(`data kept in ${dir}`);
