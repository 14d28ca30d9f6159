/**
 * A small RFC 4180 reader that keeps the line each record starts on, so that a validation issue
 * can name it (`qa-pairs.csv: line 14, column answer: …`). Quoted fields may hold commas, doubled
 * quotes and line breaks (an answer of several paragraphs); CRLF and LF both end a record; a
 * UTF-8 byte-order mark is dropped. QA files are small (thousands of rows), so the whole text is
 * read at once.
 */

/** One record and where it starts. */
export interface CsvRecord {
  /** 1-based line of the file on which the record starts. */
  readonly line: number;
  readonly fields: readonly string[];
}

/** A structural problem (an unterminated quote, text after a closing quote). */
export interface CsvProblem {
  readonly line: number;
  readonly message: string;
}

export interface ParsedCsv {
  readonly records: readonly CsvRecord[];
  readonly problems: readonly CsvProblem[];
}

/**
 * Splits CSV text into records of fields. Blank lines between records are skipped.
 * @example parseCsv('a,b\n"x, y",2\n').records[1] // { line: 2, fields: ['x, y', '2'] }
 */
export function parseCsv(text: string): ParsedCsv {
  const src = text.charCodeAt(0) === 0xfeff ? text.slice(1) : text;
  const records: CsvRecord[] = [];
  const problems: CsvProblem[] = [];
  let line = 1;
  let i = 0;
  while (i < src.length) {
    // Skip blank lines between records.
    if (src[i] === '\n' || src[i] === '\r') {
      if (src[i] === '\r' && src[i + 1] === '\n') i++;
      i++;
      line++;
      continue;
    }
    const start = line;
    const fields: string[] = [];
    let field = '';
    let quoted = false;
    let afterQuote = false;
    let ended = false;
    while (i < src.length && !ended) {
      const ch = src[i] as string;
      if (quoted) {
        if (ch === '"') {
          if (src[i + 1] === '"') {
            field += '"';
            i += 2;
            continue;
          }
          quoted = false;
          afterQuote = true;
          i++;
          continue;
        }
        if (ch === '\n') line++;
        field += ch;
        i++;
        continue;
      }
      if (ch === ',') {
        fields.push(field);
        field = '';
        afterQuote = false;
        i++;
      } else if (ch === '\n' || ch === '\r') {
        if (ch === '\r' && src[i + 1] === '\n') i++;
        i++;
        line++;
        ended = true;
      } else if (ch === '"' && field === '' && !afterQuote) {
        quoted = true;
        i++;
      } else {
        if (afterQuote) {
          problems.push({ line, message: 'text after a closing quote; quote the whole field and double the quotes inside it' });
          afterQuote = false;
        }
        field += ch;
        i++;
      }
    }
    if (quoted) problems.push({ line: start, message: 'a quoted field is never closed (a " is missing); the rest of the file was read as one field' });
    fields.push(field);
    records.push({ line: start, fields });
  }
  return { records, problems };
}
