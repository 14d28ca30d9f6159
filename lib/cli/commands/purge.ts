import { stat } from 'node:fs/promises';
import { parseArgs } from 'node:util';
import { ATHENA_RESULTS_EXPIRY_DAYS, SCRATCH_EXPIRY_DAYS } from '../../config/index.js';
import { FUNCTION_SIZING } from '../../config/sizing.js';
import { loadCampaign } from '../../design/loadCampaign.js';
import { SondageError } from '../../errors.js';
import { EmbeddedLedgerRows } from '../../store/EmbeddedLedgerRows.js';
import { CampaignBusyError } from '../../store/errors.js';
import { isSafeSegment } from '../../store/layout.js';
import { LocalCampaignFiles } from '../../store/LocalCampaignFiles.js';
import { formatCounts, purgeCampaign, surveyTotal } from '../../store/purge.js';
import type { CampaignGuard, PurgeSource, PurgeSurvey } from '../../store/purge.js';
import { runLockGuard } from '../../store/runLockGuard.js';
import { commandHelp } from '../help.js';
import { shownPath } from '../shownPath.js';

/** `sondage purge --help` (lib/cli/help.ts). */
export const PURGE_USAGE = commandHelp('purge');

/** How the command talks to the person at the terminal (tests pass their own). */
export interface PurgeIo {
  /** True when a question can be asked (standard input is a terminal). */
  readonly interactive: boolean;
  ask(question: string): Promise<string>;
}

const terminal: PurgeIo = {
  interactive: process.stdin.isTTY === true,
  async ask(question) {
    const { createInterface } = await import('node:readline/promises');
    const rl = createInterface({ input: process.stdin, output: process.stdout });
    try {
      return await rl.question(question);
    } finally {
      rl.close();
    }
  },
};

const OPTIONS = {
  'data-dir': { type: 'string' },
  yes: { type: 'boolean', default: false },
  aws: { type: 'boolean', default: false },
  help: { type: 'boolean', short: 'h', default: false },
  outputs: { type: 'string' },
  bucket: { type: 'string' },
  'state-machine': { type: 'string' },
  'ledger-table': { type: 'string' },
  'budget-table': { type: 'string' },
} as const;

/** The campaign named on the command line: a file (its name and data_dir) or a bare name. */
async function resolveCampaign(arg: string): Promise<{ name: string; dataDir?: string }> {
  const isFile = await stat(arg).then(
    (s) => s.isFile(),
    () => false,
  );
  if (isFile || /\.ya?ml$/i.test(arg)) {
    const campaign = await loadCampaign(arg);
    return { name: campaign.name, dataDir: campaign.data_dir };
  }
  if (!isSafeSegment(arg)) {
    throw new SondageError(
      `sondage purge: ${JSON.stringify(arg)} is neither a campaign file nor a campaign name; ` +
        "a name has only letters, digits, '.', '_' and '-' (it names the campaign's folder on disk and its prefix in S3)",
    );
  }
  return { name: arg };
}

/**
 * `sondage purge <campaign> [--aws]`: shows what the campaign holds, asks, deletes (lib/store/purge.ts
 * and its sources). Exit 0 when purged, 1 when refused, declined or failed; nothing is deleted
 * before the answer.
 */
export async function purgeCommand(argv: readonly string[], io: PurgeIo = terminal): Promise<number> {
  let parsed;
  try {
    parsed = parseArgs({ args: [...argv], allowPositionals: true, options: OPTIONS });
  } catch (err) {
    throw new SondageError(`sondage purge: ${(err as Error).message}\n\n${PURGE_USAGE}`);
  }
  const { values, positionals } = parsed;
  if (values.help) {
    process.stdout.write(PURGE_USAGE);
    return 0;
  }
  if (positionals.length !== 1) {
    throw new SondageError(`sondage purge: ${positionals.length === 0 ? 'missing the campaign name or file' : `one campaign at a time (got ${positionals.join(', ')})`}\n\n${PURGE_USAGE}`);
  }
  const target = await resolveCampaign(positionals[0]!);
  const campaign = target.name;

  let sources: PurgeSource[];
  let guard: CampaignGuard;
  let after = '';
  let close = async (): Promise<void> => {};
  if (values.aws) {
    if (values['data-dir'] !== undefined) throw new SondageError('sondage purge: --data-dir is for this machine; with --aws the data is in the stack');
    ({ sources, guard, close } = await awsTargets(campaign, values));
    after =
      `Step Functions keeps the executions' history; Athena query results (athena-results/) and shard manifests (scratch/) are not ` +
      `kept per campaign and expire after ${ATHENA_RESULTS_EXPIRY_DAYS} and ${SCRATCH_EXPIRY_DAYS} days.\n`;
  } else {
    // `--data-dir=` (an unset variable in a script) would otherwise purge from the working directory.
    if (values['data-dir'] === '') throw new SondageError("sondage purge: --data-dir is empty; give a folder, or leave the flag out to use the campaign's data_dir");
    const given = values['data-dir'] ?? target.dataDir;
    // Relative to the working directory, so the survey and its messages name no home folder.
    const dataDir = given === undefined ? undefined : shownPath(given);
    if (dataDir === undefined) {
      throw new SondageError(`sondage purge ${campaign}: give the campaign file, or --data-dir with the name, to find its data here (or --aws for the deployed stack)`);
    }
    sources = [new LocalCampaignFiles(dataDir), new EmbeddedLedgerRows(dataDir)];
    guard = runLockGuard(dataDir, campaign);
  }

  let last = Date.now();
  try {
    const outcome = await purgeCampaign({
      campaign,
      sources,
      guard,
      confirm: async (surveys) => confirm(campaign, values.aws ? 'the deployed stack' : 'this machine', surveys, values.yes, io),
      // Large campaigns take minutes on AWS (one write per ledger row): a line every few seconds.
      onProgress: (survey, n) => {
        if (Date.now() - last < 5000) return;
        last = Date.now();
        process.stderr.write(`  ${survey.where}: ${n.toLocaleString('en-US')} of ${surveyTotal(survey).toLocaleString('en-US')} deleted…\n`);
      },
    });
    if (!outcome.deleted) {
      process.stdout.write('nothing deleted\n');
      return 1;
    }
    process.stdout.write(`purged campaign ${JSON.stringify(campaign)}:\n`);
    outcome.surveys.forEach((s, i) => process.stdout.write(`${formatCounts(s.where, outcome.deleted![i] ?? []).join('\n')}\n`));
    process.stdout.write(after);
    return 0;
  } finally {
    await close();
  }
}

