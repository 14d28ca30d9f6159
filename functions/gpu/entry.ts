/**
 * The GPU job's entry point (batch-images/probe's ENTRYPOINT runs it with tsx): the job from its
 * environment (fromEnv.ts: the stores as the Lambda handlers build theirs, the weights downloader
 * on the bucket), a JSON-lines log on stdout (CloudWatch through the awslogs driver), and the exit
 * code of runGpuJob, which AWS Batch's retry strategy reads.
 */
import type { JobLog } from '../../lib/gpu/probeJob.js';
import { redactKeys } from '../shared/secrets.js';
import { runGpuJobFromEnv } from './fromEnv.js';

const line = (level: string) => (message: string, fields: Record<string, unknown> = {}) =>
  process.stdout.write(`${JSON.stringify({ level, time: new Date().toISOString(), service: 'sondage-gpu', message: redactKeys(message), ...fields })}\n`);
const log: JobLog = { info: line('INFO'), warn: line('WARN'), error: line('ERROR') };

// Exit at once with the job's code: idle SDK sockets must not keep the container (and the GPU) alive.
// stdout is a pipe here, written synchronously on Linux, so no log line is lost.
process.exit(await runGpuJobFromEnv(log));
