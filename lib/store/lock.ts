import { mkdir, readFile, stat, unlink, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { SondageError } from '../errors.js';
import { RunLockedError } from './errors.js';
import { runLockKey } from './layout.js';

/** What a lock file holds. */
export interface RunLockInfo {
  readonly pid: number;
  readonly host: string;
  readonly run_id: string;
  readonly started_at: string;
}

/** A held run lock; `release` removes the file if it is still ours. */
export interface RunLock {
  readonly path: string;
  readonly info: RunLockInfo;
  release(): Promise<void>;
}

function parseLock(text: string): RunLockInfo | undefined {
  try {
    const v = JSON.parse(text) as Partial<RunLockInfo>;
    if (typeof v.pid === 'number' && Number.isInteger(v.pid) && v.pid > 0 && typeof v.host === 'string') {
      return { pid: v.pid, host: v.host, run_id: String(v.run_id ?? ''), started_at: String(v.started_at ?? '') };
    }
  } catch {
    // Unreadable: a lock written by a process that died mid-write; treated as stale.
  }
  return undefined;
}

/** True when a process with this pid exists on this machine (EPERM: exists, owned by someone else). */
export function isProcessAlive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (err) {
    return (err as NodeJS.ErrnoException).code === 'EPERM';
  }
}

async function readText(file: string): Promise<string | undefined> {
  try {
    return await readFile(file, 'utf8');
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === 'ENOENT') return undefined;
    throw err;
  }
}

/**
 * Takes the run lock of a campaign, `<dataDir>/campaigns/<campaign>/run.lock`, so that two local
 * runs never work the same campaign at once (they would send the same items twice). A lock left
 * by a dead process on this host is taken over; a live holder, or one on another host (whose pid
 * cannot be checked), makes this throw RunLockedError naming it.
 *
 * @example
 * const lock = await acquireRunLock('./data', 'demo', runId);
 * try { … } finally { await lock.release(); }
 */
export async function acquireRunLock(dataDir: string, campaign: string, runId = ''): Promise<RunLock> {
  const file = path.join(path.resolve(dataDir), ...runLockKey(campaign).split('/'));
  await mkdir(path.dirname(file), { recursive: true });
  const info: RunLockInfo = { pid: process.pid, host: os.hostname(), run_id: runId, started_at: new Date().toISOString() };
  const body = `${JSON.stringify(info)}\n`;

  for (let attempt = 0; attempt < 200; attempt++) {
    try {
      await writeFile(file, body, { flag: 'wx' });
      return {
        path: file,
        info,
        release: async () => {
          // Remove only our own lock: after a takeover the file may belong to another run.
          if ((await readText(file)) === body) await unlink(file).catch(() => undefined);
        },
      };
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code !== 'EEXIST') throw err;
    }
    const seen = await readText(file);
    if (seen === undefined) continue; // released meanwhile
    const holder = parseLock(seen);
    if (holder && (holder.host !== info.host || isProcessAlive(holder.pid))) {
      const where = holder.host === info.host ? `process ${holder.pid}` : `process ${holder.pid} on host ${holder.host}`;
      throw new RunLockedError(
        `campaign ${JSON.stringify(campaign)} is already running in ${where} (run ${holder.run_id || '?'}, since ${holder.started_at || '?'}); ` +
          `wait for it to finish or stop it, or delete ${file} if no such run is active`,
        file,
        holder.pid,
      );
    }
    // Stale. Move it aside rather than delete it, then check that what moved is what was judged
    // stale: a concurrent starter may have replaced it with a live lock in between.
    // A stale lock is removed only under a second, short-lived lock (`.takeover`), and only if its
    // content is still the stale one: renaming it aside, as before, could move a fresh lock that a
    // faster starter had just written, and let two starters win.
    await removeStale(file, seen);
  }
  throw new SondageError(`could not take the run lock ${file}: it kept changing hands; try again`);
}

/** A takeover lock older than this was left by a starter that died mid-takeover. */
const TAKEOVER_STALE_MS = 10_000;

async function removeStale(file: string, seen: string): Promise<void> {
  const takeover = `${file}.takeover`;
  try {
    await writeFile(takeover, `${process.pid}\n`, { flag: 'wx' });
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code !== 'EEXIST') throw err;
    // Another starter is taking over: wait for it, unless it died doing so.
    const age = await stat(takeover).then((st) => Date.now() - st.mtimeMs, () => 0);
    if (age > TAKEOVER_STALE_MS) await unlink(takeover).catch(() => undefined);
    else await new Promise((resolve) => setTimeout(resolve, 5));
    return;
  }
  try {
    if ((await readText(file)) === seen) await unlink(file).catch(() => undefined);
  } finally {
    await unlink(takeover).catch(() => undefined);
  }
}
