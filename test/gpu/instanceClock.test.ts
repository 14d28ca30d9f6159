import { readFile, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { CHARGED_UNTIL_FILE, preContainerSeconds, recordChargedUntil } from '../../lib/gpu/instanceClock.js';
import { PRE_CONTAINER_SECONDS } from '../../lib/gpu/instanceTime.js';
import { useTempDir } from '../helpers/campaigns.js';

const tmp = useTempDir('instance-clock');
const NOW = 1_800_000_000_000;

describe('the instance time before a GPU job\'s container', () => {
  it('is the assumed time without the instance folder or a usable uptime', async () => {
    expect(await preContainerSeconds(undefined, NOW, NOW)).toEqual({ seconds: PRE_CONTAINER_SECONDS, measured: false });
    expect(await preContainerSeconds({ uptimeSeconds: () => 900 }, NOW, NOW)).toEqual({ seconds: PRE_CONTAINER_SECONDS, measured: false });
    for (const bad of [0, -5, Number.NaN, Number.POSITIVE_INFINITY]) {
      expect(await preContainerSeconds({ uptimeSeconds: () => bad, dir: tmp.dir }, NOW, NOW)).toEqual({ seconds: PRE_CONTAINER_SECONDS, measured: false });
    }
  });

  it('is the uptime at the container\'s start on a fresh instance, whether the boot took less or more than assumed', async () => {
    // uptime read 20 s after the container started
    expect(await preContainerSeconds({ uptimeSeconds: () => 320, dir: tmp.dir }, NOW - 20_000, NOW)).toEqual({ seconds: 300, measured: true, from: 'boot' });
    expect(await preContainerSeconds({ uptimeSeconds: () => 2_420, dir: tmp.dir }, NOW - 20_000, NOW)).toEqual({ seconds: 2_400, measured: true, from: 'boot' });
  });

  it('counts from the end the last job on the instance recorded, and from the boot again when that end cannot be used', async () => {
    const clock = { uptimeSeconds: () => 7_200, dir: tmp.dir };
    await recordChargedUntil(clock, NOW - 90_000);
    expect(await preContainerSeconds(clock, NOW, NOW)).toEqual({ seconds: 90, measured: true, from: 'last-job' });
    // a neighbour's end after this container started, an end before the boot (a recycled folder), garbage
    for (const text of [String(NOW + 5_000), String(NOW - 8_000_000), 'not a time', '']) {
      await writeFile(path.join(tmp.dir, CHARGED_UNTIL_FILE), text);
      expect(await preContainerSeconds(clock, NOW, NOW)).toEqual({ seconds: 7_200, measured: true, from: 'boot' });
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
