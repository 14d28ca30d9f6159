/**
 * refreshReadings on hand-made parts: what is read again, what is kept, and a run killed halfway
 * through the rewrite, which the next run completes without reading anything twice.
 */
import { describe, expect, it } from 'vitest';
import type { PhaseSpec } from '../../lib/battery/types.js';
import type { PromptItem } from '../../lib/core/types.js';
import { readingRows } from '../../lib/run/readings.js';
import { readingsDigestKey, refreshReadings, type ReadingsRefreshTarget } from '../../lib/run/refreshReadings.js';
import { readParquetRows } from '../../lib/store/JsParquet.js';
import { partKey } from '../../lib/store/layout.js';
import type { PartWriter } from '../../lib/store/parquetParts.js';
import type { ReplyRow } from '../../lib/store/types.js';
import { useLocalParts } from '../helpers/localParts.js';
import { replyRow } from '../helpers/replyRow.js';

/** A phase whose reader marks a reply correct when it opens with the item's gold letter. */
const phase = {
  name: 'generate',
  after: [],
  answeredBy: 'subject',
  expand: () => [],
  read: (item: PromptItem, reply: { text: string | null }) => {
    const gold = (item.extras as { gold: string }).gold;
    return [{ reader: 'option', label: reply.text?.startsWith(gold) ? 'correct' : 'incorrect' }];
  },
} as unknown as PhaseSpec;

function item(id: string, gold: string): PromptItem {
  return { item_id: id, prompt_key: id, campaign: 'c', phase: 'generate', battery: 'b', model: 'm', language: 'en', factors: {}, messages: [], settings: {}, extras: { gold } };
}

function reply(id: string, text: string, attempt = 1): ReplyRow {
  return replyRow({ item_id: id, model: 'm', attempt, text, input_tokens: 1, output_tokens: 1, cached_input_tokens: null, latency_ms: 1, logprobs_exact: null, provider: 'simulated/m' });
}

const disk = useLocalParts('refresh');

const target = (items: PromptItem[], w: PartWriter = disk.writer): ReadingsRefreshTarget => ({
  store: disk.store,
  writer: w,
  campaign: 'c',
  phase,
  folder: 'generate',
  model: 'm',
  language: 'en',
  items,
  readReply: (i, r) => readingRows(phase, 'generate', {}, i, r),
});

/** Two parts as a run stores them: replies, and the readings made from them with `items`. */
async function storeParts(items: PromptItem[]): Promise<void> {
  const byId = new Map(items.map((i) => [i.item_id, i]));
  const parts = { 'part-1.parquet': [reply('a', 'B. 56'), reply('b', 'C. 12')], 'part-2.parquet': [reply('c', 'B. 7'), reply('x', 'B. dropped')] };
  for (const [partName, rows] of Object.entries(parts)) {
    await disk.writer.writePart(disk.store, { campaign: 'c', phase: 'generate', table: 'replies', model: 'm', language: 'en', partName }, rows);
    const readings = rows.flatMap((r) => (byId.has(r.item_id) ? readingRows(phase, 'generate', {}, byId.get(r.item_id)!, r) : []));
    await disk.writer.writePart(disk.store, { campaign: 'c', phase: 'generate', table: 'readings', model: 'm', language: 'en', partName }, readings);
  }
}

/** The writer, killed at its `n`th part: the parts before it are rewritten, the rest are not. */
function killedAtWrite(n: number): PartWriter {
  let writes = 0;
  return {
    writePart: async (...args) => {
      if (++writes === n) throw new Error('killed');
      return disk.writer.writePart(...args);
    },
    convertPart: (...args) => disk.writer.convertPart(...args),
    close: async () => undefined,
  };
}

async function labels(): Promise<Record<string, string>> {
  const out: Record<string, string> = {};
  for (const partName of ['part-1.parquet', 'part-2.parquet']) {
    const bytes = await disk.store.get(partKey('c', 'generate', 'readings', 'm', 'en', partName));
    for (const r of await readParquetRows(bytes!)) out[r['item_id'] as string] = r['label'] as string;
  }
  return out;
}

