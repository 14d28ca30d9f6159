export { analyzeReplies, importReplies, ISSUES_FILE } from './analyzeReplies.js';
export { findReplyFiles, formatOf, readReplyFile, readReplyFiles } from './load.js';
export { BYO_COLUMNS, byoReadingMapSchema, byoReadingSchema, byoRowSchema, repliesJsonSchema, repliesJsonSchemaText } from './schema.js';
export type { ByoRow } from './schema.js';
export { buildTables, tablePartPath, writeTables } from './tables.js';
export type { BuiltTables } from './tables.js';
export { derivedIds, resolveRows, rowPath, validateFile } from './validate.js';
export type { ResolvedRow, ValidatedFile } from './validate.js';
export type * from './types.js';
