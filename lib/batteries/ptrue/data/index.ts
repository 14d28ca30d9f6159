export { parseItems, describeValue } from './parseItems.js';
export type { ItemsFormat, ParseItemsOptions } from './parseItems.js';
export { loadItems, itemsFormat } from './loadItems.js';
export { parseCsv } from './csv.js';
export type { CsvRecord } from './csv.js';
