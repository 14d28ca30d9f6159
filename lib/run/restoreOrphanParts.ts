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
import { parseStagedKey, publishCommitted, stagedPrefix } from '../store/stagedParts.js';
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
 *
 * The parts wait in staging (lib/store/stagedParts.ts), outside the tables. A staged part whose
 * commit the ledger holds (killed between the commit and the move) is published here, whichever
 * execution made it: it is the committed part, moved into the table under its committed name.
 * Parts found uncommitted in the table itself (stored before parts were staged) are restored too,
 * and their adoption replaces them.
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
  const isOurs = (key: string): boolean => {
    const name = key.slice(key.lastIndexOf('/') + 1);
    const m = /^part-(.+-)\d{5}\.parquet$/.exec(name);
    return m !== null && ours.test(m[1]!) && !name.startsWith('part-batch-');
  };
  const thisExecution = (key: string): boolean => key.slice(key.lastIndexOf('/') + 1).startsWith(`part-${executionToken(o.execution)}-`);
  const table = partitionPrefix(o.campaign, shard.phase, 'replies', shard.model, shard.language);
  const staged = (await store.list(stagedPrefix(o.campaign, shard.phase, table))).filter(isOurs);
  const inTable = (await store.list(table)).filter((key) => isOurs(key) && !thisExecution(key));
  if (staged.length === 0 && inTable.length === 0) return 0;
  const committed = await ledger.committedParts(o.campaign, shard.phase);
  // Committed and not yet moved: published now, with the part's readings.
  const sources = new Map<string, string>();
  let publish = false;
  for (const key of staged) {
    const part = parseStagedKey(key);
    if (part === undefined) continue;
    if (committed.has(part.commitKey)) publish = true;
    else if (!thisExecution(key)) sources.set(part.finalKey, key);
  }
  if (publish) await publishCommitted(store, ledger, o.campaign, [shard.phase]);
  for (const key of inTable) if (!committed.has(key) && !sources.has(key)) sources.set(key, key);
  let restored = 0;
  for (const [finalKey, key] of sources) {
    const body = await store.get(key);
    if (body === undefined) continue;
    const name = finalKey.slice(finalKey.lastIndexOf('/') + 1);
    const scratchFile = join(o.scratch, name);
    await mkdir(o.scratch, { recursive: true });
    await mkdir(o.journalDir, { recursive: true });
    await writeFile(scratchFile, body);
    const journal = join(o.journalDir, `${name.slice('part-'.length, -'.parquet'.length)}.ndjson`);
    // The part's rows as the journal held them: the partition keys are in the path, not the file.
    await o.partToJournal(scratchFile, journal, { model: shard.model, language: shard.language });
    await rm(scratchFile, { force: true });
    restored++;
  }
  return restored;
}
