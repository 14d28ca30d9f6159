export type * from './types.js';
export * from './errors.js';
export * from './layout.js';
/** The key builders as one namespace: `layout.partKey(…)`. */
export * as layout from './layout.js';
export * from './LocalBlobStore.js';
export * from './schemas.js';
export * from './DuckDb.js';
export * from './ParquetWriter.js';
export * from './EmbeddedLedger.js';
export * from './lock.js';
