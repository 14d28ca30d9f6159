/**
 * Stored readings on AWS follow the design as it stands, as they do locally
 * (lib/run/refreshReadings.ts, lib/run/refreshCampaignReadings.ts): the plan of each wave, before it
 * lists the shards of a phase, reads again from the stored replies in the bucket every reading the
 * uploaded design would read otherwise, partition by partition, through the same refreshReadings
 * the local run uses. Nothing is asked: `read` is a pure function of the item and the stored reply.
 *
 * When: a phase's marker (`campaigns/<c>/<phase>/_readings/design.digest`) holds the design digest
 * its readings were last checked under (lib/run/designDigest.ts); while it holds the design as
 * uploaded now, the phase is passed over with one GET. Only after an edit are its partitions
 * expanded (a dependent phase's from its upstream parts, copied from the bucket as a worker copies
 * them) and checked, each by refreshReadings's own digest, so parts already rewritten by an
 * execution that was cut short compare equal and are kept. The marker is written once every
 * partition is checked.
 *
 * Why the plan and not the workers: a readings part is named after the replies part it was read
 * from and holds that part's readings only, and a part may hold the items of more than one of
 * today's shards (shards are cut by the campaign's concurrency and rate limits, which an edit may
 * change); two workers rewriting one part would lose one's rows. The plan runs while no worker of
 * the campaign does (the fence), one partition at a time.
 */
import { mkdir, rm, writeFile } from 'node:fs/promises';
import { dirname, join } from 'node:path';
import type { PhaseSpec, Upstream } from '../battery/types.js';
import type { LanguageCode } from '../core/types.js';
import { partitionPrefix } from '../store/layout.js';
import type { PartWriter } from '../store/parquetParts.js';
import type { BlobStore } from '../store/types.js';
import type { RunContext } from './context.js';
import { refreshPartitionReadings } from './refreshPartitionReadings.js';
import { upstreamNeeds } from './upstreamNeeds.js';
import { loadUpstreamRows } from './upstreamRows.js';

/** What the plan read again of one phase. */
export interface StoredReread {
  readonly phase: string;
  /** Readings read again from their stored replies (every row of each part rewritten). */
  readonly reread: number;
  /** Of those, readings whose label, value or raw text is not what was stored. */
  readonly rereadChanged: number;
  /** Partitions left unchecked: the plan's time ran short; the next plan checks them. */
  readonly unchecked: number;
}

export interface RereadArgs {
  readonly ctx: RunContext;
  readonly store: BlobStore;
  readonly writer: PartWriter;
  readonly phase: PhaseSpec;
  /** The uploaded design's digest (designDigest). */
  readonly design: string;
  /** A folder of its own for the upstream parts copied from the store. */
  readonly scratch: string;
  /** False once the plan must stop starting partitions (its time runs short). */
  mayStart(): boolean;
}

/** Key of the marker that says under which design a phase's readings were last checked. */
export function designCheckedKey(campaign: string, phase: string): string {
  return `campaigns/${campaign}/${phase}/_readings/design.digest`;
}

/**
 * Reads again the stored readings of `phase` that the uploaded design would read otherwise;
 * undefined when they were checked under this design already.
 */
export async function rereadStoredReadings(a: RereadArgs): Promise<StoredReread | undefined> {
  const { ctx, store, phase } = a;
  const { campaign } = ctx;
  const marker = designCheckedKey(campaign.name, phase.name);
  const held = await store.get(marker);
  if (held !== undefined && Buffer.from(held).toString('utf8') === a.design) return undefined;
  let reread = 0;
  let rereadChanged = 0;
  let unchecked = 0;
  for (const model of campaign.models) {
    for (const language of ctx.design.languages) {
      if (!a.mayStart()) {
        unchecked++;
        continue;
      }
      const upstream = phase.after.length > 0 ? await partitionUpstream(a, model.id, language) : undefined;
      const r = await refreshPartitionReadings({ ctx, store, writer: a.writer, phase, model, language, upstream });
      reread += r.reread;
      rereadChanged += r.changed;
    }
  }
  if (unchecked === 0) await store.put(marker, a.design);
  return { phase: phase.name, reread, rereadChanged, unchecked };
}

