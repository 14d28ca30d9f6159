import { loadRunContext } from '../../run/loadRunContext.js';
import { formatPlan, planCampaign } from '../../run/planCampaign.js';
import type { CliArgs } from '../main.js';

export async function planCommand(args: CliArgs): Promise<number> {
  const ctx = await loadRunContext(args.file, args.dataDir);
  const plan = planCampaign(ctx.campaign, ctx.battery);
  process.stdout.write(`${ctx.campaign.name} (${plan.battery}): ${plan.totals.items} requests in ${plan.partitions.length} model × language partitions\n`);
  process.stdout.write(`${formatPlan(plan)}\n`);
  if (plan.totals.costUsd > plan.budgetUsd) {
    process.stdout.write('the expected cost exceeds the budget: `sondage run` will refuse to start without --allow-partial\n');
  }
  return 0;
}
