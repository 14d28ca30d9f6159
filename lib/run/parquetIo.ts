/**
 * How a shard worker (lib/run/runShards.ts) writes and reads Parquet: with DuckDB
 * (parquetIoDuckDb.ts: the GPU job, and any runner that has DuckDB at hand) or in pure JavaScript
 * (parquetIoJs.ts: the Lambda worker, whose bundle ships without DuckDB; lib/config/sizing.ts).
 * Both write the same tables (test/store/jsParquet.test.ts) and read the same upstream
 * (test/run/upstreamRows.test.ts). No implementation is imported here, so that choosing one keeps
 * the other out of a bundle.
 */
import type { Upstream } from '../battery/types.js';
import type { LanguageCode } from '../core/types.js';
import type { PartWriter } from '../store/parquetParts.js';
import type { UpstreamNeeds } from './upstreamNeeds.js';
import type { UpstreamFilter } from './upstreamSlice.js';

/** One invocation's Parquet: a part writer, and the reads of parts copied into its scratch folder. */
export interface ParquetSession {
  readonly writer: PartWriter;
  /**
   * The upstream of one partition from its parts laid out like the bucket under `root`
   * (lib/run/upstream.ts); with `only`, of the filter's phase only its items' rows (upstreamSlice.ts).
   */
  upstream(root: string, campaign: string, needs: UpstreamNeeds, model: string, language: LanguageCode, only?: UpstreamFilter): Promise<Upstream>;
  /**
   * A reply part turned back into the journal it was made from: one JSON object per line, the
   * partition columns (`model`, `language`) added, as runPartition's journals hold them.
   */
  partToJournal(partFile: string, journalFile: string, partition: { readonly model: string; readonly language: string }): Promise<void>;
  /** Frees the engine and the staging folder. */
  close(): Promise<void>;
}

export interface ParquetIo {
  /** A session whose staging files go under `tmpDir`. */
  session(tmpDir: string): Promise<ParquetSession>;
}
