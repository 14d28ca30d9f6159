import type { Battery } from '../battery/types.js';
import { CampaignFileError } from '../errors.js';
import { isRecord, roleLocation, valueAt } from './crossField.js';
import { formatPath } from './issues.js';
import type { LocatedIssue } from './issues.js';

/**
 * Every simulated entry's `simulation:` block, checked by the battery's own simulator when the
 * campaign is loaded, so that `plan` refuses what `run` would refuse, with the block's line. The
 * core knows no battery's simulation schema: it builds each simulated model once, as a run would,
 * and turns what the simulator throws into issues of the campaign file.
 */
export function simulationIssues(raw: unknown, battery: Battery | undefined, file: string): LocatedIssue[] {
  const simulator = battery?.simulator;
  if (!simulator || !isRecord(raw)) return [];
  const seed = typeof raw.seed === 'number' ? raw.seed : 0;
  const entries: { value: Record<string, unknown>; segments: (string | number)[]; role: string }[] = [];
  if (Array.isArray(raw.models)) raw.models.forEach((value: unknown, i) => isRecord(value) && entries.push({ value, segments: ['models', i], role: 'subject' }));
  for (const role of Object.keys(battery.roles)) {
    const at = roleLocation(battery, role);
    const value = valueAt(raw, at);
    if (isRecord(value)) entries.push({ value, segments: [...at], role });
  }
  const out: LocatedIssue[] = [];
  for (const { value, segments, role } of entries) {
    // Entries with a wrong provider, id or block are reported by the schema already.
    if (value.provider !== 'simulated' || typeof value.id !== 'string' || !(value.simulation === undefined || isRecord(value.simulation))) continue;
    const at = [...segments, 'simulation'];
    const where = { file, path: formatPath(at) };
    try {
      simulator({ id: value.id, model: typeof value.model === 'string' ? value.model : value.id, role, simulation: value.simulation, where }, { seed });
    } catch (err) {
      if (err instanceof CampaignFileError && err.issues.length > 0) {
        for (const issue of err.issues) out.push({ path: issue.path, segments: [...at, ...segmentsAfter(issue.path, where.path)], message: issue.message });
      } else {
        // A simulator that throws something else still names the block, never a stack trace.
        out.push({ path: where.path, segments: at, message: `the ${battery.name} simulator cannot use it: ${err instanceof Error ? err.message.split('\n')[0] : String(err)}` });
      }
    }
  }
  return out;
}

/** `["ja"]` from `models[0].simulation.keying_bias.ja` after `models[0].simulation`: for the YAML line. */
function segmentsAfter(issuePath: string, prefix: string): (string | number)[] {
  if (!issuePath.startsWith(prefix)) return [];
  return issuePath
    .slice(prefix.length)
    .split('.')
    .filter((s) => s !== '')
    .map((s) => (/^\d+$/.test(s) ? Number(s) : s));
}
