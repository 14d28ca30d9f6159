/**
 * The AWS path's reads at the 10 M shape, on the local stand-ins (no account): FAR-6 at 10 M
 * prompts over 8 models × 6 languages is ~208,000 generate replies a partition, written by ~104
 * Lambda shards of 2,000; its analysis reads Athena results of up to millions of rows; `status
 * --aws` counts 48 partitions a phase. Prints:
 *
 * - bytes and rows one dependent shard (a judge shard of 2,000) reads of its partition's upstream
 *   (lib/run/upstreamSlice.ts), against the whole partition;
 * - the time to read one query's result rows from its result file and by GetQueryResults pages
 *   (the Athena stand-in, test/helpers/athenaServer.ts);
 * - the time of Ledger.counts from per-partition counters, and from item rows (the DynamoDB stand-in).
 *
 *   npx tsx bench/aws-scale.ts                 # the 10 M shape (minutes: it writes 208,000 replies)
 *   npx tsx bench/aws-scale.ts --scale 0.01    # a quick look at 1 % of it
 */
import { mkdtemp, rm } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { parseArgs } from 'node:util';
import { AthenaClient } from '@aws-sdk/client-athena';
import { DynamoDBClient } from '@aws-sdk/client-dynamodb';
import { DynamoDBDocumentClient, PutCommand } from '@aws-sdk/lib-dynamodb';
import type { PhaseGraph } from '../lib/battery/phaseGraph.js';
import { loadUpstreamRows } from '../lib/run/upstreamRows.js';
import { partMayHold } from '../lib/run/upstreamSlice.js';
import { AthenaQueryable } from '../lib/store/AthenaQueryable.js';
import { bumpCounters } from '../lib/store/dynamo/counters.js';
import { DynamoLedger } from '../lib/store/DynamoLedger.js';
import { JsParquetWriter } from '../lib/store/JsParquet.js';
import { LocalBlobStore } from '../lib/store/LocalBlobStore.js';
import { partitionPrefix } from '../lib/store/layout.js';
import type { ReplyRow } from '../lib/store/types.js';
import { startAthenaServer } from '../test/helpers/athenaServer.js';
import { startDynamoServer } from '../test/store/dynamoServer.js';

const { values } = parseArgs({ options: { scale: { type: 'string', default: '1' } } });
const scale = Number(values.scale);
const SHAPE = { partitionRows: Math.round(208_000 * scale), shardItems: 2_000, partitions: 48, resultRows: Math.round(1_000_000 * scale), statusItems: Math.round(20_000 * scale) };
const C = { campaign: 'bench', model: 'm', language: 'en' } as const;
const CREDENTIALS = { accessKeyId: 'bench', secretAccessKey: 'bench' };
const mb = (b: number): string => `${(b / 1024).toFixed(0)} KB`;
const id = (i: number): string => `item-${String(i).padStart(8, '0')}`;

async function dependentShard(dir: string): Promise<void> {
  // The partition's generate replies, in parts named as the workers name them.
  const store = new LocalBlobStore(dir);
  const writer = new JsParquetWriter();
  const text = 'A reply of about two hundred characters, as a constrained answer with its one sentence of reasons gives it. '.repeat(2);
  for (let start = 0; start < SHAPE.partitionRows; start += SHAPE.shardItems) {
    const end = Math.min(SHAPE.partitionRows, start + SHAPE.shardItems);
    const rows: ReplyRow[] = [];
    for (let i = start; i < end; i++) {
      rows.push({ ...C, item_id: id(i), phase: 'generate', attempt: 1, status: 'ok', text, finish_reason: 'stop', input_tokens: 300, output_tokens: 60, cached_input_tokens: null, cost_usd: 0.0001, latency_ms: 900, logprobs_json: null, logprobs_exact: null, error_class: null, error_message: null, settings_json: '{}', provider: 'simulated', simulated: true, created_at: new Date(Date.UTC(2026, 11, 1)).toISOString() });
    }
    await writer.writePart(store, { ...C, phase: 'generate', table: 'replies', partName: `part-e0-i-generate-${start}-${end}-generate-00000.parquet` }, rows);
  }
  await writer.close();
  const graph = { phases: [{ name: 'generate', after: [] }, { name: 'judge', after: [{ phase: 'generate', take: ['reply'] }] }] } as unknown as PhaseGraph;
  const start = Math.floor(SHAPE.partitionRows / SHAPE.shardItems / 2) * SHAPE.shardItems;
  const slice = { phase: 'generate', start, end: Math.min(SHAPE.partitionRows, start + SHAPE.shardItems) };
  const keys = await store.list(partitionPrefix(C.campaign, 'generate', 'replies', C.model, C.language));
  let all = 0;
  let read = 0;
  for (const key of keys) {
    const bytes = (await store.get(key))!.byteLength;
    all += bytes;
    if (partMayHold(graph, key, 'generate', slice)) read += bytes;
  }
  const ids = new Set(Array.from({ length: slice.end - slice.start }, (_, i) => id(slice.start + i)));
  const started = performance.now();
  const up = await loadUpstreamRows(dir, C.campaign, { replies: new Set(['generate']), readings: new Map() }, C.model, C.language, { phase: 'generate', ids });
  const ms = performance.now() - started;
  const kept = [...ids].filter((i) => up.reply('generate', i) !== undefined).length;
  console.log(`dependent shard of ${slice.end - slice.start} items, partition of ${SHAPE.partitionRows} rows in ${keys.length} parts:`);
  console.log(`  bytes read ${mb(read)} of ${mb(all)} (${((100 * read) / all).toFixed(1)} %), rows kept ${kept}, read in ${ms.toFixed(0)} ms`);
}

