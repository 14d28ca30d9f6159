/**
 * The FAR-6 analysis end to end at full size (bench/analysis): the replies of the full
 * inventory — 8 simulated models × 6 languages (48 cells), 105 synthetic stories, every question
 * form and answer constraint, both keyings and option orders, repeats on a seeded 60 % — as a
 * local run writes them (Parquet prompts, replies and readings), then every stage of the analysis
 * on them: each query of the SQL stage, the estimators, model identity with the story bootstrap
 * (Same Judgment, Different Yes §5), habits (§6), reading agreement and the result files. Prints the time per stage,
 * the total and the peak RSS of this process (process.resourceUsage().maxRSS, which includes
 * DuckDB's native memory).
 *
 * The replies are generated once by a simulated run in a child process (so that its memory is not
 * counted) and cached under os.tmpdir() with a version key; later runs reuse them.
 *
 *   npm run bench:analysis                          # full size, ~1M replies, 300 draws
 *   npm run bench:analysis -- --scale 0.1           # a quick look (stories × 0.1, at least 8)
 *   npm run bench:analysis -- --scale 3             # three times the stories (the growth bench's 3×)
 *   npm run bench:analysis -- --bootstrap 50
 *   npm run bench:analysis -- --out DIR             # keep the result files in DIR (to diff two versions; with --byo, what it wrote)
 *   npm run bench:analysis -- --byo                 # `analyze --replies` on a JSONL export of the run
 *   npm run bench:analysis -- --byo --format parquet   # … on a Parquet export (or csv)
 *   npm run bench:analysis -- --byo --import-only --copies 10 --scale 0.1
 *                                                   # the import alone on the export copied 10 ×
 *                                                   # under other model names (ids derived)
 *   npm run bench:analysis -- --byo --import-only --threads 0   # … all in process (default: threads
 *                                                   # for JSONL past 64 MiB, importThreads.ts)
 *
 * Target: under 15 s and under 2 GB at full size. The npm script starts Node with the
 * one-thread garbage collector, as bin/sondage.mjs starts every command.
 */
