/**
 * Worker leases on the DynamoDB ledger: a plan that moved the fence waits for the workers of other
 * runs to end, and refuses, naming them, when they do not end in time; a killed worker's lease
 * lapses on its own.
 */
import { describe, expect, it } from 'vitest';
import { holdLease, waitForFencedWorkers } from '../../lib/run/workerLease.js';
import type { DynamoLedger } from '../../lib/store/DynamoLedger.js';
import { useDynamoLedgers } from '../helpers/localDynamoLedger.js';

const local = useDynamoLedgers();
const ledger = (runId: string): DynamoLedger => local.open(runId);

describe('worker leases', () => {
  it('the plan waits while a worker of an earlier execution holds its lease, and goes on once it ends', async () => {
    const old = ledger('exec-1');
    const plan = ledger('exec-2');
    const lease = await holdLease(old, 'lease-a', 'invocation-1', 5_000);
    setTimeout(() => void lease.end(), 300);
    const waited = await waitForFencedWorkers(plan, 'lease-a', 'exec-2', 10_000, 50);
    expect(waited).toBeGreaterThanOrEqual(250);
    expect(await plan.liveHolders('lease-a', 'exec-2')).toMatchObject({ count: 0 });
    // Its own workers' leases do not hold it.
    const own = await holdLease(plan, 'lease-a', 'invocation-2', 5_000);
    await expect(waitForFencedWorkers(plan, 'lease-a', 'exec-2', 0)).resolves.toBeTypeOf('number');
    await own.end();
    await old.close();
    await plan.close();
  });

  it('refuses, naming the execution, when the old workers outlast the wait; a killed worker\'s lease lapses by itself', async () => {
    const old = ledger('exec-1');
    const plan = ledger('exec-2');
    // A worker killed right after its first beat: nobody ends its lease.
    await old.heartbeat('lease-b', 'killed-invocation', Date.now() + 400);
    await expect(waitForFencedWorkers(plan, 'lease-b', 'exec-2', 100, 20)).rejects.toThrow(
      /lease-b": 1 worker\(s\) of an earlier execution \(exec-1\) are still running after \d+ s; the fence stops them at their next chunk.*`sondage start --aws` again after that/,
    );
    expect(await waitForFencedWorkers(plan, 'lease-b', 'exec-2', 5_000, 50)).toBeGreaterThan(0);
    await old.close();
    await plan.close();
  });
});
