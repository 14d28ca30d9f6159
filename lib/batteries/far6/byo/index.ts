export { analyzeReplies, importReplies, ISSUES_FILE } from './analyzeReplies.js';
export { CHUNK_ROWS, findReplyFiles, formatOf, readReplyChunks, readReplyFile, readReplyFiles } from './load.js';
export { BYO_COLUMNS, byoReadingMapSchema, byoReadingSchema, byoRowSchema, repliesJsonSchema, repliesJsonSchemaText } from './schema.js';
export type { ByoRow } from './schema.js';
export { TableSink } from './tables.js';
export type { WrittenTables } from './tables.js';
export { derivedIds, resolveRows, RowResolver, rowPath, unknownColumnsWarning, validateFile } from './validate.js';
export type { ResolvedRow, ValidatedFile } from './validate.js';
export type * from './types.js';
