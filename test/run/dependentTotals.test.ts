/**
 * A dependent phase's bar counts what is really asked: X-Value's step 2 is planned from an
 * estimate (one item per pair step 1 will read), and once step 1 has read fewer natures than
 * pairs, the wave's total follows, so the bar ends at 100 % rather than at 204/210.
 */
import { cp, readFile, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { ProgressSink } from '../../lib/run/progress.js';
import { runCampaign } from '../../lib/run/runCampaign.js';
import { loadContext, REPO_ROOT, tempDir } from '../helpers/campaigns.js';

let root: { dir: string; cleanup: () => Promise<void> };
beforeAll(async () => {
  root = await tempDir('dependent-totals');
});
afterAll(async () => root.cleanup());

describe('the progress of a dependent phase', () => {
  it("X-Value's step 2 bar ends at its real total when step 1 read fewer natures than planned", async () => {
    const folder = path.join(root.dir, 'xvalue');
    await cp(path.join(REPO_ROOT, 'examples', 'xvalue'), folder, { recursive: true });
    const file = path.join(folder, 'demo.yaml');
    const text = (await readFile(file, 'utf8'))
      .replace(/^data_dir: .*$/m, 'data_dir: ./data')
      .replace('languages: [ar, en, es, ja, zh]', 'languages: [en, ja]')
      // A quarter of alpha's replies unreadable: step 1 reads fewer natures than the plan expects.
      .replace('      profile_seed: 1\n', '      profile_seed: 1\n      invalid_rate: 0.25\n');
    expect(text).toContain('invalid_rate: 0.25');
    await writeFile(file, text);

    const bars: { label: string; total: number; done: number; final?: boolean }[] = [];
    const progress: ProgressSink = {
      start: (label, total) => void bars.push({ label, total, done: 0 }),
      tick: (done) => void (bars.at(-1)!.done = done),
      finish: () => void (bars.at(-1)!.final = true),
      retotal: (total) => void (bars.at(-1)!.total = total),
    };
    const ctx = await loadContext(file);
    const summary = await runCampaign(ctx, { progress, skipAnalysis: true, threads: 1 });
    const step2 = bars.find((b) => b.label === 'step2')!;
    const asked = summary.phases.find((p) => p.phase === 'step2')!;
    const planned = summary.plan.partitions.reduce((s, p) => s + (p.items['step2'] ?? 0), 0);
    expect(asked.items).toBeLessThan(planned);
    expect(step2.total).toBe(asked.items);
    expect(step2.done).toBe(asked.done);
    expect(step2.done).toBe(step2.total - asked.failed);
  }, 120_000);
});
