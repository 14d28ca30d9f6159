/**
 * `@duckdb/node-api`, imported at first use rather than when a module that may use it loads. The
 * Lambda worker's bundle carries modules that can query with DuckDB (the BYO import behind the
 * battery registry) but never does, and ships without DuckDB (lib/config/sizing.ts): a static
 * import would load the 68 MB native binding at every cold start, or fail where it is not beside
 * the bundle. Types come from `import type`, which costs nothing at run time.
 */
import type * as DuckDbApi from '@duckdb/node-api';

export type { DuckDbApi };

let loading: Promise<typeof DuckDbApi> | undefined;

/** The DuckDB module (loaded once per process). */
export function duckdbApi(): Promise<typeof DuckDbApi> {
  return (loading ??= import('@duckdb/node-api'));
}
