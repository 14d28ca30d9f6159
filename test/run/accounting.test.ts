/**
 * Exact accounting (docs/guarantees.md): at every moment — during a run,
 * after a stop at a random point, after a stop at the cap, after the resume — `status` counts
 * planned = done + failed + in flight + pending for every phase, and a phase whose partitions were
 * all expanded is counted exactly (no estimate).
 */
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ledgerStatus } from '../../lib/cli/commands/status.js';
import { seededRandom } from '../../lib/core/hash.js';
import type { Plan } from '../../lib/run/planCampaign.js';
import { runCampaign } from '../../lib/run/runCampaign.js';
import { EmbeddedLedger } from '../../lib/store/index.js';
import type { PhaseStatus } from '../../lib/cli/commands/status.js';
import { loadContext, simulateOnModels, tempDir, writeCampaign } from '../helpers/campaigns.js';

let root: string;
let cleanup: () => Promise<void>;
beforeAll(async () => {
  ({ dir: root, cleanup } = await tempDir('accounting'));
});
afterAll(() => cleanup());

const CAMPAIGN = 'run-small';

async function statusOf(dataDir: string, plan: Plan): Promise<readonly PhaseStatus[]> {
  const ledger = new EmbeddedLedger(dataDir);
  try {
    return (await ledgerStatus(ledger, CAMPAIGN, plan)).phases;
  } finally {
    await ledger.close();
  }
}

function expectBalanced(phases: readonly PhaseStatus[], when: string): void {
  for (const p of phases) {
    expect(p.planned, `${when}: ${p.phase} planned`).toBeDefined();
    expect(p.pending, `${when}: ${p.phase} pending`).toBeGreaterThanOrEqual(0);
    expect(p.done + p.failed + p.inFlight + p.pending, `${when}: ${p.phase}`).toBe(p.planned);
  }
}

describe('status balances at every moment', () => {
  it('during runs stopped at random points, at the cap, and resumed to the end', async () => {
    const file = await writeCampaign(root, 'small.yaml', (doc) => {
      doc.concurrency = 8;
      simulateOnModels(doc, { latency_ms: 3 });
    });
    const ctx = await loadContext(file);
    const dataDir = path.join(root, 'data');
    const random = seededRandom(7);
    let plan: Plan | undefined;
    const samples: { when: string; phases: readonly PhaseStatus[] }[] = [];

    // Three runs stopped at random points, each sampled while it runs.
    for (let stop = 0; stop < 3; stop++) {
      const abort = new AbortController();
      const after = 20 + Math.floor(random() * 120);
      let replies = 0;
      let sampling: Promise<void> = Promise.resolve();
      const summary = await runCampaign(await loadContext(file), {
        dataDir,
        signal: abort.signal,
        skipAnalysis: true,
        onReply: () => {
          if (++replies === after) abort.abort();
          if (replies % 15 === 0 && plan) {
            const p = plan;
            sampling = sampling.then(async () => {
              samples.push({ when: `run ${stop}, reply ${replies}`, phases: await statusOf(dataDir, p) });
            });
          }
        },
      });
      await sampling;
      plan = summary.plan;
      expectBalanced(await statusOf(dataDir, plan), `after stop ${stop}`);
    }
    expect(samples.length).toBeGreaterThan(3);
    for (const s of samples) expectBalanced(s.phases, s.when);

    // A stop at the cap: the partitions it never reached are pending all the same.
    const capped = await writeCampaign(root, 'small.yaml', (doc) => {
      doc.budget_usd = 0.05;
      simulateOnModels(doc, { latency_ms: 3 });
    }, 'capped.yaml');
    const atCap = await runCampaign(await loadContext(capped), { dataDir: path.join(root, 'capped'), allowPartial: true, skipAnalysis: true });
    expect(atCap.stopped).toBe('budget');
    const cappedStatus = await statusOf(path.join(root, 'capped'), atCap.plan);
    expectBalanced(cappedStatus, 'at the cap');
    const generate = cappedStatus.find((p) => p.phase === 'generate')!;
    expect(generate.estimated).toBe(false);
    expect(generate.planned).toBe(atCap.plan.partitions.reduce((n, p) => n + (p.items['generate'] ?? 0), 0));
    expect(generate.pending).toBe(generate.planned! - generate.done - generate.failed);

    // Resumed to the end: everything planned is done, counted exactly.
    const end = await runCampaign(ctx, { dataDir, skipAnalysis: true });
    expect(end.stopped).toBeUndefined();
    const final = await statusOf(dataDir, end.plan);
    expectBalanced(final, 'at the end');
    for (const p of final) {
      expect(p.estimated, p.phase).toBe(false);
      expect(p.pending + p.inFlight, p.phase).toBe(0);
    }
  }, 120_000);
});
