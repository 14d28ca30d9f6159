/**
 * What a dependent phase reads of the phases before it (no DuckDB here: the Lambda worker reads
 * the same needs with lib/run/upstreamRows.ts, the local run with lib/run/upstream.ts).
 */
import type { PhaseGraph } from '../battery/phaseGraph.js';
import type { PhaseSpec, Upstream, UpstreamRef } from '../battery/types.js';

/** No earlier phase: what root phases are expanded with. */
export const NO_UPSTREAM: Upstream = { reply: () => undefined, readings: () => [] };

/** What a phase and the phases it builds on read of each earlier phase: replies, readings (and whose). */
export interface UpstreamNeeds {
  /** Phases whose chosen replies are read. */
  readonly replies: ReadonlySet<string>;
  /** Readings folders read, with the readers wanted (undefined: all). */
  readonly readings: ReadonlyMap<string, readonly string[] | undefined>;
}

/** The earlier outputs `phase` needs, its own and those of the phases it builds on (their items are re-expanded). */
export function upstreamNeeds(graph: PhaseGraph, phase: PhaseSpec): UpstreamNeeds {
  const replies = new Set<string>();
  const readings = new Map<string, string[] | undefined>();
  const add = (ref: UpstreamRef): void => {
    if (ref.take.includes('reply')) replies.add(ref.phase);
    if (ref.take.includes('readings')) {
      const prior = readings.get(ref.phase);
      const all = readings.has(ref.phase) && prior === undefined;
      readings.set(ref.phase, all || !ref.readers ? undefined : [...(prior ?? []), ...ref.readers]);
    }
  };
  for (const p of [phase, ...graph.upstreamOf(phase.name)]) for (const ref of p.after) add(ref);
  return { replies, readings };
}
