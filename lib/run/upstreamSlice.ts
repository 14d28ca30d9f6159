/**
 * What of its partition's upstream one dependent shard reads: the parts that may hold its slice,
 * and of their rows only those of its slice's items.
 *
 * A shard of a phase cut by source (FAR-6 judge, X-Value step 2, P(True) verify and judge) builds
 * its items from `[start, end)` of its source phase's items in expansion order, and looks up only
 * those items' replies and readings. When the source phase is a root phase its items are a pure
 * function of the design, so the shard knows their ids before it reads anything.
 *
 * Why a layout by shard and not a filter on the ids inside Parquet: item ids are hashes, so a
 * slice's ids are spread evenly over the id space and min/max statistics of any row group of any
 * part cover some of them; an id filter pushed into the Parquet read prunes nothing, and every
 * part would still be downloaded. What does bound the read is who wrote a part: a worker names its
 * parts after its shard, `part-<invocation>-<phase>-<start>-<end>-<phase>-<seq>.parquet`
 * (lib/run/runShards.ts), and the shard's `[start, end)` is in the same index space as the
 * dependent shard's slice (both are slices of the source phase's items). So a dependent shard
 * downloads only the parts whose writer's range meets its slice, and keeps of their rows only its
 * items (UpstreamFilter): at 10 M prompts a shard of 2,000 reads about 2,000 rows, not the ~200,000
 * of its partition. A part whose name carries no range (a provider batch's, one part for the whole
 * partition; a part written before names carried the end) is read as before: whole.
 */
import type { PhaseGraph } from '../battery/phaseGraph.js';
import type { PhaseSpec } from '../battery/types.js';
import type { Shard } from '../config/pipeline.js';
import type { PromptItem } from '../core/types.js';

/** Rows of the upstream kept by a read: those of `phase` (its replies, and readings stored in its folder) whose item is in `ids`. */
export interface UpstreamFilter {
  readonly phase: string;
  readonly ids: ReadonlySet<string>;
}

/** The slice of a source phase's items a part's writer held: `[start, end)` of `phase`'s index space. */
export interface PartRange {
  /** The phase whose shard wrote the part. */
  readonly writer: string;
  readonly start: number;
  readonly end: number;
}

/** The run id of a shard's runner: part and journal names carry it, so a part says which slice wrote it. */
export function shardRunId(invocation: string, shard: Pick<Shard, 'phase' | 'start' | 'end'>): string {
  return `${invocation}-${shard.phase}-${shard.start}-${shard.end}`;
}

/**
 * The writer's range in a part's name (`…-<phase>-<start>-<end>-<phase>-<seq>.parquet`), or
 * undefined for a name without one.
 * @example partRange('campaigns/c/generate/replies/model=m/language=en/part-e1-i-generate-0-2000-generate-00000.parquet') // { writer: 'generate', start: 0, end: 2000 }
 */
export function partRange(key: string): PartRange | undefined {
  const name = key.slice(key.lastIndexOf('/') + 1);
  // The phase twice around the range (a phase name may hold `-`, so the match is tied by the backreference).
  const m = /-([a-z][a-z0-9_-]*?)-(\d+)-(\d+)-\1-\d{5}\.parquet$/.exec(name);
  if (m === null) return undefined;
  const start = Number(m[2]);
  const end = Number(m[3]);
  return end >= start ? { writer: m[1]!, start, end } : undefined;
}

/**
 * The slice a dependent shard reads of its upstream, with the ids of its items; undefined when it
 * reads the whole partition (a phase cut by partition, or one whose source phase is itself
 * dependent: its items are known only from what it reads).
 */
export function upstreamSliceOf(graph: PhaseGraph, phase: PhaseSpec, shard: Pick<Shard, 'start' | 'end'>, sourceItems: () => readonly PromptItem[]): (UpstreamFilter & { readonly start: number; readonly end: number }) | undefined {
  if (phase.after.length === 0 || (phase.shard ?? 'by-source') === 'partition') return undefined;
  const source = phase.after[0]!.phase;
  if (graph.get(source).after.length > 0) return undefined;
  return { phase: source, start: shard.start, end: shard.end, ids: new Set(sourceItems().map((i) => i.item_id)) };
}

/**
 * Whether the part `key` of folder `folder` may hold rows of `slice`: always, unless its name says
 * its writer was a shard over the slice's index space (the source phase itself, or a phase cut by
 * that source) whose range does not meet the slice.
 */
export function partMayHold(graph: PhaseGraph, key: string, folder: string, slice: { readonly phase: string; readonly start: number; readonly end: number }): boolean {
  if (folder !== slice.phase) return true;
  const range = partRange(key);
  if (range === undefined) return true;
  const writer = graph.phases.find((p) => p.name === range.writer);
  if (writer === undefined) return true;
  const space = writer.after.length === 0 ? writer.name : (writer.shard ?? 'by-source') === 'by-source' ? writer.after[0]!.phase : undefined;
  if (space !== slice.phase) return true;
  return range.start < slice.end && slice.start < range.end;
}
