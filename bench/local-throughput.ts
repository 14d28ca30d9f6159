/**
 * A battery's campaign at full size through the local run, on simulated models with zero latency:
 * prints the time of each wave of phases, model replies per second end to end and peak memory
 * (RSS, which includes DuckDB's native memory).
 *
 *   npm run bench:local-throughput                                   # FAR-6 at full size (~1M replies)
 *   npm run bench:local-throughput -- --stories 20 --models 2        # a quick look
 *   npm run bench:local-throughput -- --battery xvalue               # X-Value: 100,000 pairs, the rubric, 1 model
 *   npm run bench:local-throughput -- --battery xvalue --pairs 10000 --strategies defonly,rubric
 *   npm run bench:local-throughput -- --battery ptrue                # P(True): 300 items × 216 conditions, 3 models
 *   npm run bench:local-throughput -- --battery ptrue --full         # P(True) at the paper's size (resumable)
 *   npm run bench:local-throughput -- --battery ptrue --dir /tmp/x   # work in /tmp/x, keep it; run again to resume
 *
 * --full is P(True) at the size of Disentangling Question, Response, and Verifier Languages §3.2:
 * 10 models × 2,880 base items (three 960-item benchmarks) × 6 question × 6 response languages =
 * 1,036,800 replies, each probed in 6 verifier languages (6,220,800 probes). It works in a fixed
 * folder under the OS temp folder (or --dir): killed at any point and run again with the same
 * command, the run adopts what the killed one collected and ends with the results an
 * uninterrupted run writes (test/bench/resumableBench.test.ts). That folder is removed once a run
 * finishes, unless --keep; a folder given with --dir is kept.
 *
 * "Model replies" are the replies of the models under test (FAR-6's generate, X-Value's every
 * phase, P(True)'s generate and verify); a role's calls (the judges) are counted apart.
 * Target: ≥ 20,000 model replies/s end to end, < 2 GB peak RSS.
 */
import { mkdir, mkdtemp, rm } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { parseArgs } from 'node:util';
import { writePtrueCampaign, writeXvalueCampaign } from './batteryCampaigns.js';
import { writeFullSizeCampaign } from './fullSizeCampaign.js';
import { loadRunContext } from '../lib/run/context.js';
import { ANALYSING, runCampaign } from '../lib/run/runCampaign.js';
import { ProgressBar } from '../lib/run/progress.js';

const { values } = parseArgs({
  options: {
    battery: { type: 'string', default: 'far6' },
    stories: { type: 'string', default: '105' },
    models: { type: 'string' },
    fraction: { type: 'string', default: '0.6' },
    pairs: { type: 'string', default: '100000' },
    strategies: { type: 'string', default: 'rubric' },
    items: { type: 'string', default: '300' },
    keep: { type: 'boolean', default: false },
    threads: { type: 'string' },
    full: { type: 'boolean', default: false },
    dir: { type: 'string' },
    json: { type: 'boolean', default: false },
  },
});

/** The paper's full P(True) panel (§3.2): 2,880 base items on 10 models. */
const PTRUE_FULL = { items: 2880, models: 10 };
if (values.full && values.battery === 'xvalue') throw new Error('--full: for --battery ptrue (FAR-6 runs at full size by default; X-Value has --pairs)');
if (values.full && values.battery === 'ptrue') {
  values.items = String(PTRUE_FULL.items);
  values.models ??= String(PTRUE_FULL.models);
}
// A fixed folder (given, or the full size's) is kept until the run finishes, so that running the
// same command again resumes the run instead of starting over.
const fixedDir = values.dir ?? (values.full ? path.join(os.tmpdir(), `sondage-bench-${values.battery}-full`) : undefined);
const dir = fixedDir ?? (await mkdtemp(path.join(os.tmpdir(), 'sondage-bench-')));
if (fixedDir) await mkdir(fixedDir, { recursive: true });
let file: string;
let what: string;
if (values.battery === 'far6') {
  const models = Number(values.models ?? 8);
  file = await writeFullSizeCampaign(dir, { stories: Number(values.stories), models, repeatFraction: Number(values.fraction) }, 'bench.yaml');
  what = `FAR-6: ${models} simulated models × 6 languages × ${values.stories} stories, repeats 3 × ${values.fraction}, a simulated judge`;
} else if (values.battery === 'xvalue') {
  const models = Number(values.models ?? 1);
  const strategies = values.strategies.split(',');
  file = await writeXvalueCampaign(dir, { pairs: Number(values.pairs), models, strategies });
  what = `X-Value: ${models} simulated judge(s) × ${values.pairs} QA pairs in 14 languages, ${strategies.join(' + ')}`;
} else if (values.battery === 'ptrue') {
  const models = Number(values.models ?? 3);
  file = await writePtrueCampaign(dir, { items: Number(values.items), models });
  what = `P(True): ${models} simulated models × ${values.items} items × 6 × 6 languages, 6 verifier languages, a simulated judge`;
} else {
  throw new Error(`--battery ${values.battery}: use far6, xvalue or ptrue`);
}

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
/** One entry per wave of phases, as the run reports them. */
const waves: { label: string; start: number; end?: number }[] = [];
const bar = new ProgressBar();
/** When the run said its analysis begins: after the last wave it records the campaign complete (a count of the ledger) first. */
let tAnalysis: number | undefined;
const summary = await runCampaign(ctx, {
  ...(values.threads !== undefined ? { threads: Number(values.threads) } : {}),
  // The run's own lines (how many partition threads it chose, and why not more); the last says
  // the analysis begins, which parts the time after the last wave.
  log: (line) => {
    if (line === ANALYSING) {
      tAnalysis = performance.now();
      if (process.env['BENCH_MEMORY']) {
        // With --expose-gc, what the run still holds live as the analysis begins, not its garbage.
        globalThis.gc?.();
        console.error('\nbefore the analysis:', process.memoryUsage());
      }
    }
    console.error(line);
  },
  progress: {
    start(label, total) {
      waves.push({ label, start: performance.now() });
      if (process.env['BENCH_MEMORY']) console.error(`\nbefore ${label}:`, process.memoryUsage());
      stage = label;
      bar.start(label, total);
    },
    tick: (d, e) => bar.tick(d, e),
    finish(e) {
      bar.finish(e);
      const now = performance.now();
      for (const w of waves) w.end ??= now;
      stage = 'analyse';
    },
  },
});
const tEnd = performance.now();
if (process.env['BENCH_MEMORY']) console.error('\nend:', process.memoryUsage());
clearInterval(sampler);
peakRss = Math.max(peakRss, process.memoryUsage.rss(), process.resourceUsage().maxRSS * 1024);

