/**
 * The span of instance time a GPU job attempt is charged for, measured on the instance rather than
 * assumed: from what the instance had been charged up to, to the attempt's end plus the minutes
 * Batch keeps the instance idle after it (IDLE_TAIL_SECONDS), at the whole instance's price.
 *
 * A container on an EC2 host shares the host's kernel, and /proc/uptime (os.uptime()) is the
 * kernel's, not the container's: at the container's start, uptime is everything the instance has
 * been billed for so far — its boot, the ECS agent, the image pull, and the jobs it ran before.
 * Each attempt writes, at its settlement, the time it charged the instance up to (its end and the
 * idle tail) into a folder on the host that every job's container mounts (GPU_ENV.instanceDir,
 * infra/constructs/GpuBatch.ts). That mark only ever says "the whole instance has been charged from
 * its boot up to here": an attempt charges from the mark it read (or the boot), so by induction
 * nothing before a mark is uncharged. So an attempt is charged from the later of the instance's boot
 * and the mark, read again at its end: the boot and image pull for the first job on a fresh
 * instance, the gap after the last one's idle tail for a later one, and for a job that ran beside
 * another on a multi-GPU instance only what that other's charge left. Sequential jobs on an
 * instance are charged its life once, from the boot to the last one's idle tail.
 *
 * Where it can only over-count, never under-count: an attempt that died before settling records no
 * mark, so the next one on that instance is charged from the earlier mark or the boot (its
 * predecessor's reservation stays held too); two attempts settling at once may both count the span
 * after the mark they both read. A mark later than any attempt could have written (beyond now and
 * an idle tail) or before the boot is not trusted: the attempt counts from the boot. Without the
 * folder (a job definition of an older stack, a test) the time before the container is the assumed
 * PRE_CONTAINER_SECONDS.
 */
import { mkdir, readFile, rename, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { IDLE_TAIL_SECONDS, PRE_CONTAINER_SECONDS } from './instanceTime.js';

/** The file in the instance folder: the epoch milliseconds up to which the instance has been charged. */
export const CHARGED_UNTIL_FILE = 'charged-until';

export interface InstanceClock {
  /** Seconds since the host booted (os.uptime()). */
  uptimeSeconds(): number;
  /** The host folder every job's container mounts; absent: the time before the container is assumed. */
  readonly dir?: string;
}

/** Where an attempt's charge starts, and whether that was measured. */
export interface ChargeStart {
  /** Epoch ms: the later of the boot and the mark; without a clock, the container's start less PRE_CONTAINER_SECONDS. */
  readonly fromMs: number;
  readonly measured: boolean;
  /** What it was measured from: `boot` (a fresh instance, or no mark to trust) or `last-job` (the mark an earlier or neighbouring attempt recorded). */
  readonly from?: 'boot' | 'last-job';
}

/** The seconds before the container that an attempt is charged, and whether they were measured. */
export interface PreContainer extends ChargeStart {
  /** Seconds from the charge's start to the container's start; 0 when the mark is later (the instance's idle tail after the last job, or a neighbour's charge). */
  readonly seconds: number;
}

/** The span an attempt is charged for at its end. */
export interface ChargedSpan extends ChargeStart {
  /** Epoch ms: the attempt's end plus the idle tail; what it records as the instance's new mark. */
  readonly untilMs: number;
  /** (untilMs − fromMs) / 1000, at least 0. */
  readonly seconds: number;
}

/** Reads the recorded mark, or undefined when none is there or it cannot be read as a time. */
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
 * Where an attempt whose container started at `containerStartMs` is charged from, read at `nowMs`
 * (see the module comment). A mark counts when it is after the boot and no later than `nowMs` plus
 * an idle tail, the latest any attempt on the instance can have written by then.
 */
export async function chargeStart(clock: InstanceClock | undefined, containerStartMs: number, nowMs: number = Date.now()): Promise<ChargeStart> {
  const uptime = clock?.uptimeSeconds();
  if (clock?.dir === undefined || uptime === undefined || !Number.isFinite(uptime) || uptime <= 0) {
    return { fromMs: containerStartMs - PRE_CONTAINER_SECONDS * 1000, measured: false };
  }
  const bootMs = nowMs - uptime * 1000;
  const mark = await chargedUntil(clock.dir);
  const usable = mark !== undefined && mark > bootMs && mark <= nowMs + IDLE_TAIL_SECONDS * 1000 ? mark : undefined;
  return usable === undefined ? { fromMs: bootMs, measured: true, from: 'boot' } : { fromMs: usable, measured: true, from: 'last-job' };
}

/**
 * The seconds before `containerStartMs` this attempt is charged, as known at its start: what its
 * reservation counts (instanceTime.ts `instanceBound`).
 */
export async function preContainerSeconds(clock: InstanceClock | undefined, containerStartMs: number, nowMs: number = Date.now()): Promise<PreContainer> {
  const start = await chargeStart(clock, containerStartMs, nowMs);
  return { ...start, seconds: Math.max(0, (containerStartMs - start.fromMs) / 1000) };
}

/**
 * The span an attempt that started charging at `atStart` (preContainerSeconds at its start) and
 * ended at `endMs` is charged: from the later of that start and the mark read now (a neighbour may
 * have charged past it meanwhile) to `endMs` + `idleTailSeconds`. Never more than its reservation:
 * it starts no earlier than the reservation counted, and ends within it.
 */
export async function chargedSpan(
  clock: InstanceClock | undefined,
  containerStartMs: number,
  atStart: ChargeStart,
  endMs: number,
  idleTailSeconds: number = IDLE_TAIL_SECONDS,
): Promise<ChargedSpan> {
  const now = await chargeStart(clock, containerStartMs, endMs);
  // The mark can step back when two attempts record at once (each keeps the larger it read): the start's reading still holds.
  const start = now.fromMs >= atStart.fromMs ? now : atStart;
  const untilMs = endMs + idleTailSeconds * 1000;
  return { ...start, untilMs, seconds: Math.max(0, (untilMs - start.fromMs) / 1000) };
}

/**
 * Records that the instance has been charged up to `untilMs`, keeping a later mark already there (a
 * neighbour that charged further). Written to a temporary file and renamed, so a reader never sees half.
 */
export async function recordChargedUntil(clock: InstanceClock | undefined, untilMs: number): Promise<void> {
  if (clock?.dir === undefined) return;
  await mkdir(clock.dir, { recursive: true });
  const end = Math.max(untilMs, (await chargedUntil(clock.dir)) ?? 0);
  const tmp = join(clock.dir, `${CHARGED_UNTIL_FILE}.${process.pid}.${Date.now()}.tmp`);
  await writeFile(tmp, String(Math.round(end)));
  await rename(tmp, join(clock.dir, CHARGED_UNTIL_FILE));
}
