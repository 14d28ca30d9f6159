/**
 * The accounting check every pipeline test that runs a campaign to the end starts with: the last
 * execution succeeded, no item was lost or answered twice, and the ledger holds each phase as the
 * local run of the same campaign left it, with nothing still reserved.
 */
import { expect } from 'vitest';
import type { RunSummary } from '../../../lib/run/runCampaign.js';
import type { ExecutionRecord } from '../asl/interpreter.js';
import type { Accounting, Pipeline } from './pipelineHarness.js';

/**
 * Asserts the above and returns the accounting for the test's own checks (spend, staging, results).
 * `failed` is what the ledger must count as failed in a phase: 0 where every item must succeed, the
 * local run's count where some fail on both backends.
 */
export async function expectEveryItemOnce(
  pipeline: Pipeline,
  campaign: string,
  local: RunSummary,
  runs: readonly ExecutionRecord[],
  failed: (phase: RunSummary['phases'][number]) => number,
): Promise<Accounting> {
  expect(runs.at(-1)!.result.status, JSON.stringify(runs.map((r) => r.result)).slice(0, 2000)).toBe('SUCCEEDED');
  const acc = await pipeline.accounting(campaign, local.phases.map((s) => s.phase));
  for (const summary of local.phases) {
    const phase = acc.phases[summary.phase]!;
    expect([...phase.okPerItem].filter(([, n]) => n !== 1), `${summary.phase}: items answered more than once`).toEqual([]);
    expect(phase.okPerItem.size, `${summary.phase}: items answered`).toBe(summary.done);
    expect(phase.ledger, `${summary.phase}: ledger`).toEqual({ pending: 0, done: summary.done, failed: failed(summary) });
  }
  expect(acc.budget.reserved_usd).toBeCloseTo(0, 12);
  return acc;
}