import { spawnSync } from 'node:child_process';
import { createWriteStream } from 'node:fs';
import { mkdir, mkdtemp, readFile, rename, rm, stat, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { parseArgs } from 'node:util';
import { analyzeReplies } from '../lib/analysis/analyzeReplies.js';
import { importReplies } from '../lib/batteries/far6/byo/index.js';
import { far6 } from '../lib/batteries/far6/index.js';
import { writeResults } from '../lib/batteries/far6/report/report.js';
import { analyzeCampaign } from '../lib/batteries/far6/analysis/analyzeCampaign.js';
import type { TableSources } from '../lib/batteries/far6/analysis/types.js';
import { localSources } from '../lib/analysis/localSources.js';
import { loadRunContext } from '../lib/run/context.js';
import { runCampaign } from '../lib/run/runCampaign.js';
import { writeFullSizeCampaign } from './fullSizeCampaign.js';
import { DuckDb, sqlString, tableGlob } from '../lib/store/DuckDb.js';
import { KeptSubqueries } from '../lib/store/keptSubqueries.js';
import { tableColumns } from '../lib/store/schemas.js';
import { FAR6_PROMPT_COLUMNS } from '../lib/batteries/far6/promptColumns.js';

/** Bump when the generated data would differ (campaign, generator, table layout). v2: readings with facet and value (the battery contract). */
const DATA_VERSION = 'v2';
const CAMPAIGN = 'bench';

const { values } = parseArgs({
  options: {
    scale: { type: 'string', default: '1' },
    bootstrap: { type: 'string', default: '300' },
    byo: { type: 'boolean', default: false },
    format: { type: 'string', default: 'jsonl' },
    'import-only': { type: 'boolean', default: false },
    copies: { type: 'string', default: '1' },
    threads: { type: 'string' },
    regenerate: { type: 'boolean', default: false },
    'generate-only': { type: 'boolean', default: false },
    cache: { type: 'string', default: path.join(os.tmpdir(), 'sondage-bench-analysis') },
    out: { type: 'string' },
  },
});
const scale = Number(values.scale);
const draws = Number(values.bootstrap);
const format = values.format as 'jsonl' | 'parquet' | 'csv';
if (!(scale > 0 && scale <= 10)) throw new Error(`--scale ${values.scale}: expected a number in (0, 10]`);
if (!Number.isInteger(draws) || draws < 0) throw new Error(`--bootstrap ${values.bootstrap}: expected a whole number ≥ 0`);
if (!['jsonl', 'parquet', 'csv'].includes(format)) throw new Error(`--format ${format}: expected jsonl, parquet or csv`);
const copies = Number(values.copies);
if (!Number.isInteger(copies) || copies < 1) throw new Error(`--copies ${values.copies}: expected a whole number ≥ 1`);
if (copies > 1 && format !== 'jsonl') throw new Error('--copies: only with --format jsonl');
const importThreads = values.threads === undefined ? undefined : Number(values.threads);
if (importThreads !== undefined && !(Number.isInteger(importThreads) && importThreads >= 0)) throw new Error(`--threads ${values.threads}: expected a whole number ≥ 0`);
// Scaling the stories keeps the 48 cells; 8 stories is the fewest the identity analysis compares on.
const nStories = Math.max(8, Math.round(105 * scale));
const cacheDir = path.join(values.cache, `${DATA_VERSION}-stories${nStories}`);
const dataDir = path.join(cacheDir, 'data');

/** The simulated run of the full inventory (as bench/local-throughput), its data dir kept. */
async function generate(): Promise<void> {
  await rm(cacheDir, { recursive: true, force: true });
  const work = `${cacheDir}.partial-${process.pid}`;
  await rm(work, { recursive: true, force: true });
  await mkdir(work, { recursive: true });
  await writeFullSizeCampaign(work, { name: CAMPAIGN, stories: nStories }, 'bench.yaml');
  await runCampaign(await loadRunContext(path.join(work, 'bench.yaml')));
  await rename(work, cacheDir);
}

const exists = (p: string) => stat(p).then(() => true, () => false);

if (values['generate-only']) {
  await generate();
  process.exit(0);
}

if (values.regenerate || !(await exists(dataDir))) {
  // A child process, so that the run's memory does not count in this process's peak RSS.
  console.log(`generating the replies (${nStories} stories, once) into ${cacheDir} …`);
  const t = performance.now();
  const child = spawnSync(
    process.execPath,
    [...process.execArgv, '--max-old-space-size=1536', import.meta.filename, '--generate-only', '--scale', String(scale), '--cache', values.cache],
    { stdio: 'inherit' },
  );
  if (child.status !== 0) throw new Error(`generating the replies failed (exit ${child.status})`);
  console.log(`  generated in ${((performance.now() - t) / 1000).toFixed(1)} s\n`);
}

let last = performance.now();
const timings: [string, number][] = [];
function mark(name: string): void {
  const now = performance.now();
  const s = (now - last) / 1000;
  last = now;
  timings.push([name, s]);
  console.log(`${name.padEnd(44)} ${s.toFixed(2).padStart(7)} s   rss ${(process.memoryUsage.rss() / 2 ** 20).toFixed(0).padStart(5)} MiB`);
}

function peakRssMiB(): number {
  return process.resourceUsage().maxRSS / 1024;
}

if (values.byo) await byoBench();
else await analysisBench();

/** analyzeCampaign (each stage timed as it ends) and writeResults on the cached run's tables. */
async function analysisBench(): Promise<void> {
  const t0 = performance.now();
  last = t0;
  const db = await DuckDb.open();
  try {
    // The sources `sondage analyze` reads (localSources: the prompts' text factors as ENUMs), as views.
    const sources = await localSources(db, (phase, table) => tableGlob(dataDir, CAMPAIGN, phase, table), ['generate'], FAR6_PROMPT_COLUMNS);
    const tables: TableSources = { prompts: 'prompts', replies: 'replies', readings: 'readings' };
    for (const table of ['prompts', 'replies', 'readings'] as const) await db.run(`CREATE VIEW ${table} AS SELECT * FROM ${sources.table(table, ['generate'])} t`);
    const [counts] = await db.all<{ replies: number; prompts: number; readings: number }>(
      'SELECT (SELECT count(*) FROM replies) AS replies, (SELECT count(*) FROM prompts) AS prompts, (SELECT count(*) FROM readings) AS readings',
    );
    console.log(`bench/analysis: ${counts?.replies} replies, ${counts?.prompts} prompts, ${counts?.readings} readings; 48 cells, ${nStories} stories, ${draws} draws\n`);
    last = performance.now();
    // As `sondage analyze`: the queries several queries include are computed once (KeptSubqueries),
    // and analyzeCampaign runs each later query in DuckDB beside estimators that do not need its
    // rows; a stage's time is the wait for what it names.
    const q = new KeptSubqueries(db);
    const results = await analyzeCampaign(q, tables, { bootstrapDraws: draws, onStage: mark });
    const identity = results.identity;
    // --out keeps the result files (to compare two versions' results); by default they are removed.
    const out = values.out ?? (await mkdtemp(path.join(os.tmpdir(), 'sondage-bench-results-')));
    await mkdir(out, { recursive: true });
    try {
      await writeResults((name, text) => writeFile(path.join(out, name), text), results, { campaign: CAMPAIGN, simulated: true, source: dataDir });
      const html = (await stat(path.join(out, 'report.html'))).size;
      mark(`result files (CSV, summary.md, report.html ${(html / 1024 ** 2).toFixed(1)} MiB)`);
    } finally {
      if (values.out === undefined) await rm(out, { recursive: true, force: true });
    }
    for (const c of identity?.counts ?? []) {
      console.log(`  ${c.readout} ${c.metric}: same-model nearest ${c.same_model} of ${c.n_cells} (random ${c.expected_random.toFixed(1)})`);
    }
  } finally {
    db.close();
  }
  report(t0, 'under 15 s at full size (976,704 replies, 300 draws) and under 2 GB');
}

/** Exports the cached run as one file in the BYO schema (once), then times `analyze --replies` on it. */
async function byoBench(): Promise<void> {
  const exportFile = path.join(cacheDir, `export.${format}`);
  if (values.regenerate || !(await exists(exportFile))) {
    const t = performance.now();
    await exportReplies(exportFile);
    console.log(`exported the run as ${exportFile} in ${((performance.now() - t) / 1000).toFixed(1)} s (not timed below)\n`);
  }
  const replies = copies > 1 ? path.join(cacheDir, `export-x${copies}.jsonl`) : exportFile;
  if (copies > 1 && (values.regenerate || !(await exists(replies)))) {
    const t = performance.now();
    await copyExport(exportFile, replies, copies);
    console.log(`copied the export ${copies} × as ${replies} in ${((performance.now() - t) / 1000).toFixed(1)} s (not timed below)\n`);
  }
  // --out keeps what the import wrote (tables/) or the analysis's result files, to compare two versions.
  const out = values.out ?? (await mkdtemp(path.join(os.tmpdir(), 'sondage-bench-byo-')));
  await mkdir(out, { recursive: true });
  const t0 = performance.now();
  last = t0;
  try {
    let s;
    if (values['import-only']) {
      // importReplies alone: read, validate, write the tables; no analysis.
      s = (await importReplies(replies, { tablesDir: path.join(out, 'tables'), campaign: CAMPAIGN, ...(importThreads === undefined ? {} : { threads: importThreads }) })).summary;
      mark('import: read, validate, write tables');
      console.log(`  JS heap used ${(process.memoryUsage().heapUsed / 2 ** 20).toFixed(0)} MiB after the import`);
    } else {
      s = (await analyzeReplies(far6, { replies, out, campaign: CAMPAIGN, onStage: (name) => mark(name) })).summary;
    }
    console.log(`  ${s.rows} rows read, ${s.accepted} accepted, ${s.rejected} rejected; readings ${s.readingsGiven} given, ${s.readingsComputed} computed`);
  } finally {
    if (values.out === undefined) await rm(out, { recursive: true, force: true });
  }
  report(t0, values['import-only'] ? 'the import of the 1M-row JSONL export under 10 s' : 'none of its own (the import under 10 s: --import-only)');
}

/**
 * The run's tables as rows of schema/replies.schema.json: one row per reply, the judge's readings
 * on the item's chosen reply, and the reading map, so that the import computes the rule readings
 * itself (as it would for replies collected elsewhere). The prompt text is left out.
 */
async function exportReplies(file: string): Promise<void> {
  // Preparation, not timed: the full-size export joins ~1M replies with their prompts and readings,
  // more than the analysis's 400 MB DuckDB limit holds.
  const db = await DuckDb.open({ memoryLimit: '3GB' });
  try {
    await db.run('SET preserve_insertion_order = false');
    for (const table of ['prompts', 'replies', 'readings'] as const) {
      await db.attachTable(table, tableGlob(dataDir, CAMPAIGN, 'generate', table), table, tableColumns(table, FAR6_PROMPT_COLUMNS));
    }
    const readings = format === 'csv' ? 'CAST(to_json(j.readings) AS VARCHAR)' : 'j.readings';
    const map = format === 'jsonl' ? 'json(p.reading_map_json)' : 'p.reading_map_json';
    const select = `
      SELECT p.model, p.language, p.story, p.story_group, p.concept_pair, p.form, p."constraint", p.named,
        p.option_order, p."repeat", p.construction, r.text, r.item_id, p.prompt_key, r.attempt, r.status,
        CASE WHEN r.chosen = 1 THEN ${readings} END AS readings, ${map} AS reading_map, p.prop_p, p.prop_notp,
        r.cost_usd, r.input_tokens, r.output_tokens, r.provider, r.simulated, r.created_at, r.error_message
      FROM (SELECT *, row_number() OVER (PARTITION BY item_id ORDER BY status <> 'ok', attempt, created_at) AS chosen FROM replies) r
      JOIN prompts p USING (item_id)
      LEFT JOIN (
        SELECT item_id, list({'reader': reader, 'label': label, 'raw': raw} ORDER BY reader) AS readings
        FROM readings WHERE reader LIKE 'judge:%' GROUP BY item_id
      ) j USING (item_id)
      ORDER BY r.model, r.language, r.item_id, r.attempt`;
    const options = format === 'jsonl' ? 'FORMAT json' : format === 'csv' ? 'FORMAT csv, HEADER true' : 'FORMAT parquet, COMPRESSION zstd';
    const tmp = `${file}.partial`;
    await db.run(`COPY (${select}) TO ${sqlString(tmp)} (${options})`);
    await rename(tmp, file);
  } finally {
    db.close();
  }
}

/**
 * The JSONL export `copies` times, each copy's models renamed (`m1` → `m1-c2`: other partitions,
 * other items) and its item_id and prompt_key left out, so that the import derives them: a
 * million-row input from the 1/10-scale run without generating the full one.
 */
async function copyExport(from: string, to: string, copies: number): Promise<void> {
  const lines = (await readFile(from, 'utf8')).split('\n').filter((l) => l !== '');
  const tmp = `${to}.partial`;
  const out = createWriteStream(tmp);
  for (let c = 0; c < copies; c++) {
    const chunk: string[] = [];
    for (const line of lines) {
      const { item_id: _i, prompt_key: _p, ...row } = JSON.parse(line) as Record<string, unknown>;
      chunk.push(JSON.stringify({ ...row, model: c === 0 ? row['model'] : `${String(row['model'])}-c${c}` }));
    }
    if (!out.write(`${chunk.join('\n')}\n`)) await new Promise<void>((resolve) => out.once('drain', () => resolve()));
  }
  await new Promise<void>((resolve, reject) => out.end((err?: Error | null) => (err ? reject(err) : resolve())));
  await rename(tmp, to);
}

/** Prints the total, CPU and peak RSS, and the target the figure is held to (bench/README.md). */
function report(t0: number, target: string): void {
  const total = (performance.now() - t0) / 1000;
  const cpu = process.cpuUsage();
  console.log(`${'total'.padEnd(44)} ${total.toFixed(2).padStart(7)} s`);
  // CPU time of every thread of this process (JS, workers, DuckDB) since it started: on a shared
  // machine a steadier measure of the work done than the wall time.
  console.log(`CPU time of the process ${((cpu.user + cpu.system) / 1e6).toFixed(1)} s (user ${(cpu.user / 1e6).toFixed(1)}, system ${(cpu.system / 1e6).toFixed(1)})`);
  console.log(`peak RSS ${peakRssMiB().toFixed(0)} MiB (process.resourceUsage().maxRSS; includes DuckDB's native memory)`);
  console.log(`target: ${target}`);
}
