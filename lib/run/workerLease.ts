/**
 * A worker invocation's lease on the ledger (Ledger.heartbeat): written before its first
 * reservation, pushed forward every third of its length while the invocation runs, ended when it
 * returns. A plan that moved the fence waits for the leases of other runs (waitForFencedWorkers),
 * so the workers of two generations never ask at the same time.
 */
import { SondageError } from '../errors.js';
import type { Ledger } from '../store/types.js';
import { sleep } from './sleep.js';

/** How long a lease lasts without a beat: what a plan waits, at most, for a worker killed without a word. */
export const LEASE_MS = 30_000;

export interface WorkerLease {
  end(): Promise<void>;
}

/**
 * Takes the lease (awaited: no reservation before it exists) and keeps it; a ledger without leases
 * (the embedded one) gives a lease that does nothing.
 * @example const lease = await holdLease(ledger, 'demo', invocation); try { … } finally { await lease.end(); }
 */
export async function holdLease(ledger: Ledger, campaign: string, holder: string, leaseMs = LEASE_MS, onError: (err: unknown) => void = () => {}): Promise<WorkerLease> {
  if (!ledger.heartbeat || !ledger.endHeartbeat) return { end: async () => {} };
  const beat = () => ledger.heartbeat!(campaign, holder, Date.now() + leaseMs);
  await beat();
  const timer = setInterval(() => void beat().catch(onError), Math.max(10, Math.floor(leaseMs / 3)));
  return {
    async end() {
      clearInterval(timer);
      await ledger.endHeartbeat!(campaign, holder).catch(onError);
    },
  };
}

/**
 * After the fence moved to `runId` (a plan's first wave): waits while workers of other runs hold a
 * live lease (fenced, they stop at their next chunk and commit), polling every `pollMs`, at most
 * `maxMs`; then refuses, naming them, rather than let two generations ask the same items.
 * Returns how long it waited.
 */
export async function waitForFencedWorkers(ledger: Ledger, campaign: string, runId: string, maxMs: number, pollMs = 1_000): Promise<number> {
  if (!ledger.liveHolders) return 0;
  const started = Date.now();
  for (;;) {
    const live = await ledger.liveHolders(campaign, runId);
    if (live.count === 0) return Date.now() - started;
    const waited = Date.now() - started;
    if (waited >= maxMs) {
      throw new SondageError(
        `campaign ${JSON.stringify(campaign)}: ${live.count} worker(s) of an earlier execution (${live.runs.join(', ')}) are still running after ${Math.round(waited / 1000)} s; ` +
          'the fence stops them at their next chunk, and their leases lapse by ' +
          `${new Date(live.untilMs).toISOString()} at the latest. Nothing was asked by this execution; \`sondage start --aws\` again after that`,
      );
    }
    await sleep(Math.min(pollMs, Math.max(1, maxMs - waited)));
  }
}
