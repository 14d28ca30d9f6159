import { readdir, readFile, stat } from 'node:fs/promises';
import path from 'node:path';
import { StartExecutionCommand } from '@aws-sdk/client-sfn';
import { parseDocument } from 'yaml';
import { CAMPAIGN_FILE_NAME } from '../../config/pipeline.js';
import type { ExecutionInput } from '../../config/pipeline.js';
import type { Battery } from '../../battery/types.js';
import type { Campaign } from '../../design/campaign.js';
import { BudgetError, CampaignFileError, formatIssues, SondageError } from '../../errors.js';
import { loadRunContext } from '../../run/context.js';
import { checkGpuWeights } from '../../run/gpuChecks.js';
import { printDesignWarnings } from '../designWarnings.js';
import { planCampaign } from '../../run/planCampaign.js';
import { campaignPrefix } from '../../store/layout.js';
import { assertAws, awsClients, campaignExecutions, executionConsoleUrl, executionName, resolveStack } from '../aws.js';
import type { CliArgs } from '../args.js';
import { checkSameStack, stackRecordFile } from '../stackRecord.js';

/** One file to upload: where it is here and its key in the bucket. */
export interface InputFile {
  readonly local: string;
  readonly key: string;
  /** What is uploaded when it is not the file as it stands (the campaign file of a battery of one's own). */
  readonly body?: string;
}

/**
 * The campaign file as the pipeline reads it: a battery of one's own named by its name instead of
 * its path or package, since the functions carry it compiled in (`-c sondage:batteries`, docs/aws.md)
 * and have neither the battery's folder nor a TypeScript loader. The rest of the file, comments
 * included, is unchanged.
 */
export async function uploadedCampaignText(campaign: Campaign): Promise<string | undefined> {
  if (!campaign.battery_source) return undefined;
  const doc = parseDocument(await readFile(campaign.file, 'utf8'));
  doc.set('battery', campaign.battery);
  return doc.toString();
}

/** `campaigns/<c>/input/`: the plan Lambda reads the campaign from here (lib/config/pipeline.ts). */
export function inputPrefix(campaign: string): string {
  return `${campaignPrefix(campaign)}input/`;
}

async function filesUnder(entry: string): Promise<string[]> {
  if (!(await stat(entry)).isDirectory()) return [entry];
  const out: string[] = [];
  for (const name of (await readdir(entry)).sort()) out.push(...(await filesUnder(path.join(entry, name))));
  return out;
}

/**
 * The campaign file and every file (or folder) it names, with their keys: the campaign as
 * `input/campaign.yaml`, the others at their paths relative to the campaign file, so the plan
 * Lambda resolves the same relative paths. The named files are the loader's resolved design paths,
 * not a guess at the YAML. A file outside the campaign's folder has no such key and is refused.
 */
export async function campaignInputFiles(campaign: Campaign, battery: Battery): Promise<InputFile[]> {
  const folder = path.dirname(campaign.file);
  const prefix = inputPrefix(campaign.name);
  const rewritten = await uploadedCampaignText(campaign);
  const files: InputFile[] = [{ local: campaign.file, key: `${prefix}${CAMPAIGN_FILE_NAME}`, ...(rewritten === undefined ? {} : { body: rewritten }) }];
  // The battery names the files its design reads, relative to the campaign file.
  const named = battery.dataFiles(campaign.design as never).map(({ field, file }) => [field, path.resolve(folder, file)] as const);
  for (const [field, entry] of named) {
    for (const local of await filesUnder(entry)) {
      const relative = path.relative(folder, local);
      if (relative.startsWith('..') || path.isAbsolute(relative)) {
        const issue = {
          file: campaign.file,
          path: field,
          message: `${local} is outside the campaign's folder ${folder}; the pipeline reads named files at the same relative paths beside the uploaded campaign, so move it into that folder (or a subfolder) and name it relative to the campaign file`,
        };
        throw new CampaignFileError(formatIssues([issue]), [issue]);
      }
      const key = `${prefix}${relative.split(path.sep).join('/')}`;
      if (files.some((f) => f.key === key && f.local !== local)) {
        const issue = { file: campaign.file, path: field, message: `${relative} would overwrite the uploaded campaign file (${CAMPAIGN_FILE_NAME}); rename it` };
        throw new CampaignFileError(formatIssues([issue]), [issue]);
      }
      if (!files.some((f) => f.key === key)) files.push({ local, key });
    }
  }
  return files;
}