async function reportRead(dir: string): Promise<void> {
  const files = new Map<string, Buffer>();
  const athena = await startAthenaServer({ dataDir: dir, database: 'db', pollsBeforeDone: 0, results: { location: 's3://bench/athena-results/', write: async (location, body) => void files.set(location, body) } });
  const client = new AthenaClient({ endpoint: athena.url, region: 'us-east-1', credentials: CREDENTIALS });
  const sql = `SELECT range AS n, 'item-' || range AS item_id, range / 7.0 AS p FROM range(${SHAPE.resultRows})`;
  try {
    for (const mode of ['result file', 'GetQueryResults pages'] as const) {
      const db = new AthenaQueryable({ workgroup: 'wg', database: 'db', client, reuseMaxAgeMinutes: 0, pollInitialMs: 1, ...(mode === 'result file' ? { readResultFile: async (l: string) => files.get(l) } : {}) });
      const started = performance.now();
      const rows = await db.all(sql);
      const pages = athena.calls.filter((c) => c.operation === 'GetQueryResults').length;
      console.log(`report query of ${rows.length} rows by ${mode}: ${((performance.now() - started) / 1000).toFixed(1)} s (${pages} GetQueryResults calls so far)`);
    }
  } finally {
    client.destroy();
    await athena.close();
  }
}

async function statusCounts(): Promise<void> {
  const server = await startDynamoServer();
  const config = { endpoint: server.url, region: 'us-east-1', credentials: CREDENTIALS };
  const ledger = new DynamoLedger({ ledgerTable: 'ledger', budgetTable: 'budget', clientConfig: config });
  const doc = DynamoDBDocumentClient.from(new DynamoDBClient(config));
  try {
    await doc.send(new PutCommand({ TableName: 'ledger', Item: { pk: 'SEQ#bench#generate', sk: 'SEQ', next_seq: 10_000_000, counted: true } }));
    for (let p = 0; p < SHAPE.partitions; p++) await bumpCounters(doc, 'ledger', 'bench', 'generate', `model-${p % 8}`, `lang-${Math.floor(p / 8)}`, { registered: 208_334, done: 150_000, failed: 1_000 });
    let started = performance.now();
    const counted = await ledger.counts('bench', 'generate');
    console.log(`status counts of ${SHAPE.partitions} partitions (10 M items) from counters: ${(performance.now() - started).toFixed(0)} ms → ${JSON.stringify(counted)}`);
    await ledger.registerItems('bench', { phase: 'judge', model: 'm', language: 'en' }, Array.from({ length: SHAPE.statusItems }, (_, i) => id(i)));
    started = performance.now();
    await ledger.countRows('bench', 'judge');
    const rowsMs = performance.now() - started;
    console.log(`status counts from ${SHAPE.statusItems} item rows: ${rowsMs.toFixed(0)} ms (at 10 M items ≈ ${((rowsMs * 10_000_000) / SHAPE.statusItems / 1000).toFixed(0)} s on the stand-in)`);
  } finally {
    doc.destroy();
    await ledger.close();
    await server.close();
  }
}

const dir = await mkdtemp(path.join(os.tmpdir(), 'sondage-aws-scale-'));
try {
  await dependentShard(dir);
  await reportRead(dir);
  await statusCounts();
} finally {
  await rm(dir, { recursive: true, force: true });
}
