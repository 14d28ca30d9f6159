/**
 * A small RFC 4180 reader for items files: quoted fields with doubled quotes and line breaks, CRLF
 * or LF line ends, a header row. Each record keeps the line it starts on, for error messages.
 */

export interface CsvRecord {
  /** 1-based line of the file where the record starts. */
  readonly line: number;
  readonly fields: readonly string[];
}

/** Parses CSV text into records (the header is the first). Throws RangeError for an unclosed quote. */
export function parseCsv(text: string): CsvRecord[] {
  const records: CsvRecord[] = [];
  let fields: string[] = [];
  let field = '';
  let line = 1;
  let start = 1;
  let quoted = false;
  let any = false;
  const src = text.charCodeAt(0) === 0xfeff ? text.slice(1) : text;
  for (let i = 0; i < src.length; i++) {
    const ch = src[i]!;
    if (quoted) {
      if (ch === '"') {
        if (src[i + 1] === '"') {
          field += '"';
          i++;
        } else quoted = false;
      } else {
        if (ch === '\n') line++;
        field += ch;
      }
      continue;
    }
    if (ch === '"' && field === '') {
      quoted = true;
      any = true;
    } else if (ch === ',') {
      fields.push(field);
      field = '';
      any = true;
    } else if (ch === '\n' || ch === '\r') {
      if (ch === '\r' && src[i + 1] === '\n') i++;
      if (any || field !== '') {
        fields.push(field);
        records.push({ line: start, fields });
      }
      fields = [];
      field = '';
      any = false;
      line++;
      start = line;
    } else {
      field += ch;
      any = true;
    }
  }
  if (quoted) throw new RangeError(`line ${start}: a quoted field is never closed`);
  if (any || field !== '') {
    fields.push(field);
    records.push({ line: start, fields });
  }
  return records;
}
