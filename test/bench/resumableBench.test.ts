import { spawn, type ChildProcess } from 'node:child_process';
import path from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { REPO_ROOT, tempDir } from '../helpers/campaigns.js';
import { exited } from '../helpers/cli.js';
import { filesUnder, readResults } from '../helpers/runData.js';
import { EmbeddedLedger } from '../../lib/store/index.js';

// "What must hold": the P(True) bench at full size is one command that can be killed and run
// again (bench/local-throughput.ts --full). The same promise at a small size: a bench run
// SIGKILLed in the middle of its verify phase and started again with the same command ends with
// the result tables of an uninterrupted run.

const CAMPAIGN = 'ptrue-bench';
/** Large enough that the verify phase lasts a few seconds (1 model × 60 items: 2,160 replies, 12,960 probes). */
const SIZE = ['--battery', 'ptrue', '--items', '60', '--models', '1'];

let root: string;
let cleanup: () => Promise<void>;

function bench(dir: string): ChildProcess & { output: () => string } {
  const child = spawn(process.execPath, ['--import', 'tsx', path.join(REPO_ROOT, 'bench/local-throughput.ts'), ...SIZE, '--dir', dir], {
    cwd: REPO_ROOT,
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let output = '';
  child.stdout!.on('data', (d: Buffer) => (output += d.toString('utf8')));
  child.stderr!.on('data', (d: Buffer) => (output += d.toString('utf8')));
  return Object.assign(child, { output: () => output });
}

async function finished(child: ReturnType<typeof bench>): Promise<void> {
  const code = await exited(child);
  expect(code, child.output()).toBe(0);
}

async function verifyCounts(dataDir: string): Promise<{ pending: number; done: number }> {
  const ledger = new EmbeddedLedger(dataDir);
  try {
    return await ledger.counts(CAMPAIGN, 'verify');
  } finally {
    await ledger.close();
  }
}

beforeAll(async () => {
  ({ dir: root, cleanup } = await tempDir('resumable-bench'));
});

afterAll(() => cleanup?.());

describe('bench/local-throughput in a folder of its own', () => {
  it('killed in the middle of its verify phase and run again, it ends with the tables of an uninterrupted run', async () => {
    const whole = path.join(root, 'whole');
    await finished(bench(whole));
    const reference = await readResults(path.join(whole, 'data'), CAMPAIGN);
    // The comparison means something only if the run wrote its tables.
    expect([...reference.keys()].filter((n) => n.endsWith('.csv')).length).toBeGreaterThan(3);

    const killedDir = path.join(root, 'killed');
    const dataDir = path.join(killedDir, 'data');
    const child = bench(killedDir);
    const exit = exited(child);
    // Killed once a verify part is written (staged under verify/_staged/ until its commit, then
    // moved into verify/replies/) and the phase is not over.
    let killed = false;
    while (child.exitCode === null) {
      const parts = (await filesUnder(path.join(dataDir, 'campaigns', CAMPAIGN, 'verify'), (f) => f.endsWith('.parquet'))).filter((f) => f.includes(`${path.sep}replies${path.sep}`));
      if (parts.length >= 1) {
        killed = child.kill('SIGKILL');
        break;
      }
      await sleep(20);
    }
    expect(killed, `the bench ended before it could be killed:\n${child.output()}`).toBe(true);
    expect(await exit).toBe('SIGKILL');
    // Killed with verify items still to ask (the part seen may not be in the ledger yet).
    expect((await verifyCounts(dataDir)).pending).toBeGreaterThan(0);

    const again = bench(killedDir);
    await finished(again);
    expect(await verifyCounts(dataDir)).toMatchObject({ pending: 0 });
    const resumed = await readResults(dataDir, CAMPAIGN);
    expect([...resumed.keys()].sort()).toEqual([...reference.keys()].sort());
    for (const [name, text] of reference) if (name.endsWith('.csv')) expect(resumed.get(name), name).toBe(text);
  }, 400_000);
});
