export type * from './types.js';
export * from './errors.js';
export * from './guard.js';
export * from './LocalViewSource.js';
export * from './server.js';
