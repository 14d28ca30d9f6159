/**
 * A campaign whose readings an earlier sondage fingerprinted (from the items' canonical JSON) is read
 * again once, every reading keeping its label, and then has nothing to do: no stale reading can hide
 * behind a fingerprint of another format, and the upgrade costs one re-read, no call.
 */
import { createHash } from 'node:crypto';
import { expect, it } from 'vitest';
import type { PhaseSpec } from '../../lib/battery/types.js';
import { canonicalJson } from '../../lib/core/hash.js';
import type { PromptItem } from '../../lib/core/types.js';
import { readingRows } from '../../lib/run/readings.js';
import { readingsDigestKey, refreshReadings } from '../../lib/run/refreshReadings.js';
import { readParquetRows } from '../../lib/store/JsParquet.js';
import { partKey } from '../../lib/store/layout.js';
import type { ReadingRow, ReplyRow } from '../../lib/store/types.js';
import { useLocalParts } from '../helpers/localParts.js';

const phase = {
  name: 'generate',
  after: [],
  answeredBy: 'subject',
  expand: () => [],
  read: (item: PromptItem, reply: { text: string | null }) => [{ reader: 'option', label: reply.text?.startsWith((item.extras as { gold: string }).gold) ? 'correct' : 'incorrect' }],
} as unknown as PhaseSpec;

const item = (id: string, gold: string): PromptItem =>
  ({ item_id: id, prompt_key: id, campaign: 'c', phase: 'generate', battery: 'b', model: 'm', language: 'en', factors: { n: id }, messages: [], settings: {}, extras: { gold } }) as PromptItem;

const reply = (id: string, text: string): ReplyRow => ({
  item_id: id, campaign: 'c', phase: 'generate', model: 'm', language: 'en', attempt: 1, status: 'ok', text, finish_reason: 'stop',
  input_tokens: 1, output_tokens: 1, cached_input_tokens: null, cost_usd: 0, latency_ms: 1, logprobs_json: null, logprobs_exact: null,
  error_class: null, error_message: null, settings_json: '{}', provider: 'simulated/m', simulated: true, created_at: '2026-01-01T00:00:00.000Z',
});

/** The fingerprint as the earlier version made it: reader, then the extras' and factors' canonical JSON. */
const earlierFingerprint = (i: PromptItem) =>
  createHash('sha256').update(`generate\u0000\u0000${canonicalJson(i.extras)}\u0000${canonicalJson(i.factors)}`).digest('hex').slice(0, 16);

const disk = useLocalParts('upgrade');

it('readings fingerprinted by an earlier version are read again once, labels kept, then not again', async () => {
  // Prepare: one part stored as the earlier version left it, its partition digest included.
  const items = [item('a', 'B'), item('b', 'B'), item('c', 'A')];
  const replies = [reply('a', 'B. 56'), reply('b', 'C. 12'), reply('c', 'B. 7')];
  const target = { campaign: 'c', phase: 'generate', table: 'readings', model: 'm', language: 'en', partName: 'part-1.parquet' } as const;
  await disk.writer.writePart(disk.store, { ...target, table: 'replies' }, replies);
  const earlier: ReadingRow[] = replies.flatMap((r, n) => readingRows(phase, 'generate', {}, items[n]!, r).map((row) => ({ ...row, read_with: earlierFingerprint(items[n]!) })));
  await disk.writer.writePart(disk.store, target, earlier);
  await disk.store.put(readingsDigestKey('c', 'generate', 'm', 'en'), createHash('sha256').update('an earlier digest').digest('hex'));
  const refresh = () => refreshReadings({ store: disk.store, writer: disk.writer, campaign: 'c', phase, folder: 'generate', model: 'm', language: 'en', items, readReply: (i, r) => readingRows(phase, 'generate', {}, i, r) });

  // Act, assess: read again once, nothing changed; then the digest holds.
  expect(await refresh()).toEqual({ reread: 3, changed: 0 });
  const rows = await readParquetRows((await disk.store.get(partKey('c', 'generate', 'readings', 'm', 'en', 'part-1.parquet')))!);
  expect(rows.map((r) => [r['item_id'], r['label']])).toEqual([['a', 'correct'], ['b', 'incorrect'], ['c', 'incorrect']]);
  expect(rows.every((r, n) => r['read_with'] !== earlier[n]!.read_with)).toBe(true);
  expect(await refresh()).toEqual({ reread: 0, changed: 0 });
});
