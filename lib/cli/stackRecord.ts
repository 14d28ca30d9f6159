/**
 * Which deployment a campaign was started on, kept beside the campaign file
 * (`sondage.aws.campaigns.json`): the bucket and the ledger and budget tables. `cdk destroy` keeps
 * them (RemovalPolicy RETAIN, with every reply and the spend) and a later `cdk deploy` creates new,
 * empty ones under new generated names; `sondage start --aws` against those would ask, and pay
 * for, every item again. So a start whose stack names other resources than the campaign's first
 * start refuses, naming the retained ones. It guards the project folder it is kept in, not a start
 * from another machine.
 */
import { readFile, writeFile } from 'node:fs/promises';
import { dirname, join } from 'node:path';
import { SondageError } from '../errors.js';

export const STACK_RECORD_FILE = 'sondage.aws.campaigns.json';

/** The retained resources of a deployment, as the stack outputs name them. */
export interface StackResources {
  readonly bucket: string;
  readonly ledgerTable: string;
  readonly budgetTable: string;
}

const FIELDS = ['bucket', 'ledgerTable', 'budgetTable'] as const;

/** The record file for a campaign file: beside it. */
export function stackRecordFile(campaignFile: string): string {
  return join(dirname(campaignFile), STACK_RECORD_FILE);
}

async function readRecord(file: string): Promise<Record<string, StackResources>> {
  let text: string;
  try {
    text = await readFile(file, 'utf8');
  } catch {
    return {};
  }
  let parsed: unknown;
  try {
    parsed = JSON.parse(text);
  } catch {
    throw new SondageError(`${file}: not JSON; expected what sondage start --aws writes, {"<campaign>": {"bucket": …, "ledgerTable": …, "budgetTable": …}}`);
  }
  if (typeof parsed !== 'object' || parsed === null || Array.isArray(parsed)) throw new SondageError(`${file}: expected an object of campaign name → {bucket, ledgerTable, budgetTable}`);
  return parsed as Record<string, StackResources>;
}

/**
 * Refuses when `campaign` was started before on a deployment whose bucket or tables `now` does not
 * name; records `now` at a campaign's first start.
 * @example await checkSameStack(stackRecordFile(file), 'demo', { bucket, ledgerTable, budgetTable });
 */
export async function checkSameStack(file: string, campaign: string, now: StackResources): Promise<void> {
  const record = await readRecord(file);
  const before = record[campaign];
  if (before === undefined) {
    record[campaign] = { bucket: now.bucket, ledgerTable: now.ledgerTable, budgetTable: now.budgetTable };
    await writeFile(file, `${JSON.stringify(record, null, 2)}\n`);
    return;
  }
  const changed = FIELDS.filter((f) => before[f] !== now[f]);
  if (changed.length === 0) return;
  throw new SondageError(
    `${campaign} was started on bucket ${before.bucket}, ledger table ${before.ledgerTable} and budget table ${before.budgetTable} (recorded in ${file}); ` +
      `the stack now names ${changed.map((f) => `${f} ${now[f]}`).join(', ')}. A \`cdk destroy\` keeps the old ones (with every reply and the spend) ` +
      'and a new deploy creates empty ones: starting here would ask, and pay for, every item again. Nothing was started. To go on with what was collected, ' +
      'destroy the new stack and adopt the retained resources with `npx cdk import` (it asks for each one\'s name: those above); ' +
      `to start over on the new stack, delete the "${campaign}" entry from ${file}`,
  );
}
