/**
 * `sondage stop --aws` then `sondage start --aws` while the stopped execution's workers still run
 * (Lambda invocations outlive StopExecution by up to their timeout): the synthesized state machine
 * with the real handlers, as in pipelineFaults.test.ts. The stop moves the budget's fence, so the
 * old workers reserve nothing more and stop at their next chunk; the new execution's plan moves the
 * fence to itself and waits for the old workers' leases to end before it lists what is pending.
 * No item is asked by two generations; spend is what was stored, within the cap.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { RunSummary } from '../../lib/run/runCampaign.js';
import { severalPartsFar6 } from '../helpers/pipeline/campaignFiles.js';
import { localFar6Run } from '../helpers/pipeline/localFar6Run.js';
import { startPipeline } from '../helpers/pipeline/pipelineHarness.js';
import { useServer } from '../helpers/useServer.js';

const CAMPAIGN = 'pipe-stop';

let cleanup: () => Promise<void>;
let file: string;
let local: RunSummary;

beforeAll(async () => {
  ({ cleanup, file, local } = await localFar6Run('pipeline-stop', CAMPAIGN, severalPartsFar6));
}, 60_000);

const pipelines = useServer('pipeline', startPipeline);
afterAll(() => cleanup());

describe('stop → start with the stopped execution\'s workers still running', () => {
  it('the old workers stop at their next chunk, the new plan waits for them, and no item is asked twice', async () => {
    // prepare: the first execution's workers are held at their fourth reservation, mid-shard,
    // with the items they listed still pending
    const pipeline = await pipelines.start();
    await pipeline.upload(file);
    let first: string | undefined;
    let reserves = 0;
    let release!: () => void;
    const released = new Promise<void>((r) => (release = r));
    let reached!: () => void;
    const holding = new Promise<void>((r) => (reached = r));
    const refusedAfterStop: string[] = [];
    // The old execution's reservations answered after the stop moved the fence: none may be granted.
    let stopped = false;
    const oldAfterStop: boolean[] = [];
    pipeline.fleet.onReserved = (execution, granted) => {
      if (stopped && execution === first) oldAfterStop.push(granted);
    };
    pipeline.fleet.onReserve = async (execution) => {
      first ??= execution;
      // A worker of the new execution about to ask: the old ones go on too (without a fence and a
      // wait, both generations now ask the same pending items).
      if (execution !== first) release();
      if (execution !== first || ++reserves <= 3) return;
      reached();
      await released;
      refusedAfterStop.push(execution);
    };
    const old = pipeline.execute({ campaign: CAMPAIGN });
    await holding;

    // act: `sondage stop --aws` (its fence: StopExecution does not reach invocations already running) …
    expect(await pipeline.ledger.fence(CAMPAIGN, 'stopped by the test')).toBe(true);
    stopped = true;
    // … then `sondage start --aws`; the held workers go on once the new execution's workers ask,
    // or a few seconds into its plan (which waits for them)
    let plans = 0;
    pipeline.fleet.onInvoke = (fn) => {
      if (fn === 'plan' && ++plans === 1) setTimeout(release, 6_000);
    };
    const next = await pipeline.execute({ campaign: CAMPAIGN });
    await old;

    // assess: the new execution finished the campaign; every item answered once, spend = stored cost ≤ cap
    expect(next.result.status, JSON.stringify(next.result).slice(0, 2000)).toBe('SUCCEEDED');
    expect(refusedAfterStop.length).toBeGreaterThan(0);
    // Stop takes effect at the old workers' next chunk: each asked once more and was refused.
    expect(oldAfterStop.length).toBeGreaterThan(0);
    expect(oldAfterStop.filter((granted) => granted)).toEqual([]);
    const acc = await pipeline.accounting(CAMPAIGN, local.phases.map((s) => s.phase));
    for (const summary of local.phases) {
      const phase = acc.phases[summary.phase]!;
      expect([...phase.okPerItem].filter(([, n]) => n !== 1), `${summary.phase}: items answered more than once`).toEqual([]);
      expect(phase.okPerItem.size, `${summary.phase}: items answered`).toBe(summary.done);
      expect(phase.ledger.pending, `${summary.phase}: pending`).toBe(0);
    }
    expect(acc.budget.reserved_usd).toBeCloseTo(0, 12);
    expect(acc.budget.spent_usd).toBeCloseTo(acc.storedCostUsd, 12);
    expect(acc.budget.spent_usd).toBeLessThanOrEqual(acc.budget.cap_usd);
    // The old generation's workers were refused by the fence: none of its reservations is left.
    expect(await pipeline.ledger.liveHolders(CAMPAIGN, 'nobody')).toMatchObject({ count: 0 });
  }, 180_000);
});
