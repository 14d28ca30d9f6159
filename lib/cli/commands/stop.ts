import { readFile, stat } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { SondageError } from '../../errors.js';
import type { StoppedBatch } from '../../run/stopCampaign.js';
import { isProcessAlive } from '../../store/lock.js';
import { runLockKey } from '../../store/layout.js';
import type { Ledger } from '../../store/types.js';
import type { CliArgs } from '../args.js';
import { shownPath } from '../shownPath.js';
import { localDataDir, resolveTarget } from './status.js';
import type { CampaignTarget } from './status.js';

/** The error name a stopped execution carries, so `status` tells a stop from a failure. */
export const STOP_ERROR = 'sondage.Stopped';

/**
 * `sondage stop <campaign> [--aws]`. AWS: stops the campaign's running executions. Local:
 * asks the run holding the campaign's lock to stop as Ctrl-C does (calls in flight finish and are
 * committed). Both then cancel the campaign's open provider batches. Nothing collected is lost:
 * committed parts stay, a cancelled batch's partial results are stored by the next run, and the
 * next start or run resumes from the ledger. Exit 1 when a batch could not be cancelled.
 */
export async function stopCommand(args: CliArgs): Promise<number> {
  const target = await resolveTarget(args.file);
  const allCancelled = args.aws ? await stopOnAws(args, target) : await stopLocal(localDataDir('stop', target, args.dataDir), target);
  const file = target.campaign ? args.file : '<campaign.yaml>';
  const again = args.aws ? `sondage start ${file} --aws` : `sondage run ${file}`;
  process.stdout.write(
    'nothing collected is lost: committed replies, the ledger and what cancelled batches answered stay; ' +
      `\`${again}\` resumes with the items still missing\n`,
  );
  return allCancelled ? 0 : 1;
}

async function stopOnAws(args: CliArgs, target: CampaignTarget): Promise<boolean> {
  // Loaded here so the local stop never loads the AWS SDK.
  const { awsClients, campaignExecutions, resolveGpuQueues, resolveStack } = await import('../aws.js');
  const { StopExecutionCommand } = await import('@aws-sdk/client-sfn');
  const clients = awsClients(await resolveStack({ values: args.values }));
  const by = `sondage stop ${target.name} (${os.userInfo().username}@${os.hostname()})`;
  try {
    // First the fence: workers already invoked (by a running execution or a failed one's other
    // children) reserve nothing more, so they stop at their next chunk and a later start's workers
    // never ask beside them.
    if (await clients.ledger.fence(target.name, `stopped ${new Date().toISOString()} by ${by}`)) {
      process.stdout.write(`${target.name}: fenced; workers already running stop at their next chunk (what they have in flight is committed and counted)\n`);
    }
    const running = await campaignExecutions(clients.sfn, clients.stack.stateMachineArn, target.name, { status: 'RUNNING' });
    if (running.length === 0) process.stdout.write(`${target.name}: no running execution\n`);
    for (const e of running) {
      await clients.sfn.send(new StopExecutionCommand({ executionArn: e.executionArn, error: STOP_ERROR, cause: by }));
      // Workers already invoked are fenced above; none is started after this.
      process.stdout.write(`stopped ${e.executionArn}\n`);
    }
    // A stopped execution terminates the GPU job it waits on; terminating here too leaves none
    // running if that did not happen (the job survives a failed TerminateJob). A terminated child
    // commits what it has on SIGTERM; a re-started execution resumes from the ledger.
    const queues = await resolveGpuQueues({ values: args.values });
    if (queues.length > 0 && running.length > 0) {
      const { batchClient, campaignGpuJobs, terminateGpuJobs } = await import('../gpuJobs.js');
      const batch = batchClient();
      try {
        const jobs = await campaignGpuJobs(batch, queues, running.map((e) => e.name!));
        for (const j of await terminateGpuJobs(batch, jobs, by)) process.stdout.write(`terminated GPU job ${j.jobName} (${j.jobId})\n`);
      } finally {
        batch.destroy();
      }
    }
    // After the executions: no worker submits a new batch once they are stopped.
    return await cancelBatches(clients.ledger, target);
  } finally {
    await clients.close();
  }
}

