// Runs the campaign beside this file on its simulated models and checks that the analysis
// recovers what was simulated: each model's accuracy within four standard errors of the
// `simulation.accuracy` the campaign gives it. Run it with `node --test`.
import { execFileSync } from 'node:child_process';
import { existsSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { test } from 'node:test';
import assert from 'node:assert/strict';

const here = path.dirname(new URL(import.meta.url).pathname);
// The sondage command: SONDAGE_BIN if set, else the one installed in a node_modules above this
// folder, else the one on PATH.
function sondageBin() {
  if (process.env.SONDAGE_BIN) return process.env.SONDAGE_BIN;
  for (let dir = here; ; dir = path.dirname(dir)) {
    const bin = path.join(dir, 'node_modules', '.bin', 'sondage');
    if (existsSync(bin)) return bin;
    if (path.dirname(dir) === dir) return 'sondage';
  }
}
const sondage = (...args) => execFileSync(sondageBin(), args, { cwd: here, encoding: 'utf8', shell: process.platform === 'win32' });

test('__NAME__: the analysis recovers the simulated accuracy', () => {
  const data = mkdtempSync(path.join(tmpdir(), '__NAME__-'));
  try {
    sondage('run', 'campaign.yaml', '--data-dir', data);
    const results = path.join(data, 'campaigns', '__NAME__-demo', 'results');
    const truth = JSON.parse(readFileSync(path.join(results, 'simulation_truth.json'), 'utf8'));
    const rows = readFileSync(path.join(results, 'scores.csv'), 'utf8').trim().split(/\r?\n/).slice(1).map((l) => l.split(','));
    for (const [model, p] of Object.entries(truth.accuracy)) {
      const mine = rows.filter((r) => r[0] === model);
      const n = mine.reduce((s, r) => s + Number(r[2]), 0);
      const correct = mine.reduce((s, r) => s + Number(r[3]), 0);
      const se = Math.sqrt((p * (1 - p)) / n);
      assert.ok(n > 0, `${model}: no replies analysed`);
      assert.ok(Math.abs(correct / n - p) <= 4 * se + 1e-9, `${model}: accuracy ${correct / n} is not within 4 SE of ${p}`);
    }
  } finally {
    rmSync(data, { recursive: true, force: true });
  }
});
