/**
 * Running a finished campaign again says it is complete and goes straight to the analysis: no
 * progress bars of 0/N, no partition planned again, the same results. A design that changed since
 * (here: one more language) takes the ordinary path and asks what is new.
 */
import { mkdir } from 'node:fs/promises';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { PartitionThreads } from '../../lib/run/partitionThreads.js';
import type { ProgressSink } from '../../lib/run/progress.js';
import { runCampaign } from '../../lib/run/runCampaign.js';
import { loadContext, tempDir, writeCampaign } from '../helpers/campaigns.js';
import { readResult } from '../helpers/runData.js';

let root: { dir: string; cleanup: () => Promise<void> };
beforeAll(async () => {
  root = await tempDir('complete-rerun');
});
afterAll(async () => root.cleanup());

function recorder(): ProgressSink & { readonly started: string[] } {
  const started: string[] = [];
  return { started, start: (label) => void started.push(label), tick() {}, finish() {} };
}

describe('a finished campaign run again', () => {
  it('is said to be complete and analysed without planning any partition again; an edited design is run as usual', async () => {
    const file = await writeCampaign(root.dir, 'small.yaml', (doc) => void (doc.design['languages'] = ['en']));
    const first = await runCampaign(await loadContext(file), { signal: new AbortController().signal });
    expect(first.phases.every((p) => p.pending === 0 && p.failed === 0)).toBe(true);
    const ctx = await loadContext(file);
    const before = await readResult(ctx.dataDir, 'run-small', 'story_scores.csv');

    const logged: string[] = [];
    const progress = recorder();
    const again = await runCampaign(await loadContext(file), { signal: new AbortController().signal, progress, log: (l) => logged.push(l) });
    expect(progress.started).toEqual([]);
    expect(logged.join('\n')).toMatch(/run-small is complete: every item of its design has its reply \(\d+ in all\), nothing to ask; analysing/);
    expect(again.phases.every((p) => p.done === 0 && p.pending === 0)).toBe(true);
    expect(again.table).toBeDefined();
    expect(await readResult(ctx.dataDir, 'run-small', 'story_scores.csv')).toBe(before);

    // One more language: the ordinary path, which asks the new items.
    await writeCampaign(root.dir, 'small.yaml', (doc) => void (doc.design['languages'] = ['en', 'de']));
    const edited = recorder();
    const grown = await runCampaign(await loadContext(file), { signal: new AbortController().signal, progress: edited, log: () => {} });
    expect(edited.started.length).toBeGreaterThan(0);
    expect(grown.phases.find((p) => p.phase === 'generate')!.done).toBeGreaterThan(0);
  }, 120_000);

  it('boots no partition threads while it plans when the design is the one that completed; an edited design boots them', async () => {
    // A folder of its own: the campaign (run-small) and its data are apart from the test above.
    const dir = path.join(root.dir, 'threads');
    await mkdir(dir);
    const file = await writeCampaign(dir, 'small.yaml', (doc) => void (doc.design['languages'] = ['en']));
    const start = vi.spyOn(PartitionThreads, 'start');
    try {
      const run = async () => runCampaign(await loadContext(file), { threads: 2, signal: new AbortController().signal, log: () => {} });
      const first = await run();
      expect(first.phases.every((p) => p.pending === 0 && p.failed === 0)).toBe(true);
      expect(start).toHaveBeenCalledTimes(1);

      start.mockClear();
      const again = await run();
      expect(again.phases.every((p) => p.done === 0 && p.pending === 0)).toBe(true);
      expect(start).not.toHaveBeenCalled();

      // One more language: the threads boot while the plan is made, as on a first run.
      await writeCampaign(dir, 'small.yaml', (doc) => void (doc.design['languages'] = ['en', 'de']));
      start.mockClear();
      const grown = await run();
      expect(grown.phases.find((p) => p.phase === 'generate')!.done).toBeGreaterThan(0);
      expect(start).toHaveBeenCalledTimes(1);
    } finally {
      start.mockRestore();
    }
  }, 120_000);
});
