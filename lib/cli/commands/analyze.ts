import { resolve } from 'node:path';
import { formatConsoleTable } from '../../batteries/far6/analysis/index.js';
import { formatIssues } from '../../errors.js';
import { loadRunContext } from '../../run/loadRunContext.js';
import { analyzeLocal } from '../../run/runCampaign.js';
import type { CliArgs } from '../main.js';

export async function analyzeCommand(args: CliArgs): Promise<number> {
  if (args.replies !== undefined && args.out !== undefined) return analyzeRepliesCommand(args.replies, args.out);
  const ctx = await loadRunContext(args.file, args.dataDir);
  const analysis = await analyzeLocal(ctx, ctx.dataDir);
  process.stdout.write(`${formatConsoleTable(analysis)}\n`);
  process.stdout.write(`results: ${resolve(ctx.dataDir, 'campaigns', ctx.campaign.name, 'results')}\n`);
  return 0;
}

/** Exit code 1 when rows were rejected (the results then cover the valid rows only). */
async function analyzeRepliesCommand(replies: string, out: string): Promise<number> {
  const { analyzeReplies, ISSUES_FILE } = await import('../../batteries/far6/byo/index.js');
  const result = await analyzeReplies({ replies, out });
  for (const w of result.warnings) process.stderr.write(`warning: ${w}\n`);
  const s = result.summary;
  if (result.issues.length > 0) {
    const shown = result.issues.slice(0, MAX_SHOWN);
    process.stderr.write(`${formatIssues(shown)}\n`);
    if (result.issues.length > shown.length) process.stderr.write(`… and ${result.issues.length - shown.length} more\n`);
    process.stderr.write(`${s.rejected} row${s.rejected === 1 ? '' : 's'} rejected; all are listed in ${resolve(out, ISSUES_FILE)}\n`);
  }
  process.stdout.write(`${formatConsoleTable(result.analysis)}\n`);
  process.stdout.write(
    `replies: ${s.accepted} of ${s.rows} rows from ${s.files} file${s.files === 1 ? '' : 's'}; ` +
      `readings: ${s.readingsGiven} given, ${s.readingsComputed} by the token rule\n`,
  );
  process.stdout.write(`results: ${resolve(out)}\n`);
  return result.issues.length > 0 ? 1 : 0;
}

const MAX_SHOWN = 20;
