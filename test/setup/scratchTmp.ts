/**
 * The suite's scratch folders in one temporary folder of its own, removed when the run ends.
 * Tests make their folders under os.tmpdir() (campaigns, CDK synth output, DuckDB spill, Chromium
 * profiles), in this process, in the forks and in the child processes they start, which all inherit
 * TMPDIR; many are not removed by the test that made them (a failing test leaves its files to be
 * read). Pointing TMPDIR here keeps a developer's /tmp from filling run after run, and leaves the
 * benches' caches there untouched.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';

/** Set while the folder is in use: vitest runs a global setup once per project, and the second finds the first's folder. */
const IN_USE = 'SONDAGE_TEST_TMP';

export default function setup(): () => void {
  // One level only: Chromium's socket path (under TMPDIR) must stay under 108 bytes.
  if (process.env[IN_USE] !== undefined) return () => undefined;
  const dir = mkdtempSync(path.join(os.tmpdir(), 'sondage-tests-'));
  const before = process.env['TMPDIR'];
  process.env['TMPDIR'] = dir;
  process.env[IN_USE] = dir;
  return () => {
    delete process.env[IN_USE];
    if (before === undefined) delete process.env['TMPDIR'];
    else process.env['TMPDIR'] = before;
    // KEEP_TEST_TMP=1 keeps them, to read what a failing test left.
    if (process.env['KEEP_TEST_TMP'] === '1') console.log(`test scratch folders kept in ${dir}`);
    else rmSync(dir, { recursive: true, force: true });
  };
}
