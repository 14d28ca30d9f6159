export { parseCsv } from './parseCsv.js';
export type { CsvProblem, CsvRecord, ParsedCsv } from './parseCsv.js';
export { qaPairRecordSchema, CSV_COLUMNS, show } from './qaPairSchema.js';
export type { QaPairRecord } from './qaPairSchema.js';
export { formatQaCsv } from './formatQaCsv.js';
export { loadQaPairs, parseQaPairs, qaFormatOf } from './loadQaPairs.js';
export type { QaFormat, QaParseResult, SeenIds } from './loadQaPairs.js';
