/**
 * The SQL stage of the estimators' rows (sql/ptrue_rows.sql), one model at a time.
 *
 * Why per model: at the paper's size (10 models, 1,036,800 replies, 6,220,800 verifier copies) one
 * query over every model ranks every reply (the chosen reply and one reading per item: window
 * functions partitioned by item) and sorts 6.2 M rows at once, which ran out of DuckDB's 400 MB
 * memory limit; and JS held all 6.2 M result objects beside the rows made from them. Every item
 * and reading belongs to one model's partition (`model` is a partition column of every table, and
 * a verify item's generate item is the same model's), so the query over one model's partition of
 * each source gives exactly that model's rows; the models come in ptrue_models's order, which is
 * ptrue_rows's ORDER BY 1, so the rows are appended in the order one query would give them and the
 * estimators add floating-point values in the same order. Each model's result objects are
 * dropped once its rows are made compact (parseRows.ts appendCompactRows), a chunk at a time.
 * The query text is unchanged (portable: it runs so on Athena too, one query per model).
 *
 * The next model's query is started as soon as this model's first rows arrive. Where the engine has
 * a second connection (KeptSubqueries, as `sondage analyze` runs it) DuckDB computes it while
 * JavaScript makes these rows compact, instead of the two taking turns: at the paper's size the
 * ten queries and their rows took 24–33 s instead of 30–39 s (bench/README.md, "ptrue-rows").
 * On one connection the next query waits for these rows, as before.
 */
import type { Queryable, SourceMap } from '../../../api/battery.js';
import { sqlString } from '../../../api/battery.js';
import { PTRUE_SQL } from '../sqlLibrary.js';
import { appendCompactRows } from './parseRows.js';
import type { PtrueRow } from './types.js';

/** Every source limited to one model's partition. */
export function oneModelSources(sources: SourceMap, model: string): SourceMap {
  return Object.fromEntries(
    Object.entries(sources).map(([name, table]) => [name, table === undefined ? undefined : `(SELECT * FROM ${table} one_model WHERE CAST(model AS VARCHAR) = ${sqlString(model)})`]),
  );
}

/**
 * The rows of ptrue_rows over every model, queried model by model, as compact rows.
 * @example const rows = await queryPtrueRows(db, ptrueSourceMap(sources));
 */
export async function queryPtrueRows(db: Queryable, sources: SourceMap): Promise<PtrueRow[]> {
  const models = (await PTRUE_SQL.run<{ model: unknown }>(db, 'ptrue_models', sources)).map((r) => String(r.model));
  const rows: PtrueRow[] = [];
  const strings = new Map<string, string>();
  const start = (model: string) => {
    const started = PTRUE_SQL.startChunks(db, 'ptrue_rows', oneModelSources(sources, model));
    // Its failure is thrown where it is awaited; until then it is not unhandled.
    started.catch(() => undefined);
    return started;
  };
  let next = models.length > 0 ? start(models[0]!) : undefined;
  for (let k = 0; k < models.length; k++) {
    const read = await next!;
    const following = models[k + 1];
    next = undefined;
    const startNext = (): void => {
      if (next === undefined && following !== undefined) next = start(following);
    };
    // A chunk at a time (where the engine streams): each chunk's result objects die young, where a
    // model's 622,080 at the paper's size lived through scavenges until its last row was read.
    await read((chunk, offset) => {
      // The query ends in a sort: its first rows come once DuckDB has computed them all.
      startNext();
      appendCompactRows(chunk, rows, strings, offset);
    });
    startNext();
  }
  return rows;
}
