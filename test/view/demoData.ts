/**
 * The X-Value demo (the smallest of the three) run once into a temp data folder, as `sondage run`
 * runs it: the viewer's tests read a real campaign, ledger and results included.
 */
import path from 'node:path';
import { REPO_ROOT, tempDir } from '../helpers/campaigns.js';
import { runMain } from '../helpers/cli.js';

export const DEMO = 'xvalue-demo';

export async function runDemo(prefix: string): Promise<{ dataDir: string; cleanup: () => Promise<void> }> {
  const { dir, cleanup } = await tempDir(prefix);
  const dataDir = path.join(dir, 'data');
  const run = await runMain(['run', path.join(REPO_ROOT, 'examples/xvalue/demo.yaml'), '--data-dir', dataDir, '--quiet']);
  if (run.code !== 0) throw new Error(`the demo run failed (${run.code}): ${run.stderr}`);
  return { dataDir, cleanup };
}
