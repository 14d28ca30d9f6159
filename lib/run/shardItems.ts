/**
 * The items one worker shard covers: the shard checked against the campaign, the slice of a
 * phase it expands, how many items a shard never started leaves pending, and the store markers
 * about a shard (the plan registered its partition; a dependent shard is settled). Shared by the
 * shard runner (runShards.ts) and its give-up step (giveUpShards.ts).
 */
import type { PhaseSpec } from '../battery/types.js';
import type { Shard } from '../config/pipeline.js';
import type { PromptItem } from '../core/types.js';
import type { ModelEntry } from '../design/campaign.js';
import { SondageError } from '../errors.js';
import type { BlobStore, Ledger } from '../store/types.js';
import type { RunContext } from './context.js';
import { designDigest } from './designDigest.js';
import { PartitionItems } from './partitionItems.js';
import type { ItemSlice } from './partitionItems.js';
import { registeredDigest, registeredKey, shardDoneKey } from './shards.js';

/** A manifest shard checked against the campaign: its phase, model and language exist. */
export function checkShard(ctx: RunContext, shard: Shard): { phase: PhaseSpec; model: ModelEntry } {
  const { campaign } = ctx;
  const languages: readonly string[] = ctx.design.languages;
  if (!languages.includes(shard.language)) {
    throw new SondageError(`worker: shard language ${JSON.stringify(shard.language)} is not one campaign ${campaign.name} runs (${languages.join(', ')})`);
  }
  const model = campaign.models.find((m) => m.id === shard.model);
  if (!model) throw new SondageError(`worker: shard names model ${JSON.stringify(shard.model)}, which campaign ${campaign.name} does not have (models: ${campaign.models.map((m) => m.id).join(', ')})`);
  const phase = ctx.graph.phases.find((p) => p.name === shard.phase);
  if (!phase) throw new SondageError(`worker: shard names phase ${JSON.stringify(shard.phase)}, which battery ${ctx.battery.name} does not run here (phases: ${ctx.graph.phases.map((p) => p.name).join(', ')})`);
  return { phase, model };
}

/** What a shard expands: a slice of a root phase's items, of a dependent phase's source items, or the whole partition. */
export function sliceOf(phase: PhaseSpec, shard: Shard): ItemSlice | undefined {
  if (phase.after.length === 0) return { phase: phase.name, start: shard.start, end: shard.end };
  if ((phase.shard ?? 'by-source') === 'partition') return undefined;
  return { phase: phase.after[0]!.phase, start: shard.start, end: shard.end };
}

/** Whether the plan registered a root phase's partition: its marker holds the digest of the ids expanded here. */
export async function registered(ctx: RunContext, store: BlobStore, phase: PhaseSpec, model: ModelEntry, shard: Shard): Promise<boolean> {
  const body = await store.get(registeredKey(ctx.campaign.name, phase.name, shard));
  if (body === undefined) return false;
  // The marker is of the whole partition: expand it unsliced to compare.
  const whole = new PartitionItems({ ctx, model, language: shard.language }).items(phase.name);
  return Buffer.from(body).toString('utf8') === registeredDigest(whole.map((i) => i.item_id));
}

/**
 * Leaves a dependent shard's done marker (shardDoneKey, under the uploaded design) once its slice
 * can change no more: every source item settled in its phase, and every item of this phase settled.
 */
export async function markSettled(ctx: RunContext, ledger: Ledger, store: BlobStore, phase: PhaseSpec, shard: Shard, partition: PartitionItems, items: readonly PromptItem[]): Promise<void> {
  const name = ctx.campaign.name;
  for (const ref of phase.after) {
    const sources = partition.items(ref.phase);
    if ((await ledger.pendingAmong(name, { phase: ref.phase, model: shard.model, language: shard.language }, sources.map((i) => i.item_id))).size > 0) return;
  }
  if ((await ledger.pendingAmong(name, { phase: phase.name, model: shard.model, language: shard.language }, items.map((i) => i.item_id))).size > 0) return;
  await store.put(shardDoneKey(name, phase.name, shard, await designDigest(store, ctx)), new Date().toISOString());
}

/**
 * Items of a shard not started (the deadline or the budget stopped the invocation first): a root
 * phase's items the ledger has pending, or, for a dependent phase, its source items it builds on
 * (its items are built from the replies only when it runs).
 */
export async function pendingOfShard(ctx: RunContext, ledger: Ledger, phase: PhaseSpec, model: ModelEntry, shard: Shard, retryFailed: boolean): Promise<number> {
  const partition = new PartitionItems({ ctx, model, language: shard.language, slice: sliceOf(phase, shard) });
  if (phase.after.length > 0) {
    const sources = partition.items(phase.after[0]!.phase);
    return sources.filter((i) => phase.consumes?.(i) ?? true).length;
  }
  const items = partition.items(phase.name);
  return (await ledger.pendingAmong(ctx.campaign.name, { phase: phase.name, model: shard.model, language: shard.language }, items.map((i) => i.item_id), { retryFailed })).size;
}
