/**
 * What Athena would scan for each FAR-6 analysis query of a million-reply campaign: the columns each
 * query reads from each table (from DuckDB's physical plan of the same SQL: Athena, like DuckDB,
 * reads only the columns a query projects from Parquet), priced by the compressed bytes of those
 * column chunks in the campaign's parts (parquet_metadata). Beside it, the ceiling `sondage plan
 * --aws` prices (every column of the three tables, lib/run/awsCost.ts parquetBytesPerReply).
 *
 * The parts are those bench/analysis generates and caches (a local run: DuckDB, zstd); the Lambda
 * worker writes GZIP through JavaScript, 1.5–2.5 % larger per table (bench/README.md,
 * parquet-parts). Row groups that a filter would let Athena skip are counted: the figures are a
 * bound. A table read only through columns that another table also has (item_id, model, language)
 * is counted against each table that has them all, the larger bound.
 *
 *   npm run bench:analysis -- --generate-only      # once: the cached million replies
 *   npm run bench:athena-scan
 *   npm run bench:athena-scan -- --data /tmp/sondage-bench-analysis/v2-stories11/data
 */
import os from 'node:os';
import path from 'node:path';
import { parseArgs } from 'node:util';
import { FAR6_PROMPT_COLUMNS } from '../lib/batteries/far6/promptColumns.js';
import { FAR6_SQL } from '../lib/batteries/far6/sqlLibrary.js';
import { DEFAULT_AWS_COST_ASSUMPTIONS, loadAwsPrices } from '../lib/run/awsCost.js';
import { DuckDb, sqlString, tableGlob } from '../lib/store/DuckDb.js';
import { tableColumns } from '../lib/store/schemas.js';

const { values } = parseArgs({
  options: {
    data: { type: 'string', default: path.join(os.tmpdir(), 'sondage-bench-analysis', 'v2-stories105', 'data') },
    campaign: { type: 'string', default: 'bench' },
    help: { type: 'boolean', short: 'h' },
  },
});
if (values.help) {
  console.log('usage: npm run bench:athena-scan -- [--data DATA_DIR (bench:analysis cache)] [--campaign NAME (bench)]');
  process.exit(0);
}
const TABLES = ['prompts', 'replies', 'readings'] as const;
type Table = (typeof TABLES)[number];

interface PlanNode {
  readonly name: string;
  readonly children: readonly PlanNode[];
  readonly extra_info?: { readonly Function?: string; readonly Projections?: string | readonly string[] };
}

/** The column sets of every Parquet scan in a physical plan. */
function scans(node: PlanNode, out: string[][] = []): string[][] {
  if (node.extra_info?.Function === 'READ_PARQUET' || node.name === 'READ_PARQUET') {
    const p = node.extra_info?.Projections ?? [];
    out.push(typeof p === 'string' ? p.split('\n').filter((c) => c !== '') : [...p]);
  }
  for (const c of node.children) scans(c, out);
  return out;
}

const db = await DuckDb.open();
try {
  const columns = new Map<Table, Map<string, number>>();
  for (const table of TABLES) {
    const glob = tableGlob(values.data, values.campaign, 'generate', table);
    await db.attachTable(table, glob, table, tableColumns(table, FAR6_PROMPT_COLUMNS));
    // Compressed bytes of each column over every part (a nested column's leaves add up to it).
    const rows = await db.all<{ col: string; bytes: bigint | number }>(
      `SELECT split_part(path_in_schema, ',', 1) AS col, sum(total_compressed_size) AS bytes FROM parquet_metadata(${sqlString(glob)}) GROUP BY 1`,
    );
    columns.set(table, new Map(rows.map((r) => [r.col, Number(r.bytes)])));
  }
  const [counts] = await db.all<{ replies: bigint | number }>('SELECT count(*) AS replies FROM replies');
  const replies = Number(counts!.replies);
  const tableBytes = (t: Table) => [...columns.get(t)!.values()].reduce((a, b) => a + b, 0);
  const prices = loadAwsPrices();
  const minBytes = prices.athena.minimum_megabytes_per_query * 1e6;
  const usd = (bytes: number) => (Math.max(bytes, minBytes) / 1e12) * prices.athena.per_terabyte_scanned;
  const mb = (b: number) => `${(b / 1e6).toFixed(1)} MB`;
  console.log(`${replies.toLocaleString('en-US')} replies; Parquet: ${TABLES.map((t) => `${t} ${mb(tableBytes(t))}`).join(', ')}\n`);
  console.log(`${'query'.padEnd(22)} ${'scanned'.padStart(10)} ${'Athena'.padStart(9)}  columns read`);
  let total = 0;
  let billed = 0;
  const queries = FAR6_SQL.allQueries();
  for (const query of queries) {
    const sql = FAR6_SQL.render(query, { prompts: 'prompts', replies: 'replies', readings: 'readings' });
    const [plan] = await db.all<{ explain_value: string }>(`EXPLAIN (FORMAT json) ${sql}`);
    const read = new Map<Table, Set<string>>();
    for (const projection of scans({ name: 'root', children: JSON.parse(plan!.explain_value) as PlanNode[] })) {
      // A column in no part's footer is a partition key, read from the path: it costs nothing.
      const stored = projection.filter((c) => TABLES.some((t) => columns.get(t)!.has(c)));
      for (const t of TABLES) {
        if (stored.length > 0 && stored.every((c) => columns.get(t)!.has(c))) {
          const set = read.get(t) ?? new Set<string>();
          for (const c of stored) set.add(c);
          read.set(t, set);
        }
      }
    }
    let bytes = 0;
    for (const [t, cols] of read) for (const c of cols) bytes += columns.get(t)!.get(c) ?? 0;
    total += bytes;
    billed += usd(bytes);
    const what = [...read].map(([t, cols]) => `${t}: ${[...cols].join(', ')}`).join('; ');
    console.log(`${query.padEnd(22)} ${mb(bytes).padStart(10)} ${`$${usd(bytes).toFixed(4)}`.padStart(9)}  ${what}`);
  }
  const ceiling = replies * DEFAULT_AWS_COST_ASSUMPTIONS.parquetBytesPerReply;
  console.log(`\n${queries.length} queries: ${mb(total)} scanned, $${billed.toFixed(4)} (Athena bills each at least ${prices.athena.minimum_megabytes_per_query} MB)`);
  console.log(`plan --aws prices each query at its ceiling: ${mb(ceiling)} (${DEFAULT_AWS_COST_ASSUMPTIONS.parquetBytesPerReply} B a reply), ${mb(ceiling * queries.length)} for the ${queries.length}`);
} finally {
  db.close();
}
