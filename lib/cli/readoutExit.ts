import { EXIT_UNREADABLE, unreadableReadouts, type ReadoutHealth } from '../battery/readoutHealth.js';

/**
 * EXIT_UNREADABLE when a readout could be read for none of its rows (its figures are all "–"),
 * with one line on stderr naming it; the warning with its reasons is in the table already.
 */
export function unreadableExit(readouts: readonly ReadoutHealth[] | undefined): number {
  const none = unreadableReadouts(readouts ?? []);
  for (const h of none) process.stderr.write(`${h.readout} could be read for none of its ${h.rows} ${h.unit}: the results say nothing about it (exit ${EXIT_UNREADABLE})\n`);
  return none.length > 0 ? EXIT_UNREADABLE : 0;
}