/** The whole upstream of one partition of a dependent phase: its parts copied from the store, read in JavaScript, the copies removed. */
async function partitionUpstream(a: RereadArgs, model: string, language: LanguageCode): Promise<Upstream> {
  const { ctx, store, phase } = a;
  const needs = upstreamNeeds(ctx.graph, phase);
  const root = join(a.scratch, `${phase.name}-${model}-${language}`.replace(/[^A-Za-z0-9._-]/g, '_'));
  const folders = [...[...needs.replies].map((f) => [f, 'replies'] as const), ...[...needs.readings.keys()].map((f) => [f, 'readings'] as const)];
  try {
    for (const [folder, table] of folders) {
      for (const key of await store.list(partitionPrefix(ctx.campaign.name, folder, table, model, language))) {
        if (!key.endsWith('.parquet')) continue;
        const body = await store.get(key);
        if (body === undefined) continue;
        await mkdir(dirname(join(root, key)), { recursive: true });
        await writeFile(join(root, key), body);
      }
    }
    return await loadUpstreamRows(root, ctx.campaign.name, needs, model, language);
  } finally {
    await rm(root, { recursive: true, force: true });
  }
}

/**
 * What a phase's re-read readings were, and why: the reasons refreshReadings reads a part again
 * (an edited design, a readings part gone, readings stored before they kept their inputs). The plan
 * on AWS, `run` and `analyze` say it with these words.
 */
export function rereadLine(phase: string, reread: number, changed: number): string {
  return (
    `${phase}: re-read ${reread} stored reading(s) from their replies, at no cost: the design's reading inputs (gold answers, reading maps, the reader) ` +
    `differ from those they were read with, their readings part was gone, or they were stored before readings kept them; ${changed} now read differently`
  );
}

/**
 * The lines the plan says of what it read again and of the dependent shards listed again under
 * an edited design (`relisted`: phase → shards): how many, why, and what it costs.
 */
export function rereadLines(rereads: readonly StoredReread[], relisted: Readonly<Record<string, number>>): string[] {
  const lines: string[] = [];
  for (const r of rereads) {
    if (r.reread > 0) {
      lines.push(rereadLine(r.phase, r.reread, r.rereadChanged));
    }
    if (r.unchecked > 0) lines.push(`${r.phase}: ${r.unchecked} partition(s) not yet checked against the edited design (the plan's time ran short); the next \`sondage start --aws\` checks them`);
  }
  for (const [phase, shards] of Object.entries(relisted)) {
    if (shards > 0) {
      lines.push(
        `${phase}: ${shards} shard(s) settled under an earlier design listed again: items whose prompts the edit changed (a judge's reference answer, a checklist chosen by a reading) ` +
          'are new items, asked and paid within the budget like any other; the rest are found done',
      );
    }
  }
  return lines;
}

/** What the plans of the latest execution said of stored readings and listed shards (`sondage status --aws` prints it). */
export interface RereadNotice {
  readonly execution: string;
  readonly lines: readonly string[];
}

/** Where the notice is kept: beside plan.json, outside every table. */
export function rereadNoticeKey(campaign: string): string {
  return `campaigns/${campaign}/rereads.json`;
}

/**
 * Adds a wave's lines to the execution's notice; the first wave of an execution starts it afresh,
 * so the notice is always the latest execution's (empty when nothing was read again).
 */
export async function recordRereadNotice(store: BlobStore, campaign: string, execution: string, lines: readonly string[], first: boolean): Promise<void> {
  const held = first ? undefined : await rereadNoticeOf(store, campaign);
  const earlier = held?.execution === execution ? held.lines : [];
  if (!first && lines.length === 0) return;
  const notice: RereadNotice = { execution, lines: [...earlier, ...lines] };
  await store.put(rereadNoticeKey(campaign), JSON.stringify(notice, null, 2));
}

/** The latest execution's notice; undefined when none was written or it cannot be read. */
export async function rereadNoticeOf(store: BlobStore, campaign: string): Promise<RereadNotice | undefined> {
  const body = await store.get(rereadNoticeKey(campaign));
  if (body === undefined) return undefined;
  try {
    const parsed = JSON.parse(Buffer.from(body).toString('utf8')) as Partial<RereadNotice>;
    if (typeof parsed.execution !== 'string' || !Array.isArray(parsed.lines) || !parsed.lines.every((l) => typeof l === 'string')) return undefined;
    return { execution: parsed.execution, lines: parsed.lines };
  } catch {
    return undefined;
  }
}
