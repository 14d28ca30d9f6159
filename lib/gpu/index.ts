export * from './instances.js';
export * from './memory.js';
export * from './settings.js';
export * from './checkGpuEntry.js';
export * from './gpuPrice.js';
export * from './vllmArgs.js';
export * from './spotNotice.js';
export * from './instanceTime.js';
