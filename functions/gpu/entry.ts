/**
 * The GPU job's entry point (batch-images/probe's ENTRYPOINT runs it compiled, dist/functions/gpu/entry.js): the job from its
 * environment (fromEnv.ts: the stores as the Lambda handlers build theirs, the weights downloader
 * on the bucket), a JSON-lines log on stdout (CloudWatch through the awslogs driver), and the exit
 * code of runGpuJob, which AWS Batch's retry strategy reads.
 */
import { jsonLineLog } from '../shared/jsonLog.js';
import { runGpuJobFromEnv } from './fromEnv.js';

// Message and fields redacted of the provider keys (probeJob logs errors as fields).
const log = jsonLineLog('sondage-gpu');

// Exit at once with the job's code: idle SDK sockets must not keep the container (and the GPU) alive.
// stdout is a pipe here, written synchronously on Linux, so no log line is lost.
process.exit(await runGpuJobFromEnv(log));
