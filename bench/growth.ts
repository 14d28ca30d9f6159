/**
 * How the local run's cost grows with the campaign: FAR-6 at several multiples of the full design
 * (bench/fullSizeCampaign.ts; the multiple scales the 105 stories, so every partition grows and
 * the 48 model × language partitions stay), each size in a fresh process of
 * bench/local-throughput.ts, then one table: size, model replies, time, replies/s, time per reply
 * (wall and CPU, the CPU of every thread: steadier on a shared machine) and peak RSS — so a
 * reader sees the curve. Growth that costs nothing but time keeps the time per
 * reply and the peak RSS flat.
 *
 *   npm run bench:growth                          # 0.1×, 1×, 3× the full design
 *   npm run bench:growth -- --sizes 0.05,0.1,0.3  # a quick look
 */
import { spawn } from 'node:child_process';
import path from 'node:path';
import { parseArgs } from 'node:util';

const { values } = parseArgs({ options: { sizes: { type: 'string', default: '0.1,1,3' }, models: { type: 'string', default: '8' } } });
const sizes = values.sizes.split(',').map((s) => {
  const n = Number(s);
  if (!(n > 0)) throw new Error(`--sizes ${values.sizes}: expected positive numbers separated by commas`);
  return n;
});
/** The full design's stories (Same Judgment, Different Yes §3). */
const FULL_STORIES = 105;

interface Figures {
  readonly modelReplies: number;
  readonly roleCalls: number;
  readonly seconds: number;
  readonly peakRssMiB: number;
  readonly cpuSeconds: number;
}

/** One size in a child process, so that each peak RSS is its own; resolves with its --json line. */
function runSize(stories: number): Promise<Figures> {
  const script = path.join(import.meta.dirname, 'local-throughput.ts');
  const args = [...process.execArgv, script, '--battery', 'far6', '--stories', String(stories), '--models', values.models, '--json'];
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, args, { stdio: ['ignore', 'pipe', 'inherit'] });
    let out = '';
    child.stdout.on('data', (d: Buffer) => {
      out += d.toString('utf8');
      process.stdout.write(d);
    });
    child.on('error', reject);
    child.on('exit', (code) => {
      const line = out.trimEnd().split('\n').reverse().find((l) => l.startsWith('{'));
      if (code !== 0 || line === undefined) reject(new Error(`exit ${code ?? 'by signal'}`));
      else resolve(JSON.parse(line) as Figures);
    });
  });
}

const rows: string[][] = [];
for (const size of sizes) {
  const stories = Math.max(1, Math.round(FULL_STORIES * size));
  // A size that fails (a heap that runs out) is a row of the curve too, not the end of the table.
  const f = await runSize(stories).catch((err: unknown) => (err instanceof Error ? err.message : String(err)));
  if (typeof f === 'string') {
    rows.push([`${size}× (${stories} stories)`, `failed: ${f}`, '', '', '', '', '', '']);
    continue;
  }
  rows.push([
    `${size}× (${stories} stories)`,
    f.modelReplies.toLocaleString('en-US'),
    f.roleCalls.toLocaleString('en-US'),
    `${f.seconds.toFixed(1)} s`,
    Math.round(f.modelReplies / f.seconds).toLocaleString('en-US'),
    `${((f.seconds * 1e6) / f.modelReplies).toFixed(1)} µs`,
    `${((f.cpuSeconds * 1e6) / f.modelReplies).toFixed(1)} µs`,
    `${Math.round(f.peakRssMiB).toLocaleString('en-US')} MiB`,
  ]);
}
const head = ['size', 'model replies', 'judge calls', 'time', 'replies/s', 'time per reply', 'CPU per reply', 'peak RSS'];
const widths = head.map((h, i) => Math.max(h.length, ...rows.map((r) => r[i]!.length)));
const line = (r: readonly string[]) => `| ${r.map((c, i) => (i === 0 ? c.padEnd(widths[i]!) : c.padStart(widths[i]!))).join(' | ')} |`;
console.log(`\ngrowth: FAR-6, ${values.models} simulated models × 6 languages, stories × size\n`);
console.log(line(head));
console.log(`| ${widths.map((w, i) => (i === 0 ? '-'.repeat(w) : `${'-'.repeat(w - 1)}:`)).join(' | ')} |`);
for (const r of rows) console.log(line(r));
