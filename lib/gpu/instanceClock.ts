/**
 * The instance time a GPU job attempt is charged for before its container started, measured on the
 * instance rather than assumed.
 *
 * A container on an EC2 host shares the host's kernel, and /proc/uptime (os.uptime()) is the
 * kernel's, not the container's: at the container's start, uptime is everything the instance has
 * been billed for so far — its boot, the ECS agent, the image pull, and the jobs it ran before. The
 * jobs before were charged by their own attempts; each attempt writes, at its settlement, the time it
 * charged up to into a folder on the host that every job's container mounts (GPU_ENV.instanceDir,
 * infra/constructs/GpuBatch.ts). So an attempt is charged from the later of the instance's boot and
 * the last recorded end: the boot and image pull for the first job on a fresh instance, the idle gap
 * and the pull for a later one.
 *
 * Where it can only over-count, never under-count: an attempt that died before settling records no
 * end, so the next one on that instance is charged from the boot again (its predecessor's reservation
 * stays held too); two attempts sharing an instance at once may both count the time before the
 * earlier of them. Without the folder (a job definition of an older stack, a test) the time before
 * the container is the assumed PRE_CONTAINER_SECONDS, as it was.
 */
import { mkdir, readFile, rename, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { PRE_CONTAINER_SECONDS } from './instanceTime.js';

/** The file in the instance folder: the epoch milliseconds up to which the instance has been charged. */
export const CHARGED_UNTIL_FILE = 'charged-until';

export interface InstanceClock {
  /** Seconds since the host booted (os.uptime()). */
  uptimeSeconds(): number;
  /** The host folder every job's container mounts; absent: the time before the container is assumed. */
  readonly dir?: string;
}

/** The seconds before the container that an attempt is charged, and whether they were measured. */
export interface PreContainer {
  readonly seconds: number;
  readonly measured: boolean;
  /** What it was measured from: `boot` (a fresh instance, or none recorded) or `last-job` (the end an earlier attempt recorded). */
  readonly from?: 'boot' | 'last-job';
}

/** Reads the recorded end, or undefined when none is there or it cannot be read as a time. */
async function chargedUntil(dir: string): Promise<number | undefined> {
  let text: string;
  try {
    text = await readFile(join(dir, CHARGED_UNTIL_FILE), 'utf8');
  } catch {
    return undefined;
  }
  const ms = Number(text.trim());
  return Number.isFinite(ms) && ms > 0 ? ms : undefined;
}

/**
 * The seconds before `containerStartMs` this attempt is charged (see the module comment): from the
 * later of the host's boot and the recorded end, or the assumed PRE_CONTAINER_SECONDS without a folder
 * or a plausible uptime.
 */
export async function preContainerSeconds(clock: InstanceClock | undefined, containerStartMs: number, nowMs: number = Date.now()): Promise<PreContainer> {
  const uptime = clock?.uptimeSeconds();
  if (clock?.dir === undefined || uptime === undefined || !Number.isFinite(uptime) || uptime <= 0) return { seconds: PRE_CONTAINER_SECONDS, measured: false };
  const bootMs = nowMs - uptime * 1000;
  const last = await chargedUntil(clock.dir);
  // A recorded end after this container started is a neighbour's that ran beside it: count from the boot.
  const usable = last !== undefined && last <= containerStartMs && last > bootMs ? last : undefined;
  const from = usable ?? bootMs;
  return { seconds: Math.max(0, (containerStartMs - from) / 1000), measured: true, from: usable === undefined ? 'boot' : 'last-job' };
}

/**
 * Records that the instance has been charged up to `untilMs`, keeping a later end already there (a
 * neighbour that ended after). Written to a temporary file and renamed, so a reader never sees half.
 */
export async function recordChargedUntil(clock: InstanceClock | undefined, untilMs: number): Promise<void> {
  if (clock?.dir === undefined) return;
  await mkdir(clock.dir, { recursive: true });
  const end = Math.max(untilMs, (await chargedUntil(clock.dir)) ?? 0);
  const tmp = join(clock.dir, `${CHARGED_UNTIL_FILE}.${process.pid}.${Date.now()}.tmp`);
  await writeFile(tmp, String(Math.round(end)));
  await rename(tmp, join(clock.dir, CHARGED_UNTIL_FILE));
}
