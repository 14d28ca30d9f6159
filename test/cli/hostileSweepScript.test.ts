import { execFile } from 'node:child_process';
import path from 'node:path';
import { promisify } from 'node:util';
import { describe, expect, it } from 'vitest';
import { REPO_ROOT } from '../helpers/campaigns.js';

// The hostile sweep (scripts/hostile-sweep.ts) is run by hand, not by the suite: it takes minutes.
// One tiny slice of it runs here so that the script keeps working and its table keeps its form.

const run = promisify(execFile);

describe('scripts/hostile-sweep.ts', () => {
  it('runs one small slice and prints the table of verdicts per group and the case count', async () => {
    const { stdout } = await run(process.execPath, ['--import', 'tsx', 'scripts/hostile-sweep.ts', '--only', 'flags', '--match', 'schema/'], { cwd: REPO_ROOT, timeout: 60_000 });
    const lines = stdout.split('\n');
    expect(lines[0]).toBe('group\tcases\tok\twrong\tvague\tcrash\thang\tsecret');
    expect(lines).toContain('flags\t6\t6\t0\t0\t0\t0\t0');
    expect(stdout).toMatch(/^6 cases in \d+ s; 0 not clean$/m);
  }, 60_000);

  it('lists its cases: several hundred over the five groups', async () => {
    const { stdout } = await run(process.execPath, ['--import', 'tsx', path.join('scripts', 'hostile-sweep.ts'), '--list'], { cwd: REPO_ROOT });
    const groups = new Map<string, number>();
    for (const line of stdout.trim().split('\n')) groups.set(line.split('/')[0]!, (groups.get(line.split('/')[0]!) ?? 0) + 1);
    expect([...groups.keys()].sort()).toEqual(['byo', 'design', 'flags', 'store', 'yaml']);
    expect([...groups.values()].reduce((a, b) => a + b)).toBeGreaterThan(300);
  });
});
