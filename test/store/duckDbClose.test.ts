import { spawn } from 'node:child_process';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, describe, expect, it } from 'vitest';
import { tempDir } from '../helpers/campaigns.js';

const ROOT = fileURLToPath(new URL('../..', import.meta.url));
const SCRIPT = path.join(ROOT, 'test', 'store', 'fixtures', 'closeMidStatement.ts');

let cleanup: (() => Promise<void>) | undefined;
afterAll(() => cleanup?.());

describe('DuckDb.close with statements still running', () => {
  it('interrupts them and closes once they ended: the process exits, the running one is interrupted, the queued one refused', async () => {
    const scratch = await tempDir('duckdb-close');
    cleanup = scratch.cleanup;
    // In a process of its own: a close that blocked its thread would hang this one for good.
    const child = spawn(process.execPath, ['--import', 'tsx', SCRIPT, path.join(scratch.dir, 'out.parquet')], { cwd: ROOT, stdio: ['ignore', 'pipe', 'pipe'] });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (d: Buffer) => (stdout += d.toString('utf8')));
    child.stderr.on('data', (d: Buffer) => (stderr += d.toString('utf8')));
    const killer = setTimeout(() => child.kill('SIGKILL'), 30_000);
    const code = await new Promise<number | null>((resolve) => child.on('close', resolve));
    clearTimeout(killer);

    expect(stderr).toBe('');
    expect(code).toBe(0);
    const out = JSON.parse(stdout) as Record<string, string>;
    expect(out['copy']).toMatch(/^rejected: .*Interrupted/);
    expect(out['queued']).toBe('rejected: DuckDb is closed');
    expect(out['unread']).toBe('closed');
  }, 60_000);
});