async function stopLocal(dataDir: string, target: CampaignTarget): Promise<boolean> {
  await stopLocalRun(dataDir, target.name);
  if (!(await stat(path.join(dataDir, 'ledger.sqlite')).then(() => true, () => false))) return true; // never ran: no batches
  const { EmbeddedLedger } = await import('../../store/index.js');
  const ledger = new EmbeddedLedger(dataDir);
  try {
    return await cancelBatches(ledger, target);
  } finally {
    await ledger.close();
  }
}

const OUTCOMES: Record<StoppedBatch['outcome'], string> = {
  cancelled: 'cancel requested; its partial results are stored by the next run',
  ended: 'had already ended; the next run stores its results',
  lost: 'unknown to the provider; the next run asks for its requests again',
  failed: 'cancel failed, it runs on',
};

/**
 * Cancels the campaign's open provider batches through lib/run/stopCampaign.ts (clients made from
 * the campaign file, keys read as a run reads them). True when nothing was left running.
 */
async function cancelBatches(ledger: Ledger, target: CampaignTarget): Promise<boolean> {
  const open = await ledger.campaignBatches(target.name);
  const intents = await ledger.campaignBatchIntents(target.name);
  if (open.length === 0 && intents.length === 0) {
    process.stdout.write(`${target.name}: no open provider batches\n`);
    return true;
  }
  if (!target.campaign) {
    process.stderr.write(
      `${target.name}: ${open.length} open provider batch(es) and ${intents.length} unresolved submission(s) not cancelled: ` +
        'give the campaign file instead of the name, so their batch clients can be made (API keys as for `sondage run`)\n',
    );
    return false;
  }
  const { batchClientsFor, stopCampaign } = await import('../../run/stopCampaign.js');
  const c = target.campaign;
  const result = await stopCampaign({ ledger, campaign: c.name, clients: await batchClientsFor(c, { seed: c.seed, file: c.file }) });
  for (const b of result.batches) {
    const line = `batch ${b.batchId} (${b.phase} ${b.model}/${b.language}, ${b.provider}): ${OUTCOMES[b.outcome]}${b.message ? ` (${b.message})` : ''}\n`;
    (b.outcome === 'failed' ? process.stderr : process.stdout).write(line);
  }
  for (const u of result.undetermined) {
    process.stderr.write(`submission ${u.submissionKey} (${u.provider}): not cancelled, its batch cannot be identified yet (${u.reason}); run \`sondage stop\` again later\n`);
  }
  for (const p of result.missingClients) {
    process.stderr.write(`${p}: open batches not cancelled: the campaign file has no batch-mode entry for it any more\n`);
  }
  return result.batches.every((b) => b.outcome !== 'failed') && result.undetermined.length === 0 && result.missingClients.length === 0;
}

/** SIGTERM to the run holding the campaign's lock on this machine: the run's own clean stop. */
async function stopLocalRun(dataDir: string, name: string): Promise<void> {
  const lockFile = path.join(dataDir, runLockKey(name));
  const text = await readFile(lockFile, 'utf8').catch(() => undefined);
  let info: { pid?: unknown; host?: unknown } = {};
  try {
    info = text === undefined ? {} : (JSON.parse(text) as typeof info);
  } catch {
    // An unreadable lock was left by a process that died mid-write: nothing runs.
  }
  if (typeof info.pid !== 'number' || !isProcessAlive(info.pid) || info.host !== os.hostname()) {
    if (typeof info.pid === 'number' && info.host !== os.hostname()) {
      throw new SondageError(`sondage stop: ${name} is held by pid ${info.pid} on ${String(info.host)} (${lockFile}); stop it there`);
    }
    process.stdout.write(`${name}: no run in progress in ${shownPath(dataDir)}\n`);
    return;
  }
  process.kill(info.pid, 'SIGTERM');
  process.stdout.write(`${name}: asked the run (pid ${info.pid}) to stop; it finishes the calls in flight, commits them and exits\n`);
}
