import { resolve } from 'node:path';
import { formatConsoleTable } from '../../analysis/index.js';
import { loadRunContext } from '../../run/loadRunContext.js';
import { analyzeLocal } from '../../run/runCampaign.js';
import type { CliArgs } from '../main.js';

export async function analyzeCommand(args: CliArgs): Promise<number> {
  const ctx = await loadRunContext(args.file, args.dataDir);
  const analysis = await analyzeLocal(ctx, ctx.dataDir);
  process.stdout.write(`${formatConsoleTable(analysis)}\n`);
  process.stdout.write(`results: ${resolve(ctx.dataDir, 'campaigns', ctx.campaign.name, 'results')}\n`);
  return 0;
}
