import { readFile, stat } from 'node:fs/promises';
import { extname } from 'node:path';
import { CampaignFileError } from '../../../api/battery.js';
import { analyzePtrueRows, type PtrueResults } from '../analysis/analyzeRows.js';
import { checkByoRows, parseByoRows } from './parseByoRows.js';

/**
 * Reads BYO rows from a .jsonl/.ndjson or .csv file and runs the same estimators as a campaign.
 * @example const results = await analyzeByoFile('rows.csv', { draws: 200, seed: 1 })
 */
export async function analyzeByoFile(file: string, opts: { readonly draws: number; readonly seed: number; readonly simulated?: boolean }): Promise<PtrueResults> {
  const { text, format } = await readByoText(file);
  return analyzePtrueRows(parseByoRows(text, file, format), { draws: opts.draws, seed: opts.seed, simulated: opts.simulated ?? false, byo: true });
}

/**
 * The rows of a file and every problem in them, without stopping at one (checkByoRows); a file of
 * another type or one that cannot be read is a CampaignFileError.
 */
export async function readByoFile(file: string): Promise<ReturnType<typeof checkByoRows>> {
  const { text, format } = await readByoText(file);
  return checkByoRows(text, file, format);
}

async function readByoText(file: string): Promise<{ text: string; format: 'csv' | 'jsonl' }> {
  // Checked before reading: a named pipe would block readFile forever, and a folder would be
  // reported as a file of the wrong type (P(True) reads one file; `format` says so).
  const info = await stat(file).catch(() => undefined);
  if (info?.isDirectory()) throw new CampaignFileError(`${file}: is a folder; P(True) reads its rows from one file (.jsonl, .ndjson or .csv)`);
  if (info && !info.isFile()) throw new CampaignFileError(`${file}: not a regular file (a pipe or a device); expected rows as .jsonl, .ndjson or .csv`);
  const ext = extname(file).toLowerCase();
  const format = ext === '.csv' ? 'csv' : ext === '.jsonl' || ext === '.ndjson' ? 'jsonl' : null;
  if (!format) throw new CampaignFileError(`${file}: unsupported file type; expected .jsonl, .ndjson or .csv`);
  let text: string;
  try {
    text = await readFile(file, 'utf8');
  } catch (err) {
    throw new CampaignFileError(`${file}: cannot read the rows (${(err as NodeJS.ErrnoException).code ?? 'error'})`, [], { cause: err });
  }
  return { text, format };
}