/** Shows the surveys and gets the answer: --yes, or y/yes at a terminal. */
async function confirm(name: string, where: string, surveys: readonly PurgeSurvey[], yes: boolean, terminalIo: PurgeIo): Promise<boolean> {
  const lines = surveys.flatMap((s) => formatCounts(s.where, s.counts));
  process.stdout.write(`sondage purge ${name} (${where}) deletes:\n${lines.join('\n')}\n`);
  if (yes) return true;
  if (!terminalIo.interactive) {
    throw new SondageError('sondage purge: nothing deleted: standard input is not a terminal, so there is no one to ask; add --yes to purge without the question');
  }
  const answer = await terminalIo.ask('Delete all of it? It cannot be undone. [y/N] ');
  return /^\s*y(es)?\s*$/i.test(answer);
}

/** The stack's sources (S3 versions, DynamoDB items) and a guard over the campaign's executions. */
async function awsTargets(
  campaign: string,
  values: Readonly<Record<string, string | boolean | undefined>>,
): Promise<{ sources: PurgeSource[]; guard: CampaignGuard; close: () => Promise<void> }> {
  // Loaded here so the local purge never loads the AWS SDK.
  const { awsClients, campaignExecutions, resolveStack } = await import('../aws.js');
  const { DynamoDBClient } = await import('@aws-sdk/client-dynamodb');
  const { S3CampaignObjects } = await import('../../store/S3CampaignObjects.js');
  const { DynamoCampaignItems } = await import('../../store/DynamoCampaignItems.js');
  const clients = awsClients(await resolveStack({ values }));
  const dynamo = new DynamoDBClient({});
  const { stack } = clients;
  // Workers invoked before a stop run on to their end (the Lambda timeout) and commit what they got.
  const graceMs = FUNCTION_SIZING.worker.timeoutSeconds * 1000;
  const check = async (): Promise<void> => {
    const [running] = await campaignExecutions(clients.sfn, stack.stateMachineArn, campaign, { status: 'RUNNING', limit: 1 });
    if (running) {
      throw new CampaignBusyError(
        `nothing purged: campaign ${JSON.stringify(campaign)} has a running execution (${running.name}, started ${running.startDate?.toISOString() ?? '?'}); ` +
          `stop it with \`sondage stop ${campaign} --aws\` and purge again once its workers are done (up to ${graceMs / 60_000} minutes)`,
      );
    }
    const [latest] = await campaignExecutions(clients.sfn, stack.stateMachineArn, campaign, { limit: 1 });
    const ended = latest?.stopDate?.getTime();
    if (latest && latest.status !== 'SUCCEEDED' && ended !== undefined && Date.now() - ended < graceMs) {
      throw new CampaignBusyError(
        `nothing purged: the last execution of ${JSON.stringify(campaign)} (${latest.name}) ended ${latest.status} at ${new Date(ended).toISOString()}, ` +
          `and workers it had invoked may still be writing until ${new Date(ended + graceMs).toISOString()}; purge again after that`,
      );
    }
  };
  return {
    sources: [
      new S3CampaignObjects({ bucket: stack.bucket, client: clients.s3 }),
      new DynamoCampaignItems({ ledgerTable: stack.ledgerTable, budgetTable: stack.budgetTable, client: dynamo }),
    ],
    guard: { enter: check, check, leave: async () => {} },
    close: async () => {
      dynamo.destroy();
      await clients.close();
    },
  };
}
