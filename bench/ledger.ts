/**
 * The embedded ledger alone, with the calls a local run makes, in its order: per
 * partition, registerPartition (one pending row per id), pendingAmong (what is left to ask), one
 * reservation per chunk of 64 calls (each with its ids, as a run's scope), and commitPart per part
 * of 20,000 replies (items done, the part's reservations settled). The default is FAR-6's full
 * size: 48 "generate" partitions of 20,348 ids, then 48 "judge" partitions of 11,470; ids are
 * random 32-hex strings, as the batteries' stable ids are. Prints the time of each kind of call,
 * the time per id of registration in the first and the last quarter of each phase (so that growth
 * with the phase's size shows), the closing count of every phase that a complete run makes, and
 * the file's bytes per item.
 *
 *   npm run bench:ledger                                   # FAR-6 full size: 1,527,264 items
 *   npm run bench:ledger -- --partitions 12                # a quarter (12 partitions a phase)
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
    partitions: { type: 'string', default: '48' },
    generate: { type: 'string', default: '20348' },
    judge: { type: 'string', default: '11470' },
  },
});
const partitions = Number(values.partitions);
const sizes = { generate: Number(values.generate), judge: Number(values.judge) };
if (!Number.isInteger(partitions) || partitions < 1) throw new Error(`--partitions ${values.partitions}: expected a whole number ≥ 1`);
for (const [k, v] of Object.entries(sizes)) if (!Number.isInteger(v) || v < 1) throw new Error(`--${k} ${v}: expected a whole number ≥ 1`);
const CHUNK = 64;
const PART_ROWS = 20_000;
const MODELS = 8;

const dir = await mkdtemp(path.join(os.tmpdir(), 'sondage-bench-ledger-'));
const ledger = new EmbeddedLedger(dir, { runId: 'bench' });
await ledger.initCampaign('bench', 1e9, 'bench');
type Call = 'register' | 'pending' | 'reserve' | 'commit';
const total: Record<Call, number> = { register: 0, pending: 0, reserve: 0, commit: 0 };
const registerMs: Record<string, number[]> = { generate: [], judge: [] };
const timed = async <T>(call: Call, f: () => Promise<T>): Promise<T> => {
  const t = performance.now();
  const out = await f();
  const ms = performance.now() - t;
  total[call] += ms;
  return out;
};
try {
  const t0 = performance.now();
  for (const phase of ['generate', 'judge'] as const) {
    const size = sizes[phase];
    for (let p = 0; p < partitions; p++) {
      const ids = Array.from({ length: size }, () => randomBytes(16).toString('hex'));
      const partition = { phase, model: `model-${p % MODELS}`, language: `l${Math.floor(p / MODELS)}` };
      const before = total.register;
      await timed('register', () => ledger.registerPartition('bench', partition, ids));
      registerMs[phase]!.push(total.register - before);
      const pending = [...(await timed('pending', () => ledger.pendingAmong('bench', partition, ids)))];
      for (let start = 0; start < pending.length; start += PART_ROWS) {
        const part = pending.slice(start, start + PART_ROWS);
        const reservationIds: string[] = [];
        for (let c = 0; c < part.length; c += CHUNK) {
          const id = `bench:${phase}:${partition.model}:${partition.language}:${start + c}`;
          await timed('reserve', () => ledger.reserve('bench', id, 0.001, { ...partition, itemIds: part.slice(c, c + CHUNK) }));
          reservationIds.push(id);
        }
        const partKey = `campaigns/bench/${phase}/replies/model=${partition.model}/language=${partition.language}/part-${start}.parquet`;
        await timed('commit', () => ledger.commitPart({ campaign: 'bench', ...partition, partKey, done: part, failed: [], reservationIds, costUsd: 0.01 }));
      }
    }
  }
  const wall = performance.now() - t0;
  // What a complete run does last (lib/run/completeCampaign.ts): every phase counted, to record
  // the campaign complete; one scan of the items for all phases, beside a scan per phase.
  const phases = ['generate', 'judge'];
  let t = performance.now();
  await ledger.phaseCounts('bench', phases);
  const together = performance.now() - t;
  t = performance.now();
  for (const phase of phases) await ledger.counts('bench', phase);
  const oneByOne = performance.now() - t;
  const items = partitions * (sizes.generate + sizes.judge);
  const s = (ms: number): string => `${(ms / 1000).toFixed(1)} s`;
  console.log(`ledger: ${partitions} partitions a phase, generate ${sizes.generate.toLocaleString('en')} ids each, judge ${sizes.judge.toLocaleString('en')} (${items.toLocaleString('en')} items)`);
  for (const phase of ['generate', 'judge'] as const) {
    const ms = registerMs[phase]!;
    const q = Math.max(1, Math.floor(ms.length / 4));
    const usPerId = (list: number[]): string => `${((list.reduce((a, b) => a + b, 0) * 1000) / (list.length * sizes[phase])).toFixed(1)} µs/id`;
    console.log(`  ${phase.padEnd(9)} register, first ${q} partitions: ${usPerId(ms.slice(0, q))}, last ${q}: ${usPerId(ms.slice(-q))}`);
  }
  console.log(`  registerPartition ${s(total.register)}, pendingAmong ${s(total.pending)}, reserve ${s(total.reserve)}, commitPart ${s(total.commit)}`);
  console.log(`  total             ${s(wall)} (${((wall * 1000) / items).toFixed(1)} µs per item)`);
  console.log(`  closing count     ${s(together)} for both phases in one scan (phaseCounts); ${s(oneByOne)} a phase at a time (counts)`);
  await ledger.close();
  const bytes = (await stat(ledger.file)).size + (await stat(`${ledger.file}-wal`).catch(() => ({ size: 0 }))).size;
  console.log(`  ledger file       ${(bytes / 2 ** 20).toFixed(0)} MiB, ${(bytes / items).toFixed(0)} bytes per item`);
} finally {
  await ledger.close();
  await rm(dir, { recursive: true, force: true });
}