const bySubject = new Set(ctx.graph.phases.filter((p) => p.answeredBy === 'subject').map((p) => p.name));
const cpu = process.cpuUsage();
const cpuSeconds = (cpu.user + cpu.system) / 1e6;
const adopted = summary.phases.reduce((n, p) => n + p.adopted, 0);
const modelReplies = summary.phases.filter((p) => bySubject.has(p.phase)).reduce((n, p) => n + p.done, 0);
const roleCalls = summary.phases.filter((p) => !bySubject.has(p.phase)).reduce((n, p) => n + p.done, 0);
const secs = (a: number, b: number) => ((b - a) / 1000).toFixed(1);
const pad = (s: string) => s.padEnd(26);
const waveLines = waves.map((w) => `  ${pad(w.label)}${secs(w.start, w.end!)} s`).join('\n');
console.log(`
local-throughput: ${what}
  requests planned          ${summary.plan.totals.items} (${summary.phases.map((p) => `${p.phase} ${p.done}`).join(', ')})
  ${pad('load + plan (expand)')}${secs(t0, waves[0]?.start ?? tEnd)} s
${waveLines}
  ${pad('analyse (SQL + stats)')}${secs(waves.at(-1)?.end ?? t0, tEnd)} s${tAnalysis !== undefined ? `  (closing bookkeeping ${secs(waves.at(-1)?.end ?? t0, tAnalysis)} s, the analysis ${secs(tAnalysis, tEnd)} s)` : ''}
  ${pad('total')}${secs(t0, tEnd)} s
  model replies/s end to end ${Math.round(modelReplies / ((tEnd - t0) / 1000))}  (${modelReplies} model replies; ${Math.round((modelReplies + roleCalls) / ((tEnd - t0) / 1000))}/s counting ${roleCalls} judge calls)
  peak RSS                  ${(peakRss / 2 ** 20).toFixed(0)} MiB  (${Object.entries(stagePeak)
    .map(([k, v]) => `${k} ${(v / 2 ** 20).toFixed(0)}`)
    .join(', ')})
  peak JS heap used         ${(peakHeap / 2 ** 20).toFixed(0)} MiB
  CPU (user + system)       ${cpuSeconds.toFixed(1)} s  (every thread of the process; steadier than the time on a busy machine)${adopted > 0 ? `\n  resumed: ${adopted} replies adopted from a killed run's journals (the figures above are this run's)` : ''}
`);
if (values.json) {
  // One line for scripts that compare runs (bench/growth.ts).
  console.log(
    JSON.stringify({
      battery: values.battery,
      modelReplies,
      roleCalls,
      seconds: (tEnd - t0) / 1000,
      analyseSeconds: (tEnd - (waves.at(-1)?.end ?? t0)) / 1000,
      analysisSeconds: tAnalysis !== undefined ? (tEnd - tAnalysis) / 1000 : null,
      peakRssMiB: peakRss / 2 ** 20,
      cpuSeconds,
      stopped: summary.stopped ?? null,
    }),
  );
}
if (summary.stopped) process.exitCode = 1;
if (summary.stopped === undefined && !values.keep && values.dir === undefined) await rm(dir, { recursive: true, force: true });
else console.log(`data kept in ${dir}`);