describe('refreshReadings', () => {
  it('reads again the parts whose items changed, keeps the readings of items the design dropped, and then has nothing to do', async () => {
    const old = [item('a', 'B'), item('b', 'B'), item('c', 'B'), item('x', 'B')];
    await storeParts(old);
    expect(await labels()).toEqual({ a: 'correct', b: 'incorrect', c: 'correct', x: 'correct' });

    // b's gold is corrected to C; x left the design.
    const now = [item('a', 'B'), item('b', 'C'), item('c', 'B')];
    expect(await refreshReadings(target(now))).toEqual({ reread: 2, changed: 1 });
    expect(await labels()).toEqual({ a: 'correct', b: 'correct', c: 'correct', x: 'correct' });
    expect(await disk.store.exists(readingsDigestKey('c', 'generate', 'm', 'en'))).toBe(true);
    // The digest says the readings agree with the design: nothing is read.
    expect(await refreshReadings(target(now))).toEqual({ reread: 0, changed: 0 });
  });

  it('readings stored without a fingerprint are read again once, and count as changed only where they differ', async () => {
    await storeParts([item('a', 'B'), item('b', 'B'), item('c', 'B'), item('x', 'B')]);
    const bytes = await disk.store.get(partKey('c', 'generate', 'readings', 'm', 'en', 'part-1.parquet'));
    const rows = (await readParquetRows(bytes!)).map((r) => ({ ...r, model: 'm', language: 'en', read_with: null }));
    await disk.writer.writePart(disk.store, { campaign: 'c', phase: 'generate', table: 'readings', model: 'm', language: 'en', partName: 'part-1.parquet' }, rows as never);
    const out = await refreshReadings(target([item('a', 'B'), item('b', 'B'), item('c', 'B'), item('x', 'B')]));
    expect(out).toEqual({ reread: 2, changed: 0 });
  });

  it('killed between two part rewrites: the next run rewrites the rest, and the first part is not read twice', async () => {
    await storeParts([item('a', 'B'), item('b', 'B'), item('c', 'A'), item('x', 'B')]);
    const now = [item('a', 'C'), item('b', 'C'), item('c', 'B'), item('x', 'B')];
    const dying = killedAtWrite(2);
    await expect(refreshReadings(target(now, dying))).rejects.toThrow('killed');
    expect(await disk.store.exists(readingsDigestKey('c', 'generate', 'm', 'en'))).toBe(false);
    expect(await labels()).toEqual({ a: 'incorrect', b: 'correct', c: 'incorrect', x: 'correct' });
    // Part 1 agrees with the design already: only part 2 is read again.
    expect(await refreshReadings(target(now))).toEqual({ reread: 2, changed: 1 });
    expect(await labels()).toEqual({ a: 'incorrect', b: 'correct', c: 'correct', x: 'correct' });
  });

  it('killed halfway, then the design put back as it was: the parts read under the other design are read again', async () => {
    const was = [item('a', 'B'), item('b', 'B'), item('c', 'A'), item('x', 'B')];
    await storeParts(was);
    // The stored readings agree with the design: nothing is read, its digest is kept.
    expect(await refreshReadings(target(was))).toEqual({ reread: 0, changed: 0 });
    expect(await disk.store.exists(readingsDigestKey('c', 'generate', 'm', 'en'))).toBe(true);
    const edited = [item('a', 'C'), item('b', 'C'), item('c', 'B'), item('x', 'B')];
    const dying = killedAtWrite(2);
    await expect(refreshReadings(target(edited, dying))).rejects.toThrow('killed');
    expect(await labels()).toEqual({ a: 'incorrect', b: 'correct', c: 'incorrect', x: 'correct' });
    // The edit undone: part 1, read under the edit, is read again under the design as it was.
    expect((await refreshReadings(target(was))).changed).toBe(2);
    expect(await labels()).toEqual({ a: 'correct', b: 'incorrect', c: 'incorrect', x: 'correct' });
  });
});
