import { resolve } from 'node:path';
import { analyzeLocal } from '../../analysis/analyzeLocal.js';
import { batteryNamed, batteryNames } from '../../batteries/index.js';
import { isBadRow, summarizeIssues } from '../../battery/byoIssues.js';
import { SondageError } from '../../errors.js';
import { loadRunContext } from '../../run/context.js';
import { refreshCampaignReadings } from '../../run/refreshCampaignReadings.js';
import { rereadNotices } from '../rereadNotices.js';
import { shownPath } from '../shownPath.js';
import type { CliArgs } from '../args.js';
import { unreadableExit } from '../readoutExit.js';
import { assertCampaignIn, writableDataDir } from '../dataDir.js';

/** `sondage analyze <campaign>`: the battery's analysis on what is collected; `--replies`: on replies collected elsewhere. */
export async function analyzeCommand(args: CliArgs): Promise<number> {
  if (args.replies !== undefined && args.out !== undefined) return analyzeRepliesCommand(args, args.replies, args.out);
  // These shape an import of replies brought from elsewhere; on a campaign they would do nothing, silently.
  const replyOnly = ['battery', 'input', 'drop-bad-rows', 'draws', 'seed', 'full-precision'].filter((f) => args.values[f] !== undefined && args.values[f] !== false);
  if (replyOnly.length > 0) throw new SondageError(`sondage analyze: ${replyOnly.map((f) => `--${f}`).join(', ')} go${replyOnly.length === 1 ? 'es' : ''} with --replies and --out; a campaign's analysis takes its settings from the campaign file`);
  const ctx = await loadRunContext(args.file, args.dataDir);
  // Nothing collected there (a --data-dir of another campaign): said, and no empty results written.
  await assertCampaignIn('analyze', ctx.dataDir, ctx.campaign.name, args.file);
  await writableDataDir(ctx.dataDir, args.dataDir, ctx.campaign, false);
  // Readings stored under an earlier design are read again first, as `run` does (no call is made).
  for (const line of rereadNotices(await refreshCampaignReadings(ctx, ctx.dataDir))) process.stdout.write(`${line}\n`);
  const analysis = await analyzeLocal(ctx, ctx.dataDir);
  if (analysis.excluded.length > 0) process.stderr.write(`not analysed: ${analysis.excluded.join(', ')} (stored, but no longer in the campaign file)\n`);
  process.stdout.write(`${analysis.table}\n`);
  process.stdout.write(`results: ${shownPath(resolve(ctx.dataDir, 'campaigns', ctx.campaign.name, 'results'))}\n`);
  return unreadableExit(analysis.readouts);
}

/**
 * Exit code 1 when the input is refused (a bad row, without --drop-bad-rows; nothing usable): a
 * summary of the problems by kind, the full list in import_issues.csv. Rows left out on request
 * and cells missing against the design are notices: the results are written, exit 0.
 */
async function analyzeRepliesCommand(args: CliArgs, replies: string, out: string): Promise<number> {
  const batteryArg = args.values['battery'];
  if (typeof batteryArg !== 'string') {
    throw new SondageError(`sondage analyze --replies: name the battery the rows belong to with --battery (${batteryNames().join(', ')})`);
  }
  const battery = batteryNamed(batteryArg);
  if (!battery) throw new SondageError(`sondage analyze: --battery ${batteryArg} is not a known battery; use one of ${batteryNames().join(', ')}`);
  const { analyzeReplies, ISSUES_FILE, MANIFEST_FILE } = await import('../../analysis/analyzeReplies.js');
  const result = await analyzeReplies(battery, {
    replies,
    out,
    inputs: parseInputs(args.values['input']),
    dropBadRows: args.values['drop-bad-rows'] === true,
    fullPrecision: args.values['full-precision'] === true,
    bootstrap: { ...intFlag(args.values['draws'], 'draws'), ...intFlag(args.values['seed'], 'seed') },
  });
  for (const w of result.warnings) process.stderr.write(`warning: ${w}\n`);
  const issuesAt = shownPath(resolve(out, ISSUES_FILE));
  const bad = result.issues.filter(isBadRow);
  const notices = result.issues.length - bad.length;
  if (result.issues.length > 0) process.stderr.write(`${summarizeIssues(result.issues).join('\n')}\n`);
  if (result.refused) {
    process.stderr.write(
      `refused: ${bad.length > 0 ? `${bad.length.toLocaleString('en-US')} problem${bad.length === 1 ? '' : 's'} in the rows` : 'no usable row'}; nothing analysed. ` +
        `All are listed in ${issuesAt}${bad.length > 0 && result.summary['accepted'] !== 0 ? '; --drop-bad-rows analyses the valid rows and leaves the others out' : ''}\n`,
    );
    return 1;
  }
  if (bad.length > 0) process.stderr.write(`${bad.length.toLocaleString('en-US')} problem${bad.length === 1 ? '' : 's'}: those rows are left out (--drop-bad-rows); listed in ${issuesAt}\n`);
  if (notices > 0) process.stderr.write(`notice: ${notices.toLocaleString('en-US')} cell${notices === 1 ? '' : 's'} of the design the rows claim ${notices === 1 ? 'has' : 'have'} no row; analysed as they stand; listed in ${issuesAt}\n`);
  process.stdout.write(`${result.table}\n`);
  process.stdout.write(`${battery.byo!.describe(result.summary)}\n`);
  if (Object.keys(result.settings).length > 0) process.stdout.write(`settings: ${Object.entries(result.settings).map(([k, v]) => `${k} ${v}`).join(', ')} (${MANIFEST_FILE})\n`);
  process.stdout.write(`results: ${shownPath(out)}\n`);
  return unreadableExit(battery.analysis.readouts?.(result.results));
}

/** `--draws 500`, `--seed 7`: whole numbers, or an error naming the flag. */
function intFlag(raw: unknown, name: 'draws' | 'seed'): { draws?: number; seed?: number } {
  if (raw === undefined) return {};
  const text = String(raw).trim();
  if (!/^-?\d+$/.test(text)) throw new SondageError(`sondage analyze: --${name} ${JSON.stringify(raw)}: expected ${name === 'draws' ? 'a whole number of bootstrap draws' : 'an integer seed'}`);
  return { [name]: Number(text) };
}

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
