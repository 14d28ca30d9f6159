import { loadRunContext } from '../../run/context.js';
import { printDesignWarnings } from '../designWarnings.js';
import { estimateAcrossLatencies, estimateAwsCost, formatAwsCost } from '../../run/awsCost.js';
import { estimateGpuCost, formatGpuCost } from '../../run/gpuCost.js';
import { formatPlan, planCampaign } from '../../run/planCampaign.js';
import type { CliArgs } from '../args.js';
import { deployedWorkerConcurrency, workerQuotaNote } from '../workerQuotaNote.js';

/** `sondage plan <campaign> [--aws]`: the inventory and its model cost; with --aws, what the AWS pipeline adds. */
export async function planCommand(args: CliArgs): Promise<number> {
  const ctx = await loadRunContext(args.file);
  printDesignWarnings(ctx);
  const plan = planCampaign(ctx);
  process.stdout.write(`${ctx.campaign.name} (${plan.battery}): ${plan.totals.items} requests in ${plan.partitions.length} model × language partitions\n`);
  process.stdout.write(`${formatPlan(plan)}\n`);
  if (plan.totals.costUsd > plan.budgetUsd) {
    process.stdout.write('the expected cost exceeds the budget: `sondage run` will refuse to start without --allow-partial\n');
  }
  if (args.aws) {
    process.stdout.write(`\nOn AWS (one execution of the deployed stack; the budget caps model calls only):\n${formatAwsCost(estimateAwsCost(plan, ctx), estimateAcrossLatencies(plan, ctx))}\n`);
    const gpu = estimateGpuCost(plan, ctx);
    if (gpu.lines.length > 0) process.stdout.write(`\nGPU models on AWS Batch (runs_on: gpu):\n${formatGpuCost(gpu)}\n`);
    process.stdout.write(`\n${workerQuotaNote(await deployedWorkerConcurrency(process.cwd()))}\n`);
  }
  return 0;
}
