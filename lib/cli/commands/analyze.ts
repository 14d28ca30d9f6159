import { resolve } from 'node:path';
import { analyzeLocal } from '../../analysis/analyzeLocal.js';
import { batteryNamed, batteryNames } from '../../batteries/index.js';
import { formatIssues, SondageError } from '../../errors.js';
import { loadRunContext } from '../../run/context.js';
import { refreshCampaignReadings } from '../../run/refreshCampaignReadings.js';
import { rereadNotices } from '../rereadNotices.js';
import type { CliArgs } from '../args.js';
import { unreadableExit } from '../readoutExit.js';
import { assertCampaignIn, writableDataDir } from '../dataDir.js';

/** `sondage analyze <campaign>`: the battery's analysis on what is collected; `--replies`: on replies collected elsewhere. */
export async function analyzeCommand(args: CliArgs): Promise<number> {
  if (args.replies !== undefined && args.out !== undefined) return analyzeRepliesCommand(args.replies, args.out, args.values['battery'], args.values['input']);
  const ctx = await loadRunContext(args.file, args.dataDir);
  // Nothing collected there (a --data-dir of another campaign): said, and no empty results written.
  await assertCampaignIn('analyze', ctx.dataDir, ctx.campaign.name, args.file);
  await writableDataDir(ctx.dataDir, args.dataDir, ctx.campaign, false);
  // Readings stored under an earlier design are read again first, as `run` does (no call is made).
  for (const line of rereadNotices(await refreshCampaignReadings(ctx, ctx.dataDir))) process.stdout.write(`${line}\n`);
  const analysis = await analyzeLocal(ctx, ctx.dataDir);
  if (analysis.excluded.length > 0) process.stderr.write(`not analysed: ${analysis.excluded.join(', ')} (stored, but no longer in the campaign file)\n`);
  process.stdout.write(`${analysis.table}\n`);
  process.stdout.write(`results: ${resolve(ctx.dataDir, 'campaigns', ctx.campaign.name, 'results')}\n`);
  return unreadableExit(analysis.readouts);
}

/** Exit code 1 when rows were rejected (the results then cover the valid rows only). */
async function analyzeRepliesCommand(replies: string, out: string, batteryArg: unknown, inputArgs: unknown): Promise<number> {
  if (typeof batteryArg !== 'string') {
    throw new SondageError(`sondage analyze --replies: name the battery the rows belong to with --battery (${batteryNames().join(', ')})`);
  }
  const battery = batteryNamed(batteryArg);
  if (!battery) throw new SondageError(`sondage analyze: --battery ${batteryArg} is not a known battery; use one of ${batteryNames().join(', ')}`);
  const { analyzeReplies, ISSUES_FILE } = await import('../../analysis/analyzeReplies.js');
  const result = await analyzeReplies(battery, { replies, out, inputs: parseInputs(inputArgs) });
  for (const w of result.warnings) process.stderr.write(`warning: ${w}\n`);
  const s = result.summary;
  if (result.issues.length > 0) {
    const shown = result.issues.slice(0, MAX_SHOWN);
    process.stderr.write(`${formatIssues(shown)}\n`);
    if (result.issues.length > shown.length) process.stderr.write(`… and ${result.issues.length - shown.length} more\n`);
    const rejected = s['rejected'] ?? result.issues.length;
    process.stderr.write(`${rejected} row${rejected === 1 ? '' : 's'} rejected; all are listed in ${resolve(out, ISSUES_FILE)}\n`);
  }
  process.stdout.write(`${result.table}\n`);
  process.stdout.write(`${battery.byo!.describe(s)}\n`);
  process.stdout.write(`results: ${resolve(out)}\n`);
  if (result.issues.length > 0) return 1;
  return unreadableExit(battery.analysis.readouts?.(result.results));
}

const MAX_SHOWN = 20;

/** `--input name=path`, repeatable, as a record; a malformed one is an error naming it. */
export function parseInputs(raw: unknown): Record<string, string> {
  const list = Array.isArray(raw) ? (raw as string[]) : typeof raw === 'string' ? [raw] : [];
  const out: Record<string, string> = {};
  for (const arg of list) {
    const eq = arg.indexOf('=');
    if (eq <= 0 || eq === arg.length - 1) throw new SondageError(`sondage analyze: --input ${arg}: expected NAME=PATH, such as --input qa_pairs=pairs.jsonl`);
    const name = arg.slice(0, eq);
    if (out[name] !== undefined) throw new SondageError(`sondage analyze: --input ${name} is given twice`);
    out[name] = arg.slice(eq + 1);
  }
  return out;
}
