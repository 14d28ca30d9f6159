import { readFile, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { CHARGED_UNTIL_FILE, chargedSpan, preContainerSeconds, recordChargedUntil } from '../../lib/gpu/instanceClock.js';
import type { InstanceClock } from '../../lib/gpu/instanceClock.js';
import { BATCH_KILL_GRACE_SECONDS, IDLE_TAIL_SECONDS, PRE_CONTAINER_SECONDS, instanceBound } from '../../lib/gpu/instanceTime.js';
import { useTempDir } from '../helpers/campaigns.js';

const tmp = useTempDir('instance-clock');
const NOW = 1_800_000_000_000;

describe('the instance time before a GPU job\'s container', () => {
  it('is the assumed time without the instance folder or a usable uptime', async () => {
    const assumed = { seconds: PRE_CONTAINER_SECONDS, measured: false, fromMs: NOW - PRE_CONTAINER_SECONDS * 1000 };
    expect(await preContainerSeconds(undefined, NOW, NOW)).toEqual(assumed);
    expect(await preContainerSeconds({ uptimeSeconds: () => 900 }, NOW, NOW)).toEqual(assumed);
    for (const bad of [0, -5, Number.NaN, Number.POSITIVE_INFINITY]) {
      expect(await preContainerSeconds({ uptimeSeconds: () => bad, dir: tmp.dir }, NOW, NOW)).toEqual(assumed);
    }
  });

  it('is the uptime at the container\'s start on a fresh instance, whether the boot took less or more than assumed', async () => {
    // uptime read 20 s after the container started
    expect(await preContainerSeconds({ uptimeSeconds: () => 320, dir: tmp.dir }, NOW - 20_000, NOW)).toMatchObject({ seconds: 300, measured: true, from: 'boot' });
    expect(await preContainerSeconds({ uptimeSeconds: () => 2_420, dir: tmp.dir }, NOW - 20_000, NOW)).toMatchObject({ seconds: 2_400, measured: true, from: 'boot' });
  });

  it('counts from the mark the last job on the instance recorded, and from the boot again when that mark cannot be trusted', async () => {
    const clock = { uptimeSeconds: () => 7_200, dir: tmp.dir };
    await recordChargedUntil(clock, NOW - 90_000);
    expect(await preContainerSeconds(clock, NOW, NOW)).toMatchObject({ seconds: 90, measured: true, from: 'last-job' });
    // A mark after this container started: the idle tail of the job before, or a neighbour's charge. Nothing before the container is left.
    await writeFile(path.join(tmp.dir, CHARGED_UNTIL_FILE), String(NOW + 5_000));
    expect(await preContainerSeconds(clock, NOW, NOW)).toEqual({ seconds: 0, measured: true, from: 'last-job', fromMs: NOW + 5_000 });
    // later than any attempt can have written by now, before the boot (a recycled folder), garbage
    for (const text of [String(NOW + IDLE_TAIL_SECONDS * 1000 + 1), String(NOW - 8_000_000), 'not a time', '']) {
      await writeFile(path.join(tmp.dir, CHARGED_UNTIL_FILE), text);
      expect(await preContainerSeconds(clock, NOW, NOW)).toMatchObject({ seconds: 7_200, measured: true, from: 'boot' });
    }
  });

  it('keeps the later of two recorded ends, and records nothing without a folder', async () => {
    const clock = { uptimeSeconds: () => 100, dir: path.join(tmp.dir, 'made-on-first-use') };
    await recordChargedUntil(clock, NOW);
    await recordChargedUntil(clock, NOW - 60_000);
    expect(await readFile(path.join(clock.dir, CHARGED_UNTIL_FILE), 'utf8')).toBe(String(NOW));
    await expect(recordChargedUntil({ uptimeSeconds: () => 100 }, NOW)).resolves.toBeUndefined();
  });
});

describe('the span a GPU job attempt is charged: the whole instance from its mark to the end and Batch\'s idle tail', () => {
  const MIN = 60_000;
  /** An instance booted at `bootMs`, its folder `dir`, read at whatever time the caller says. */
  const instance = (bootMs: number, dir: string): ((nowMs: number) => InstanceClock) => (nowMs) => ({ uptimeSeconds: () => (nowMs - bootMs) / 1000, dir });

  /** One attempt as runGpuJob runs it: reads its start at the container's start, its span at its end, records the span's end. */
  async function attempt(at: (nowMs: number) => InstanceClock, startMs: number, endMs: number) {
    const pre = await preContainerSeconds(at(startMs), startMs, startMs);
    const span = await chargedSpan(at(endMs), startMs, pre, endMs);
    await recordChargedUntil(at(endMs), span.untilMs);
    return { pre, span };
  }

  it('charges the last job its idle tail, and a job placed within that tail only what comes after it: an instance\'s life counted once', async () => {
    const boot = NOW;
    const at = instance(boot, path.join(tmp.dir, 'sequential'));

    // Three jobs one after another: the second starts 3 minutes after the first ends (inside its tail), the third 40 minutes after the second (past it).
    const first = await attempt(at, boot + 12 * MIN, boot + 70 * MIN);
    const second = await attempt(at, boot + 73 * MIN, boot + 130 * MIN);
    const third = await attempt(at, boot + 170 * MIN, boot + 200 * MIN);

    expect(first.span).toMatchObject({ from: 'boot', fromMs: boot, untilMs: boot + 70 * MIN + IDLE_TAIL_SECONDS * 1000 });
    expect(second.pre.seconds).toBe(0);
    expect(second.span).toMatchObject({ from: 'last-job', fromMs: first.span.untilMs, untilMs: boot + 130 * MIN + IDLE_TAIL_SECONDS * 1000 });
    // Batch kept the instance past the tail: the gap is the third's to pay.
    expect(third.pre.seconds).toBe((170 * MIN - 130 * MIN - IDLE_TAIL_SECONDS * 1000) / 1000);
    const total = [first, second, third].reduce((sum, a) => sum + a.span.seconds, 0);
    expect(total).toBe((200 * MIN + IDLE_TAIL_SECONDS * 1000) / 1000);
    expect(await readFile(path.join(tmp.dir, 'sequential', CHARGED_UNTIL_FILE), 'utf8')).toBe(String(third.span.untilMs));
  });

  it('charges two jobs sharing a multi-GPU instance its life once, the one that ends later only after the other\'s charge', async () => {
    const boot = NOW;
    const at = instance(boot, path.join(tmp.dir, 'neighbours'));
    // Both placed on a fresh 4-GPU instance, each on 2 GPUs: each reserves from the boot.
    const aPre = await preContainerSeconds(at(boot + 10 * MIN), boot + 10 * MIN, boot + 10 * MIN);
    const bPre = await preContainerSeconds(at(boot + 11 * MIN), boot + 11 * MIN, boot + 11 * MIN);
    expect([aPre.from, bPre.from]).toEqual(['boot', 'boot']);

    const aSpan = await chargedSpan(at(boot + 50 * MIN), boot + 10 * MIN, aPre, boot + 50 * MIN);
    await recordChargedUntil(at(boot + 50 * MIN), aSpan.untilMs);
    const bSpan = await chargedSpan(at(boot + 90 * MIN), boot + 11 * MIN, bPre, boot + 90 * MIN);

    expect(bSpan).toMatchObject({ from: 'last-job', fromMs: aSpan.untilMs });
    expect(aSpan.seconds + bSpan.seconds).toBe((90 * MIN + IDLE_TAIL_SECONDS * 1000) / 1000);
    // One ending inside the other's charge adds nothing.
    const inside = await chargedSpan(at(boot + 52 * MIN), boot + 11 * MIN, bPre, boot + 52 * MIN);
    expect(inside.seconds).toBe((2 * MIN) / 1000);
  });

  it('never charges more than the attempt reserved, even when the mark steps back between its start and its end', async () => {
    const boot = NOW;
    const dir = path.join(tmp.dir, 'step-back');
    const at = instance(boot, dir);
    await recordChargedUntil(at(boot + 60 * MIN), boot + 60 * MIN);
    const start = boot + 61 * MIN;
    const pre = await preContainerSeconds(at(start), start, start);
    // Two neighbours recording at once can leave the smaller of their marks.
    await writeFile(path.join(dir, CHARGED_UNTIL_FILE), String(boot + 30 * MIN));
    const end = start + 4 * 3600_000 + BATCH_KILL_GRACE_SECONDS * 1000;

    const span = await chargedSpan(at(end), start, pre, end);

    expect(span.fromMs).toBe(boot + 60 * MIN);
    expect(span.seconds).toBeCloseTo(instanceBound({ instance_type: 'g5.xlarge', capacity: 'spot' }, 4 * 3600, pre.seconds).seconds, 9);
  });

  it('without the instance folder, charges the container\'s time, the assumed start and the idle tail', async () => {
    const pre = await preContainerSeconds(undefined, NOW, NOW);
    const span = await chargedSpan(undefined, NOW, pre, NOW + 3_000_000);
    expect(span).toMatchObject({ measured: false, seconds: 3_000 + PRE_CONTAINER_SECONDS + IDLE_TAIL_SECONDS });
  });
});
