/**
 * The P(True) analysis's SQL stage alone: queryPtrueRows (lib/batteries/ptrue/analysis/queryRows.ts)
 * over the data folder a `bench:local-throughput -- --battery ptrue --dir DIR` run left, once
 * through KeptSubqueries as `sondage analyze` runs it (two connections: the next model's query
 * computed while the rows of the one before are made compact) and once on one connection (each
 * query waits for the rows before it). Prints the wall and CPU time of each, the rows and the
 * peak RSS.
 *
 *   npm run bench:local-throughput -- --battery ptrue --full              # once: the paper's size (~15 min)
 *   npm run bench:ptrue-rows -- --dir "$TMPDIR/sondage-bench-ptrue-full"
 *   npm run bench:ptrue-rows -- --dir DIR --only one-connection           # or --only kept
 *
 * Each way runs in a process of its own, one after the other, so that neither inherits the
 * other's heap or DuckDB buffers.
 */
import { spawnSync } from 'node:child_process';
import { existsSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { parseArgs } from 'node:util';
import { localSources } from '../lib/analysis/localSources.js';
import { ptrueSourceMap } from '../lib/batteries/ptrue/analysis/ptrueAnalysis.js';
import { queryPtrueRows } from '../lib/batteries/ptrue/analysis/queryRows.js';
import { PTRUE_PROMPT_COLUMNS } from '../lib/batteries/ptrue/promptColumns.js';
import { DuckDb, tableGlob } from '../lib/store/DuckDb.js';
import { KeptSubqueries } from '../lib/store/keptSubqueries.js';

const WAYS = ['kept', 'one-connection'] as const;
type Way = (typeof WAYS)[number];

const { values } = parseArgs({
  options: {
    dir: { type: 'string' },
    campaign: { type: 'string', default: 'ptrue-bench' },
    only: { type: 'string' },
  },
});
if (!values.dir) throw new Error('--dir: the folder of a `bench:local-throughput -- --battery ptrue --dir DIR` run (its data/ inside)');
const dataDir = path.join(path.resolve(values.dir), 'data');
if (!existsSync(path.join(dataDir, 'campaigns', values.campaign))) throw new Error(`${dataDir}: no campaign ${values.campaign} (run bench:local-throughput -- --battery ptrue --dir ${values.dir} first)`);
if (values.only !== undefined && !(WAYS as readonly string[]).includes(values.only)) throw new Error(`--only: one of ${WAYS.join(', ')}`);

if (values.only) {
  await measure(values.only as Way);
} else {
  // Each way in a fresh process, with the flags the local-throughput bench gives the run.
  for (const way of WAYS) {
    const script = fileURLToPath(import.meta.url);
    const child = spawnSync(process.execPath, [...process.execArgv, script, '--dir', values.dir, '--campaign', values.campaign, '--only', way], { stdio: 'inherit' });
    if (child.status !== 0) process.exit(child.status ?? 1);
  }
}

async function measure(way: Way): Promise<void> {
  const db = await DuckDb.open();
  try {
    const sources = await localSources(db, (phase, table) => tableGlob(dataDir, values.campaign!, phase, table), ['generate', 'verify', 'judge'], PTRUE_PROMPT_COLUMNS);
    const kept = way === 'kept' ? new KeptSubqueries(db) : undefined;
    const t0 = performance.now();
    const cpu0 = process.cpuUsage();
    const rows = await queryPtrueRows(kept ?? db, ptrueSourceMap(sources));
    const cpu = process.cpuUsage(cpu0);
    const seconds = (performance.now() - t0) / 1000;
    await kept?.drop();
    const peak = process.resourceUsage().maxRSS / 1024;
    console.log(
      `ptrue-rows ${way.padEnd(15)} ${rows.length.toLocaleString('en-US')} rows  ${seconds.toFixed(1)} s wall  ${((cpu.user + cpu.system) / 1e6).toFixed(1)} s CPU  peak RSS ${peak.toFixed(0)} MiB`,
    );
  } finally {
    db.close();
  }
}
