/**
 * What the worker does when a shard's runner throws: stop its calls, wait for its commits, commit
 * what it journaled and settle the reservations it holds (salvage), or say that it could not
 * (ShardNotSalvagedError, which keeps the batch from being invoked again in the execution).
 */
import { SondageError } from '../errors.js';
import { ledgerPartition } from '../store/types.js';
import { adoptJournals } from './adoptJournals.js';
import type { PartitionSpec } from './partitionTypes.js';
import type { ShardRunnerDeps } from './shardRunnerDeps.js';
import { lookupOf } from './slicedItems.js';
import type { ShardWork } from './ShardWork.js';

/**
 * A shard failed and its salvage did not finish (its part commits did not end in time, or the
 * adoption of its journals failed): the batch must not be invoked again within the execution, as
 * its reservations may still be held and its replies in a part not committed.
 */
export class ShardNotSalvagedError extends SondageError {
  constructor(message: string, options?: ErrorOptions) {
    super(message, options);
    this.name = 'ShardNotSalvagedError';
  }
}

/** How long a failed shard waits for its calls and commits to end before it adopts its journals. */
const QUIET_MAX_MS = 30_000;

/**
 * After a shard's runner threw (a provider bug, an S3 or DynamoDB error): stops the calls still in
 * flight, waits for them and their part commits to end, then commits the journals they left in the
 * scratch folder, which does not outlive the invocation, and settles the reservations the shard
 * still holds in one commit: the attempts that were sent and never answered (those the abort cut
 * off among them) move to possibly billed at what they reserved, as a part's commit would have
 * counted them, and the rest goes back. The replies paid for are kept, their items are not asked
 * again, no call that may have been billed counts $0, and the money is not held until the next
 * plan's orphanStale. A batch shard's journals are rebuilt from the provider's results by the
 * invocation that re-attaches, and its reservations stay with its open batches. The runner's error
 * is thrown by the caller either way. False when the salvage could not finish (ShardNotSalvagedError).
 */
export async function salvage(err: unknown, s: { spec: PartitionSpec; batch: boolean; inflight: ShardWork; deps: ShardRunnerDeps }): Promise<boolean> {
  const { spec, inflight, deps } = s;
  const where = { campaign: spec.campaign, phase: spec.phase, model: spec.model, language: spec.language, journalDir: spec.journalDir };
  const error = deps.redact(String(err));
  deps.deadline.abort();
  // A provider batch's reservation stays with its batch row: the next poll collects it.
  if (s.batch) return true;
  const quiet = await inflight.quiet(Math.min(QUIET_MAX_MS, Math.max(0, deps.remainingMs() - 10_000)));
  if (!quiet) {
    // Adopting while a commit of the same journal runs could store its replies twice. The
    // reservations stay held: the next plan counts them possibly billed (orphanStale).
    deps.log.error('shard failed and did not get quiet: its uncommitted replies are lost', { ...where, error });
    return false;
  }
  try {
    // Read before the adoption, whose commits (without it) clear it.
    const possiblyBilledUsd = inflight.unansweredUsd;
    const adopted = await adoptJournals(spec, lookupOf(spec.items));
    const held = inflight.reservations;
    if (held.length > 0 || possiblyBilledUsd > 0) {
      await spec.ledger.commitPart({
        campaign: spec.campaign,
        ...ledgerPartition(spec),
        // No replies: the record of this settlement, once (a part key is committed once).
        partKey: `salvage-${spec.runId}`,
        done: [],
        failed: [],
        reservationIds: held,
        costUsd: 0,
        possiblyBilledUsd,
      });
    }
    deps.log.warn('shard failed; what it had journaled is committed', { ...where, adopted, settled: held.length, possiblyBilledUsd, error });
    return true;
  } catch (adoptErr) {
    deps.log.error('shard failed and its journals could not be committed', { ...where, error, adoptError: deps.redact(String(adoptErr)) });
    return false;
  }
}
