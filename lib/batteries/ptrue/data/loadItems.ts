import { extname } from 'node:path';
import { CampaignFileError, formatIssues, readTextFile } from '../../../api/battery.js';
import type { BaseItem } from '../types.js';
import { parseItems, type ItemsFormat, type ParseItemsOptions } from './parseItems.js';

/** The format of an items file by its extension: `.jsonl`/`.ndjson` or `.csv`. */
export function itemsFormat(file: string): ItemsFormat | null {
  const ext = extname(file).toLowerCase();
  return ext === '.jsonl' || ext === '.ndjson' ? 'jsonl' : ext === '.csv' ? 'csv' : null;
}

/**
 * Reads and checks an items file (see parseItems).
 * @throws CampaignFileError naming the file for a missing file, an unknown extension, or bad items.
 */
export async function loadItems(file: string, opts: ParseItemsOptions, shownAs: string = file): Promise<BaseItem[]> {
  const format = itemsFormat(file);
  if (!format) throw new CampaignFileError(`${shownAs}: unsupported items file; expected .jsonl, .ndjson or .csv`);
  let text: string;
  try {
    text = await readTextFile(file, 'items file', `items as ${format === 'csv' ? 'CSV' : 'JSONL'}`);
  } catch (err) {
    if (!(err instanceof CampaignFileError)) throw err;
    const issues = err.issues.map((i) => ({ ...i, file: shownAs }));
    throw new CampaignFileError(formatIssues(issues), issues, { cause: err });
  }
  return parseItems(text, shownAs, format, opts);
}
