export { AnalysisError } from './errors.js';
export { RowReader } from './rowReader.js';
export { CORE_SQL, parquetSource, SqlLibrary } from './sql.js';
export type { Queryable, SourceMap, TableSources } from './types.js';
