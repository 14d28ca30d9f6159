/**
 * One line per phase whose stored readings were read again (lib/run/refreshReadings.ts): how many,
 * why, and how many now read differently. Free: no call is made for them. `run` and `analyze` print it.
 */
export function rereadNotices(phases: readonly { readonly phase: string; readonly reread?: number; readonly rereadChanged?: number }[]): string[] {
  return phases
    .filter((p) => (p.reread ?? 0) > 0)
    .map(
      (p) =>
        `${p.phase}: re-read ${p.reread} stored reading(s) from their replies, at no cost: the design's reading inputs (gold answers, reading maps, the reader) ` +
        `differ from those they were read with, or they were stored before readings kept them; ${p.rereadChanged ?? 0} now read differently`,
    );
}
