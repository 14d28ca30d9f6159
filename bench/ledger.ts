/**
 * The embedded ledger alone (issue 15): what registering and committing a campaign's items costs
 * as the campaign grows. Each partition registers its ids (registerPartition: one pending row per
 * id) and then commits them all done (commitPart), as a local run does, half the partitions in a
 * "generate" phase and half in a "judge" phase; ids are random 32-hex strings, as the batteries'
 * stable ids are. Prints the time per id of the first and the last partitions of each phase, so
 * that growth with the phase's size shows, the totals, and the file's bytes per item.
 *
 *   npm run bench:ledger                                   # FAR-6 full size: 96 × 16,000 ids
 *   npm run bench:ledger -- --partitions 24                # a quarter
 *
 * Why it matters: the ledger runs on the main thread, and at full size it is the main thread's
 * largest share in the CPU profile of `bench:local-throughput`.
 */
import { randomBytes } from 'node:crypto';
import { mkdtemp, rm, stat } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { parseArgs } from 'node:util';
import { EmbeddedLedger } from '../lib/store/EmbeddedLedger.js';

const { values } = parseArgs({
  options: {
    partitions: { type: 'string', default: '96' },
    size: { type: 'string', default: '16000' },
  },
});
const partitions = Number(values.partitions);
const size = Number(values.size);
if (!Number.isInteger(partitions) || partitions < 2) throw new Error(`--partitions ${values.partitions}: expected a whole number ≥ 2`);
if (!Number.isInteger(size) || size < 1) throw new Error(`--size ${values.size}: expected a whole number ≥ 1`);

const dir = await mkdtemp(path.join(os.tmpdir(), 'sondage-bench-ledger-'));
const ledger = new EmbeddedLedger(dir, { runId: 'bench' });
await ledger.initCampaign('bench', 1e9, 'bench');
const perPartition: { phase: string; register: number; commit: number }[] = [];
try {
  for (let p = 0; p < partitions; p++) {
    const phase = p < partitions / 2 ? 'generate' : 'judge';
    const ids = Array.from({ length: size }, () => randomBytes(16).toString('hex'));
    const partition = { phase, model: `model-${p % 8}`, language: `l${p}` };
    let t = performance.now();
    await ledger.registerPartition('bench', partition, ids);
    const register = performance.now() - t;
    t = performance.now();
    await ledger.commitPart({ campaign: 'bench', phase, partKey: `campaigns/bench/${phase}/replies/model=${partition.model}/language=${partition.language}/part-0`, done: ids, failed: [], costUsd: 0.01 });
    perPartition.push({ phase, register, commit: performance.now() - t });
  }
  const usPerId = (ms: number): string => `${((ms * 1000) / size).toFixed(1)} µs/id`;
  const sum = (rows: typeof perPartition, k: 'register' | 'commit'): number => rows.reduce((s, r) => s + r[k], 0);
  console.log(`ledger: ${partitions} partitions × ${size.toLocaleString('en')} ids (${(partitions * size).toLocaleString('en')} items), two phases`);
  for (const phase of ['generate', 'judge']) {
    const rows = perPartition.filter((r) => r.phase === phase);
    const q = Math.max(1, Math.floor(rows.length / 4));
    const first = rows.slice(0, q);
    const last = rows.slice(-q);
    console.log(
      `  ${phase.padEnd(9)} register first ${q}: ${usPerId(sum(first, 'register') / q)}, last ${q}: ${usPerId(sum(last, 'register') / q)}; ` +
        `commit first: ${usPerId(sum(first, 'commit') / q)}, last: ${usPerId(sum(last, 'commit') / q)}`,
    );
  }
  console.log(`  register total  ${(sum(perPartition, 'register') / 1000).toFixed(1)} s`);
  console.log(`  commit total    ${(sum(perPartition, 'commit') / 1000).toFixed(1)} s`);
  await ledger.close();
  const bytes = (await stat(ledger.file)).size + (await stat(`${ledger.file}-wal`).catch(() => ({ size: 0 }))).size;
  console.log(`  ledger file     ${(bytes / 2 ** 20).toFixed(0)} MiB, ${(bytes / (partitions * size)).toFixed(0)} bytes per item`);
} finally {
  await ledger.close();
  await rm(dir, { recursive: true, force: true });
}