/**
 * `sondage start <campaign.yaml> --aws`: validates the campaign here (nothing is uploaded
 * when it fails), uploads it with the files it names, and starts the state machine. Starting again
 * after a stop is a new execution that resumes from the ledger; a second one while one runs is refused.
 * `--retry-failed` (ExecutionInput.retryFailed) asks again the items whose last attempt failed for good.
 */
export async function startCommand(args: CliArgs): Promise<number> {
  assertAws('start', args.aws);
  const ctx = await loadRunContext(args.file);
  printDesignWarnings(ctx);
  const { campaign } = ctx;
  const plan = planCampaign(ctx);
  process.stdout.write(
    `${campaign.name} (${plan.battery}): ${plan.totals.items} requests in ${plan.partitions.length} model × language partitions, ` +
      `expected $${plan.totals.costUsd.toFixed(4)} of budget $${campaign.budget_usd}\n`,
  );
  if (plan.totals.costUsd > campaign.budget_usd && !args.allowPartial) {
    throw new BudgetError(
      `${campaign.name}: the expected cost $${plan.totals.costUsd.toFixed(4)} exceeds budget_usd $${campaign.budget_usd}; ` +
        'raise budget_usd, shrink the design, or pass --allow-partial to run until the cap',
    );
  }
  const files = await campaignInputFiles(campaign, ctx.battery);
  const bodies = await Promise.all(files.map(async (f) => ({ ...f, body: f.body ?? (await readFile(f.local)) })));

  const clients = awsClients(await resolveStack({ values: args.values }));
  try {
    const { stateMachineArn, bucket } = clients.stack;
    // The retained resources of an earlier deployment are not these: refuse rather than pay again.
    await checkSameStack(stackRecordFile(args.file), campaign.name, clients.stack);
    // Two executions would work the same items; the ledger keeps the money safe, not the time.
    const running = await campaignExecutions(clients.sfn, stateMachineArn, campaign.name, { status: 'RUNNING' });
    if (running.length > 0) {
      process.stderr.write(
        `${campaign.name} is already running: ${running.map((e) => e.executionArn).join(', ')}\n` +
          `watch it with \`sondage status ${args.file} --aws\`, or \`sondage stop ${args.file} --aws\` first to start again\n`,
      );
      return 1;
    }
    // A GPU model's weights must be in the bucket: refused here, before an execution starts (its plan checks again).
    await checkGpuWeights(ctx, clients.blobs, `s3://${bucket}`);

    for (const f of bodies) await clients.blobs.put(f.key, f.body);
    // The input folder is exactly what this campaign names: a file an earlier upload named and
    // this one does not must not be read by the plan.
    const keep = new Set(files.map((f) => f.key));
    const stale = (await clients.blobs.list(inputPrefix(campaign.name))).filter((k) => !keep.has(k));
    for (const key of stale) await clients.blobs.delete(key);
    process.stdout.write(`uploaded ${files.length} file(s) to s3://${bucket}/${inputPrefix(campaign.name)}${stale.length ? ` (removed ${stale.length} no longer named)` : ''}\n`);

    // Absent unless asked: the state machine defaults it to false (an input from an older CLI too).
    const retryFailed = args.values['retry-failed'] === true;
    // --allow-partial rides along: the plan checks the budget again, and refuses without it.
    const { allowPartial } = args;
    const input: ExecutionInput = { campaign: campaign.name, ...(retryFailed ? { retryFailed } : {}), ...(allowPartial ? { allowPartial } : {}) };
    const name = executionName(campaign.name);
    const started = await clients.sfn.send(new StartExecutionCommand({ stateMachineArn, name, input: JSON.stringify(input) })).catch((err: unknown) => {
      // Same campaign, same millisecond: another start won the race; one execution is what we want.
      if ((err as { name?: string }).name === 'ExecutionAlreadyExists') {
        throw new SondageError(`${campaign.name}: another start of this campaign began at the same moment (${name}); see \`sondage status ${args.file} --aws\``, { cause: err });
      }
      throw err;
    });
    const arn = started.executionArn ?? name;
    process.stdout.write(
      `started ${arn}${retryFailed ? ' (asking again the items that failed for good)' : ''}${allowPartial ? ' (running until the budget cap)' : ''}\n` +
        `watch: sondage status ${args.file} --aws\n` +
        `       ${executionConsoleUrl(arn)}\n` +
        `stop:  sondage stop ${args.file} --aws (what was collected stays; start again to resume)\n`,
    );
    return 0;
  } finally {
    await clients.close();
  }
}
