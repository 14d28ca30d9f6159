import { readFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { StopExecutionCommand } from '@aws-sdk/client-sfn';
import { SondageError } from '../../errors.js';
import { isProcessAlive } from '../../store/lock.js';
import { runLockKey } from '../../store/layout.js';
import type { CliArgs } from '../main.js';
import { localDataDir, resolveTarget } from './status.js';
import type { CampaignTarget } from './status.js';

/** The error name a stopped execution carries, so `status` tells a stop from a failure. */
export const STOP_ERROR = 'sondage.Stopped';

/**
 * `sondage stop <campaign> [--aws]` (issue 4). AWS: stops the campaign's running executions. Local:
 * asks the run holding the campaign's lock to stop as Ctrl-C does (calls in flight finish and are
 * committed). Either way nothing collected is lost: committed parts stay, and the next start or run
 * resumes from the ledger.
 */
export async function stopCommand(args: CliArgs): Promise<number> {
  const target = await resolveTarget(args.file);
  if (args.aws) await stopExecutions(args, target);
  else await stopLocalRun(localDataDir('stop', target, args.dataDir), target.name);
  const again = args.aws ? `sondage start ${args.file} --aws` : `sondage run ${args.file}`;
  process.stdout.write(`nothing collected is lost: committed replies and the ledger stay; \`${again}\` resumes with the items still missing\n`);
  return 0;
}

async function stopExecutions(args: CliArgs, target: CampaignTarget): Promise<void> {
  const { awsClients, campaignExecutions, resolveStack } = await import('../aws.js');
  const clients = awsClients(await resolveStack({ values: args.values }));
  try {
    const running = await campaignExecutions(clients.sfn, clients.stack.stateMachineArn, target.name, { status: 'RUNNING' });
    if (running.length === 0) process.stdout.write(`${target.name}: no running execution\n`);
    for (const e of running) {
      await clients.sfn.send(new StopExecutionCommand({ executionArn: e.executionArn, error: STOP_ERROR, cause: `sondage stop ${target.name} (${os.userInfo().username}@${os.hostname()})` }));
      // Workers already invoked run to their end and commit what they got; none is started after this.
      process.stdout.write(`stopped ${e.executionArn}\n`);
    }
  } finally {
    await clients.close();
  }
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
    process.stdout.write(`${name}: no run in progress in ${path.resolve(dataDir)}\n`);
    return;
  }
  process.kill(info.pid, 'SIGTERM');
  process.stdout.write(`${name}: asked the run (pid ${info.pid}) to stop; it finishes the calls in flight, commits them and exits\n`);
}
