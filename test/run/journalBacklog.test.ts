/**
 * A journal says when replies come faster than the disk takes them (`backlogged`), and when it has
 * caught up (`drained`): the partition runner waits on it before it starts more calls.
 */
import { readFile } from 'node:fs/promises';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { Journal } from '../../lib/run/Journal.js';
import { useTempDir } from '../helpers/campaigns.js';

const tmp = useTempDir('journal-backlog');

describe('a journal backlog', () => {
  it('is reported past 1 MiB of lines not yet written, drains, and loses no line', async () => {
    const journal = await Journal.open(tmp.dir, 'fast.ndjson');
    expect(journal.backlogged).toBe(false);
    const text = 'x'.repeat(1000);
    let rows = 0;
    while (!journal.backlogged) journal.append({ row: rows++, text });
    // The first line past the mark: about 1 MiB of ~1 KB lines.
    expect(rows).toBeGreaterThan(1000);
    expect(rows).toBeLessThan(1100);
    await journal.drained();
    expect(journal.backlogged).toBe(false);
    journal.append({ row: rows++, text });
    await journal.close();
    const lines = (await readFile(path.join(tmp.dir, 'fast.ndjson'), 'utf8')).trim().split('\n');
    expect(lines.map((l) => (JSON.parse(l) as { row: number }).row)).toEqual(Array.from({ length: rows }, (_, i) => i));
  });

  it('resolves at once with nothing buffered, and for a journal that could not be opened', async () => {
    const journal = await Journal.open(tmp.dir, 'idle.ndjson');
    journal.append({ row: 0 });
    await journal.drained();
    await journal.close();
    const broken = Journal.openSync(tmp.dir, 'no-such-folder/x.ndjson');
    expect(broken.failed).toBeDefined();
    expect(broken.backlogged).toBe(false);
    await broken.drained();
  });
});
