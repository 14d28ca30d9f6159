/**
 * The give-up step of a worker batch that failed after its retries: its shards' pending items are
 * recorded failed and the failure is recorded for `sondage status --aws`. Apart from the shard
 * runner: it runs no call, only settles what the failed batch left.
 */
import { rm } from 'node:fs/promises';
import { join } from 'node:path';
import type { WorkerEvent } from '../config/pipeline.js';
import { PartCommittedError } from '../store/errors.js';
import type { RunContext } from './context.js';
import type { ParquetSession } from './parquetIo.js';
import { PartitionItems } from './partitionItems.js';
import type { ShardRunnerDeps } from './shardRunnerDeps.js';
import { checkShard, sliceOf } from './shardItems.js';
import { shardUpstream } from './shardUpstream.js';
import { holdLease } from './workerLease.js';

/** What the give-up step of a failed worker batch returns (the child execution then fails). */
export interface GiveUpOutput {
  /** Items recorded failed: pending before, asked again by the next `start --aws` (with or without --retry-failed). */
  readonly failed: number;
  /** The shards, as `phase model/language [start, end)`. */
  readonly shards: readonly string[];
}

/**
 * The item processor's give-up step (infra/constructs/Pipeline.ts): the worker invocation for a
 * batch of shards failed after its retries (its salvage committed what it had journaled). The
 * items of those shards still pending are recorded failed (not permanently: every later start,
 * `--retry-failed` or not, asks them again, as the plan lists shards with items not done), and the
 * failure, naming the shards, goes into the ledger for `sondage status --aws`. With
 * `aws.tolerated_failure_percentage` above 0 the wave goes on without them; the execution's
 * report then counts them failed instead of leaving them pending with nobody working on them.
 * A dependent shard whose items cannot be built (its inputs are what failed) is only named: it has
 * no done marker, so the next start plans it again anyway.
 *
 * It holds a lease and reads the fence as a worker does (runShards): the give-up step of an
 * execution that `sondage stop --aws` or a newer execution fenced out only names its shards. Its
 * items are the newer execution's to ask, and marking or registering them beside that execution's
 * workers would mark items failed that they are answering, or count an item twice.
 */
export async function giveUpShards(ctx: RunContext, e: WorkerEvent, failure: { readonly Error?: string; readonly Cause?: string }, deps: ShardRunnerDeps): Promise<GiveUpOutput> {
  const { campaign } = ctx;
  const { execution } = e.BatchInput;
  const ledger = deps.ledger;
  const shards: string[] = [];
  let failed = 0;
  let io: ParquetSession | undefined;
  const lease = await holdLease(ledger, campaign.name, deps.invocation, deps.leaseMs, (err) => deps.log.warn('give-up lease not renewed', { campaign: campaign.name, error: deps.redact(String(err)) }));
  let fencedBy: string | undefined;
  try {
    fencedBy = await ledger.fencedOutBy?.(campaign.name);
    for (const shard of e.Items) {
      const { phase, model } = checkShard(ctx, shard);
      const label = `${phase.name} ${shard.model}/${shard.language} [${shard.start}, ${shard.end})`;
      shards.push(label);
      if (fencedBy !== undefined) continue;
      let ids: string[];
      try {
        const upstream =
          phase.after.length > 0
            ? (await shardUpstream(ctx, deps.store, (io ??= await deps.parquet.session(join(deps.scratch, 'parquet'))), join(deps.scratch, 'inputs', `${shard.start}-${shard.end}`), phase, model, shard)).upstream
            : undefined;
        ids = new PartitionItems({ ctx, model, language: shard.language, upstream, slice: sliceOf(phase, shard) }).items(phase.name).map((i) => i.item_id);
      } catch (err) {
        deps.log.error('gave up on a shard whose items could not be built: the next start plans it again', { campaign: campaign.name, execution, shard: label, error: deps.redact(String(err)) });
        continue;
      }
      const part = { phase: phase.name, model: shard.model, language: shard.language };
      await ledger.registerItems(campaign.name, part, ids);
      const pending = [...(await ledger.pendingAmong(campaign.name, part, ids))];
      if (pending.length === 0) continue;
      try {
        await ledger.commitPart({ campaign: campaign.name, ...part, partKey: `gave-up-${deps.invocation}-${phase.name}-${shard.start}`, done: [], failed: pending, costUsd: 0 });
      } catch (err) {
        // The give-up step delivered twice: its items are already recorded.
        if (!(err instanceof PartCommittedError)) throw err;
      }
      failed += pending.length;
    }
  } finally {
    await lease.end();
    await io?.close();
    await rm(deps.scratch, { recursive: true, force: true });
  }
  const error = deps.redact(`${failure.Error ?? 'Error'}: ${failure.Cause ?? ''}`).slice(0, 2_000);
  const cause =
    fencedBy !== undefined
      ? `the worker batch of ${shards.join('; ')} failed after its retries (${error}); this execution no longer holds the campaign's fence (${fencedBy}), so its items are left as they are, to the execution that does or to the next \`sondage start --aws\``
      : `the worker batch of ${shards.join('; ')} failed after its retries (${error}); ${failed} item(s) still pending are recorded failed: ` +
        '`sondage start --aws` (with or without --retry-failed) asks them again';
  deps.log.error('gave up on a batch of shards', { campaign: campaign.name, execution, shards, failed, error });
  await deps.recordFailure({ campaign: campaign.name, execution, at: new Date().toISOString(), error: 'ShardFailed', cause });
  return { failed, shards };
}
