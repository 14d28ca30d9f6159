import { spawn, spawnSync } from 'node:child_process';
import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync, existsSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { acquireRunLock, isProcessAlive, RunLockedError } from '../../lib/store/index.js';

const root = mkdtempSync(path.join(os.tmpdir(), 'sondage-lock-'));
afterAll(() => rmSync(root, { recursive: true, force: true }));

function writeLock(dataDir: string, campaign: string, info: object): string {
  const file = path.join(dataDir, 'campaigns', campaign, 'run.lock');
  mkdirSync(path.dirname(file), { recursive: true });
  writeFileSync(file, JSON.stringify(info));
  return file;
}

/** A pid that belonged to a process which has exited. */
function deadPid(): number {
  const child = spawnSync(process.execPath, ['-e', '0']);
  expect(isProcessAlive(child.pid)).toBe(false);
  return child.pid;
}

describe('run lock', () => {
  it('lets one run in, refuses a second live one naming its pid, and frees on release', async () => {
    const dir = path.join(root, 'a');
    const lock = await acquireRunLock(dir, 'demo', 'run-1');
    expect(lock.path).toBe(path.join(dir, 'campaigns', 'demo', 'run.lock'));
    expect(JSON.parse(readFileSync(lock.path, 'utf8'))).toMatchObject({ pid: process.pid, run_id: 'run-1' });

    const second = acquireRunLock(dir, 'demo', 'run-2');
    await expect(second).rejects.toThrow(RunLockedError);
    await expect(acquireRunLock(dir, 'demo', 'run-2')).rejects.toThrow(
      new RegExp(`campaign "demo" is already running in process ${process.pid} \\(run run-1, since .*\\); wait for it to finish`),
    );
    // Another campaign is independent.
    const other = await acquireRunLock(dir, 'other', 'run-3');
    await other.release();

    await lock.release();
    expect(existsSync(lock.path)).toBe(false);
    const again = await acquireRunLock(dir, 'demo', 'run-2');
    await again.release();
  });

  it('refuses while another live process holds the lock', async () => {
    const dir = path.join(root, 'b');
    const holder = spawn(process.execPath, ['-e', 'setTimeout(() => {}, 60000)'], { stdio: 'ignore' });
    try {
      const pid = holder.pid as number;
      writeLock(dir, 'demo', { pid, host: os.hostname(), run_id: 'other-run', started_at: '2026-01-01T00:00:00.000Z' });
      const err = await acquireRunLock(dir, 'demo', 'run-1').catch((e: unknown) => e);
      expect(err).toBeInstanceOf(RunLockedError);
      expect((err as RunLockedError).holderPid).toBe(pid);
      expect((err as Error).message).toContain(`process ${pid}`);
    } finally {
      holder.kill();
    }
  });

  it('takes over a lock left by a dead process, or an unreadable one', async () => {
    const dir = path.join(root, 'c');
    const file = writeLock(dir, 'demo', { pid: deadPid(), host: os.hostname(), run_id: 'crashed', started_at: '' });
    const lock = await acquireRunLock(dir, 'demo', 'run-1');
    expect(JSON.parse(readFileSync(file, 'utf8'))).toMatchObject({ pid: process.pid, run_id: 'run-1' });
    await lock.release();

    writeFileSync(file, '{"pid": 12'); // cut off mid-write
    const lock2 = await acquireRunLock(dir, 'demo', 'run-2');
    expect(JSON.parse(readFileSync(file, 'utf8'))).toMatchObject({ run_id: 'run-2' });
    await lock2.release();
  });

  it('lets exactly one of several simultaneous starters take over a stale lock', async () => {
    const dir = path.join(root, 'f');
    writeLock(dir, 'demo', { pid: deadPid(), host: os.hostname(), run_id: 'crashed', started_at: '' });
    const results = await Promise.allSettled([1, 2, 3, 4, 5].map((k) => acquireRunLock(dir, 'demo', `run-${k}`)));
    const won = results.filter((r) => r.status === 'fulfilled');
    expect(won).toHaveLength(1);
    for (const r of results) if (r.status === 'rejected') expect(r.reason).toBeInstanceOf(RunLockedError);
    const winner = (won[0] as PromiseFulfilledResult<Awaited<ReturnType<typeof acquireRunLock>>>).value;
    expect(JSON.parse(readFileSync(winner.path, 'utf8'))).toEqual(winner.info);
    await winner.release();
  });

  it('does not judge a lock held on another host', async () => {
    const dir = path.join(root, 'd');
    writeLock(dir, 'demo', { pid: deadPid(), host: `${os.hostname()}-elsewhere`, run_id: 'remote', started_at: '' });
    await expect(acquireRunLock(dir, 'demo', 'run-1')).rejects.toThrow(/on host .*-elsewhere.*delete .*run\.lock if no such run is active/);
  });

  it('release leaves a lock that is no longer ours', async () => {
    const dir = path.join(root, 'e');
    const lock = await acquireRunLock(dir, 'demo', 'run-1');
    writeFileSync(lock.path, JSON.stringify({ pid: process.pid, host: os.hostname(), run_id: 'taken-over' }));
    await lock.release();
    expect(JSON.parse(readFileSync(lock.path, 'utf8'))).toMatchObject({ run_id: 'taken-over' });
  });
});
