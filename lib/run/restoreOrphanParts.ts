/**
 * Reply parts an earlier execution's worker stored and never committed, turned back into journals
 * for the shard runner to adopt. Apart from the runner: it reads the store and writes journals,
 * and calls nothing.
 */
import { mkdir, rm, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { executionToken } from '../config/pipeline.js';
import type { Shard } from '../config/pipeline.js';
import { partitionPrefix } from '../store/layout.js';
import type { BlobStore, Ledger } from '../store/types.js';
import type { ParquetSession } from './parquetIo.js';

/**
 * Reply parts of this shard that an invocation of an earlier execution stored and never committed
 * (killed between a part's upload and its ledger commit; on Lambda its journal went with its
 * /tmp). Each is turned back into the journal it was made from, in the shard's journal folder, so
 * that adoptJournals (which runPartition runs before it asks anything) commits its replies whose
 * items are still pending, once, under the same part name (the rewrite replaces the orphan, and
 * its readings are written from it).
 * Without this the items were asked again and their replies stored twice, the first copy paid for
 * but never counted. Parts of this execution are left alone: a live invocation may be committing
 * one right now (part names start with the invocation, which starts with the execution).
 */
export async function restoreOrphanParts(o: {
  readonly store: BlobStore;
  readonly ledger: Ledger;
  readonly partToJournal: ParquetSession['partToJournal'];
  readonly campaign: string;
  readonly execution: string;
  readonly shard: Shard;
  readonly journalDir: string;
  readonly scratch: string;
}): Promise<number> {
  const { store, ledger, shard } = o;
  // runPartition names a part after its journal: part-<invocation>-<phase>-<shard start>[-<shard end>]-<phase>-<seq>.parquet (shardRunId; older parts lack the end)
  const ours = new RegExp(`-${shard.phase}-${shard.start}(-\\d+)?-${shard.phase}-$`);
  const keys = (await store.list(partitionPrefix(o.campaign, shard.phase, 'replies', shard.model, shard.language))).filter((key) => {
    const name = key.slice(key.lastIndexOf('/') + 1);
    const m = /^part-(.+-)\d{5}\.parquet$/.exec(name);
    return m !== null && ours.test(m[1]!) && !name.startsWith('part-batch-') && !name.startsWith(`part-${executionToken(o.execution)}-`);
  });
  if (keys.length === 0) return 0;
  const committed = await ledger.committedParts(o.campaign, shard.phase);
  let restored = 0;
  for (const key of keys) {
    if (committed.has(key)) continue;
    const body = await store.get(key);
    if (body === undefined) continue;
    const name = key.slice(key.lastIndexOf('/') + 1);
    const staged = join(o.scratch, name);
    await mkdir(o.scratch, { recursive: true });
    await mkdir(o.journalDir, { recursive: true });
    await writeFile(staged, body);
    const journal = join(o.journalDir, `${name.slice('part-'.length, -'.parquet'.length)}.ndjson`);
    // The part's rows as the journal held them: the partition keys are in the path, not the file.
    await o.partToJournal(staged, journal, { model: shard.model, language: shard.language });
    await rm(staged, { force: true });
    restored++;
  }
  return restored;
}
