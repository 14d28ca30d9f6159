/**
 * A campaign file of 100,000 nested `[` is one short error naming the file and the position, not
 * the parser's stack overflow repeated once per level (788 lines).
 */
import { writeFile } from 'node:fs/promises';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { runMain } from '../helpers/cli.js';
import { useTempDir } from '../helpers/campaigns.js';

const tmp = useTempDir('deep-nesting', 'all');

describe('deeply nested input', () => {
  it('100,000 nested [ in a campaign file: a few lines, exit 1, no stack overflow shown', async () => {
    const file = path.join(tmp.dir, 'nested.yaml');
    await writeFile(file, `${'['.repeat(100_000)}\n`);
    const out = await runMain(['plan', file]);
    expect(out.code).toBe(1);
    const lines = out.stderr.trim().split('\n');
    expect(lines.length).toBeLessThanOrEqual(11);
    expect(out.stderr).toContain(`${file}: line 1, column`);
    expect(out.stderr).toContain('invalid YAML: nested too deeply');
    expect(out.stderr).not.toMatch(/call stack/i);
    expect(new Set(lines).size).toBe(lines.length);
  });
});
