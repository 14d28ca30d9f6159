/**
 * The GPU job's entry point (batch-images/probe's ENTRYPOINT runs it with tsx): the stores from
 * the environment the job definition sets (as the Lambda handlers build theirs), the weights
 * downloader on the bucket, a JSON-lines log on stdout (CloudWatch through the awslogs driver),
 * and the exit code of runGpuJob, which AWS Batch's retry strategy reads.
 */
import { S3Client } from '@aws-sdk/client-s3';
import { ENV } from '../../lib/config/index.js';
import { EXIT_CODES } from '../../lib/gpu/probeJob.js';
import { requiredEnv, storesFromEnv } from '../shared/env.js';
import { jsonLineLog } from '../shared/jsonLog.js';
import { redactKeys } from '../shared/secrets.js';
import { parseGpuEnv, runGpuJob } from './job.js';
import { downloadPrefix } from './weights.js';

// Message and fields redacted of the provider keys (probeJob logs errors as fields).
const log = jsonLineLog('sondage-gpu');

async function main(): Promise<number> {
  let env;
  try {
    env = parseGpuEnv(process.env);
  } catch (err) {
    log.error(String(err));
    return EXIT_CODES.config;
  }
  const stores = storesFromEnv('gpu', { withKeys: true });
  const bucket = requiredEnv(ENV.bucket, 'gpu');
  const endpoint = process.env[ENV.s3Endpoint];
  const s3 = new S3Client(endpoint ? { endpoint, forcePathStyle: true } : {});
  return runGpuJob(env, {
    ...stores,
    redact: redactKeys,
    log,
    downloadWeights: async (prefix, dir) => {
      const got = await downloadPrefix(s3, bucket, prefix, dir);
      log.info('weights', { ...got });
    },
  });
}

// Exit at once with the job's code: idle SDK sockets must not keep the container (and the GPU) alive.
// stdout is a pipe here, written synchronously on Linux, so no log line is lost.
process.exit(await main());
