import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { REPO_ROOT } from '../helpers/campaigns.js';
import { runNode } from '../helpers/cli.js';

const FIXTURES = path.join(REPO_ROOT, 'test', 'fixtures', 'forkDeath');
const VITEST = path.join(REPO_ROOT, 'node_modules', 'vitest', 'vitest.mjs');

/** A vitest of its own on the fixture folder; none of this run's worker variables reach it. */
async function vitest(...filter: string[]): Promise<{ code: number | null; output: string }> {
  const env = Object.fromEntries(Object.entries(process.env).filter(([k]) => !/^(VITEST|TINYPOOL)/.test(k)));
  const { code, stdout, stderr } = await runNode([VITEST, 'run', '--root', FIXTURES, ...filter], { env: { ...env, NO_COLOR: '1' }, timeoutMs: 50_000 });
  return { code, output: `${stdout}${stderr}` };
}

describe('the reporter of test files in flight', () => {
  it('names the file whose fork died mid-test, though vitest exits with no summary', async () => {
    const { code, output } = await vitest('dies.fixture.ts');
    expect(code).toBe(1);
    expect(output).toContain('vitest exited before its run ended; test files a fork was still running:');
    expect(output).toMatch(/^ {2}root: test\/fixtures\/forkDeath\/dies\.fixture\.ts \(for \d+\.\d s\)$/m);
  }, 60_000);

  it('says nothing when the run ends', async () => {
    const { code, output } = await vitest('passes.fixture.ts');
    expect(code).toBe(0);
    expect(output).toContain('1 passed');
    expect(output).not.toContain('still running');
  }, 60_000);
});
