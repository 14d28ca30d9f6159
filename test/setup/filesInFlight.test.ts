import { spawn } from 'node:child_process';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';

const ROOT = fileURLToPath(new URL('../..', import.meta.url));
const FIXTURES = path.join(ROOT, 'test', 'fixtures', 'forkDeath');
const VITEST = path.join(ROOT, 'node_modules', 'vitest', 'vitest.mjs');

/** A vitest of its own on the fixture folder; none of this run's worker variables reach it. */
function vitest(...filter: string[]): Promise<{ code: number | null; output: string }> {
  const env = Object.fromEntries(Object.entries(process.env).filter(([k]) => !/^(VITEST|TINYPOOL)/.test(k)));
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, [VITEST, 'run', '--root', FIXTURES, ...filter], { cwd: ROOT, env: { ...env, NO_COLOR: '1' } });
    let output = '';
    child.stdout.on('data', (d: Buffer) => (output += d.toString('utf8')));
    child.stderr.on('data', (d: Buffer) => (output += d.toString('utf8')));
    child.on('error', reject);
    child.on('close', (code) => resolve({ code, output }));
  });
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
