/** The shard worker's Parquet with DuckDB (lib/run/parquetIo.ts): what the local run uses, for the GPU job. */
import { DuckDb, sqlString } from '../store/DuckDb.js';
import { ParquetWriter } from '../store/ParquetWriter.js';
import type { ParquetIo } from './parquetIo.js';
import { loadUpstream } from './upstream.js';

export const duckdbParquetIo: ParquetIo = {
  async session(tmpDir) {
    const writer = await ParquetWriter.create({ tmpDir, threads: 1 });
    let db: DuckDb | undefined;
    const open = async () => (db ??= await DuckDb.open());
    return {
      writer,
      upstream: async (root, campaign, needs, model, language, only) => loadUpstream(await open(), root, campaign, needs, model, language, only),
      async partToJournal(partFile, journalFile, partition) {
        await (await open()).run(
          `COPY (SELECT *, ${sqlString(partition.model)} AS model, ${sqlString(partition.language)} AS language FROM read_parquet(${sqlString(partFile)})) TO ${sqlString(journalFile)} (FORMAT json)`,
        );
      },
      async close() {
        db?.close();
        await writer.close();
      },
    };
  },
};
