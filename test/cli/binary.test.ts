/**
 * The `sondage` binary as npx and a shell start it: through its first lines, which start node with
 * the one-thread garbage collector in the same process (exec), so signals reach node itself.
 */
import { spawn } from 'node:child_process';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { REPO_ROOT } from '../helpers/campaigns.js';

let dir: string;
let probe: string;
beforeAll(async () => {
  dir = await mkdtemp(path.join(os.tmpdir(), 'sondage-binary-'));
  probe = path.join(dir, 'probe.cjs');
  // Loaded by every node that starts with NODE_OPTIONS: says which process it is and its flags.
  await writeFile(probe, "process.stderr.write(`PROBE ${JSON.stringify({ pid: process.pid, execArgv: process.execArgv })}\\n`);\n");
});
afterAll(() => rm(dir, { recursive: true, force: true }));

describe.skipIf(process.platform === 'win32')('bin/sondage.mjs run as a program', () => {
  it('is node itself, started with --single-threaded-gc, and works', async () => {
    const child = spawn(path.join(REPO_ROOT, 'bin/sondage.mjs'), ['--version'], {
      cwd: dir,
      env: { ...process.env, NODE_OPTIONS: `--require ${probe}` },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (d: Buffer) => (stdout += d.toString('utf8')));
    child.stderr.on('data', (d: Buffer) => (stderr += d.toString('utf8')));
    const code = await new Promise<number | null>((resolve) => child.once('exit', resolve));
    expect(code).toBe(0);
    expect(stdout).toMatch(/^sondage \d+\.\d+\.\d+/);
    const probes = stderr
      .split('\n')
      .filter((l) => l.startsWith('PROBE '))
      .map((l) => JSON.parse(l.slice(6)) as { pid: number; execArgv: string[] });
    expect(probes.length).toBeGreaterThan(0);
    // The process the shell started is the node that ran the CLI: no second process to signal.
    expect(probes[0]!.pid).toBe(child.pid);
    expect(probes[0]!.execArgv).toContain('--single-threaded-gc');
  });
});
