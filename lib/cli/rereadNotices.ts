import { rereadLine } from '../run/rereadStoredReadings.js';

/**
 * One line per phase whose stored readings were read again (lib/run/refreshReadings.ts): how many,
 * why, and how many now read differently. Free: no call is made for them. `run` and `analyze` print it.
 */
export function rereadNotices(phases: readonly { readonly phase: string; readonly reread?: number; readonly rereadChanged?: number }[]): string[] {
  return phases.filter((p) => (p.reread ?? 0) > 0).map((p) => rereadLine(p.phase, p.reread ?? 0, p.rereadChanged ?? 0));
}
