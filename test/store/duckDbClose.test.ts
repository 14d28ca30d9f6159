import path from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { REPO_ROOT, tempDir } from '../helpers/campaigns.js';
import { runNode } from '../helpers/cli.js';

const SCRIPT = path.join(REPO_ROOT, 'test', 'store', 'fixtures', 'closeMidStatement.ts');

let cleanup: (() => Promise<void>) | undefined;
afterAll(() => cleanup?.());

describe('DuckDb.close with statements still running', () => {
  it('interrupts them and closes once they ended: the process exits, the running one is interrupted, the queued one refused; a failed close after them is a warning', async () => {
    const scratch = await tempDir('duckdb-close');
    cleanup = scratch.cleanup;
    // In a process of its own: a close that blocked its thread would hang this one for good.
    const { code, stdout, stderr } = await runNode(['--import', 'tsx', SCRIPT, path.join(scratch.dir, 'out.parquet')], { timeoutMs: 30_000 });

    // The one line on stderr is Node's print of the warning the failed close gives.
    expect(stderr.trim().split('\n').filter((l) => !/Use `node --trace-warnings/.test(l))).toEqual([
      expect.stringMatching(/Warning: DuckDb: closing the connection after its last statement failed: connection close failed \(test\)$/),
    ]);
    expect(code).toBe(0);
    const out = JSON.parse(stdout) as Record<string, string>;
    expect(out['copy']).toMatch(/^rejected: .*Interrupted/);
    expect(out['queued']).toBe('rejected: DuckDb is closed');
    expect(out['unread']).toBe('closed');
    expect(out['failedClose']).toMatch(/^rejected: .*Interrupted.*; warning: DuckDb: closing the connection after its last statement failed: connection close failed \(test\)$/);
  }, 60_000);
});
