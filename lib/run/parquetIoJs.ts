/**
 * The shard worker's Parquet in pure JavaScript (lib/run/parquetIo.ts, lib/store/JsParquet.ts):
 * the Lambda worker's, whose bundle ships without DuckDB. Nothing here imports DuckDB.
 */
import { writeFile } from 'node:fs/promises';
import { JsParquetWriter, readParquetRows } from '../store/JsParquet.js';
import type { ParquetIo } from './parquetIo.js';
import { loadUpstreamRows } from './upstreamRows.js';

export const jsParquetIo: ParquetIo = {
  async session() {
    const writer = new JsParquetWriter();
    return {
      writer,
      upstream: (root, campaign, needs, model, language, only) => loadUpstreamRows(root, campaign, needs, model, language, only),
      async partToJournal(partFile, journalFile, partition) {
        const rows = await readParquetRows(partFile);
        await writeFile(journalFile, rows.map((r) => `${JSON.stringify({ ...r, model: partition.model, language: partition.language })}\n`).join(''));
      },
      close: () => writer.close(),
    };
  },
};
