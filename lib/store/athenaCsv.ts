/**
 * A query's result file as Athena writes it to the workgroup's result location
 * (`<location>/<QueryExecutionId>.csv`; "DML query results files are saved in comma-separated
 * values (CSV) format", Athena user guide, "Find query output files in Amazon S3"): a header row of
 * the column names, then one line per row; values in double quotes with inner quotes doubled; SQL
 * NULL an empty field without quotes, so that the empty string (`""`) stays apart from it. Read in
 * one pass over the text; a quoted value may hold commas and line breaks.
 */
import { SondageError } from '../errors.js';

/**
 * The rows of a result file, the header row first: each value its text, NULL undefined.
 * @example parseAthenaCsv('"a","b"\n"x",\n') // [['a', 'b'], ['x', undefined]]
 */
export function parseAthenaCsv(text: string, file = 'Athena result file'): (string | undefined)[][] {
  const rows: (string | undefined)[][] = [];
  let row: (string | undefined)[] = [];
  let i = 0;
  const n = text.length;
  if (n === 0) return rows;
  for (;;) {
    let value: string | undefined;
    if (text.charCodeAt(i) === 34 /* " */) {
      let out = '';
      let from = ++i;
      for (;;) {
        const q = text.indexOf('"', from);
        if (q < 0) throw new SondageError(`${file}: a quoted value opened in row ${rows.length + 1} is never closed`);
        if (text.charCodeAt(q + 1) === 34) {
          out += text.slice(from, q + 1);
          from = q + 2;
          continue;
        }
        out += text.slice(from, q);
        i = q + 1;
        break;
      }
      value = out;
    } else {
      // Unquoted: NULL when empty (Athena quotes every value it writes), else the text as it stands.
      let end = i;
      while (end < n && text.charCodeAt(end) !== 44 && text.charCodeAt(end) !== 10 && text.charCodeAt(end) !== 13) end++;
      value = end === i ? undefined : text.slice(i, end);
      i = end;
    }
    row.push(value);
    const c = text.charCodeAt(i);
    if (c === 44 /* , */) {
      i++;
      continue;
    }
    if (c === 13 /* \r */) i++;
    if (i < n && text.charCodeAt(i) !== 10) throw new SondageError(`${file}: row ${rows.length + 1} has text after a quoted value`);
    rows.push(row);
    row = [];
    i++;
    if (i >= n) return rows;
  }
}
