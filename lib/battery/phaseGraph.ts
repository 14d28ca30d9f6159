/**
 * A battery's phases as a graph: checked once when a campaign is loaded, then walked by the local
 * run and the AWS plan alike. A phase runs once every phase it consumes has run; phases of one
 * wave do not depend on each other and run side by side.
 */
import { CampaignFileError, formatIssues } from '../errors.js';
import type { FileIssue } from '../errors.js';
import type { PhaseSpec, RoleSpec } from './types.js';

const SAFE_PHASE = /^[a-z][a-z0-9_-]*$/;
/** Names the storage layout keeps for itself beside the phase folders. */
const RESERVED = new Set(['results', 'input']);

export interface PhaseGraph {
  /** Every phase, in the order the battery gave them (each after the phases it consumes). */
  readonly phases: readonly PhaseSpec[];
  /** Phases that run together: the first wave is every root phase. */
  readonly waves: readonly (readonly PhaseSpec[])[];
  get(name: string): PhaseSpec;
  /** The phases `name` consumes, directly or through others, in graph order. */
  upstreamOf(name: string): readonly PhaseSpec[];
  /** Where a phase's readings are stored. */
  readingsFolder(phase: PhaseSpec): string;
}

/**
 * Checks a battery's phase graph for a campaign: names unique and path-safe, every consumed phase
 * present and earlier (so there is no cycle), roles declared, a `by-source` dependent phase's
 * first input a root phase (the plan slices roots without their replies), dependent phases with
 * an estimate. Throws one CampaignFileError listing every problem, naming the campaign file.
 * @example checkPhaseGraph(battery.name, design.phases, battery.roles, campaign.file).waves.map((w) => w.map((p) => p.name))
 */
export function checkPhaseGraph(battery: string, phases: readonly PhaseSpec[], roles: Readonly<Record<string, RoleSpec>>, file: string): PhaseGraph {
  const issues: FileIssue[] = [];
  const add = (message: string): void => {
    issues.push({ file, path: 'battery', message: `${battery}: ${message}` });
  };
  const byName = new Map<string, PhaseSpec>();
  const all = phases.map((p) => p.name);
  if (phases.length === 0) add('its design gives no phase to run');
  for (const p of phases) {
    if (!SAFE_PHASE.test(p.name) || RESERVED.has(p.name)) add(`phase "${p.name}" is not a usable phase name (lowercase letters, digits, "_" and "-", not ${[...RESERVED].join(' or ')})`);
    if (byName.has(p.name)) add(`phase "${p.name}" appears twice`);
    for (const ref of p.after) {
      if (ref.phase === p.name) add(`phase "${p.name}" consumes itself`);
      else if (!byName.has(ref.phase)) {
        add(
          all.includes(ref.phase)
            ? `phase "${p.name}" consumes "${ref.phase}", which comes after it: the phases form a cycle or are out of order (${all.join(' → ')})`
            : `phase "${p.name}" consumes "${ref.phase}", which the phase graph does not have (phases: ${all.join(', ')})`,
        );
      }
    }
    if (typeof p.answeredBy === 'object' && !Object.hasOwn(roles, p.answeredBy.role)) {
      add(`phase "${p.name}" is answered by role "${p.answeredBy.role}", which the battery does not declare (roles: ${Object.keys(roles).join(', ') || 'none'})`);
    }
    if (p.after.length > 0) {
      if (!p.estimate) add(`phase "${p.name}" consumes earlier phases but gives no estimate, so the plan cannot price it`);
      const first = byName.get(p.after[0]!.phase);
      if ((p.shard ?? 'by-source') === 'by-source' && first && first.after.length > 0) {
        add(`phase "${p.name}" is cut by source, but its first input "${first.name}" is not a root phase; use shard: 'partition' or consume a root phase first`);
      }
    }
    if (p.readingsFolder !== undefined && p.readingsFolder !== p.name && !byName.has(p.readingsFolder)) {
      add(`phase "${p.name}" stores its readings with phase "${p.readingsFolder}", which does not come before it`);
    }
    byName.set(p.name, p);
  }
  if (issues.length > 0) throw new CampaignFileError(formatIssues(issues), issues);

  const wave = new Map<string, number>();
  for (const p of phases) wave.set(p.name, p.after.reduce((w, ref) => Math.max(w, (wave.get(ref.phase) ?? 0) + 1), 0));
  const waves: PhaseSpec[][] = [];
  for (const p of phases) (waves[wave.get(p.name)!] ??= []).push(p);
  return {
    phases,
    waves,
    get(name) {
      const p = byName.get(name);
      if (!p) throw new CampaignFileError(`${file}: battery: ${battery} has no phase "${name}" (phases: ${all.join(', ')})`);
      return p;
    },
    upstreamOf(name) {
      const seen = new Set<string>();
      const visit = (n: string): void => {
        for (const ref of byName.get(n)?.after ?? []) {
          if (!seen.has(ref.phase)) {
            seen.add(ref.phase);
            visit(ref.phase);
          }
        }
      };
      visit(name);
      return phases.filter((p) => seen.has(p.name));
    },
    readingsFolder: (p) => p.readingsFolder ?? p.name,
  };
}
