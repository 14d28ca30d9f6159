/**
 * The GPU job as its container runs it, from the environment alone: the job definition's variables
 * (bucket, tables, secret, deadline), the submission's overrides (GPU_ENV) and AWS Batch's own
 * (array index, job id, attempt). The stores are built from the environment as the Lambda handlers
 * build theirs, the weights downloaded from the bucket. entry.ts calls it with a JSON-lines log and
 * exits with its code; the pipeline tests call it in-process, as the container would.
 */
import { S3Client } from '@aws-sdk/client-s3';
import os from 'node:os';
import { ENV, GPU_ENV } from '../../lib/config/index.js';
import { EXIT_CODES } from '../../lib/gpu/probeJob.js';
import type { ExitCode, JobLog } from '../../lib/gpu/probeJob.js';
import { storesFromEnv } from '../shared/env.js';
import { requiredEnv } from '../shared/requiredEnv.js';
import { redactKeys } from '../shared/secrets.js';
import { parseGpuEnv, runGpuJob } from './job.js';
import { gpuSpendPublisher } from './spendMetrics.js';
import { downloadPrefix } from './weights.js';

/**
 * Runs the job described by process.env to its exit code (a bad environment: `config`).
 * `startedAtMs`: when the container started (its process's start in the image; a test running
 * attempts in-process passes its own), from which the attempt's instance time is measured;
 * `uptimeSeconds`: the host's uptime (a test stands in for an instance booted when it says).
 */
export async function runGpuJobFromEnv(log: JobLog, startedAtMs: number = performance.timeOrigin, uptimeSeconds: () => number = () => os.uptime()): Promise<ExitCode> {
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
  try {
    return await runGpuJob(env, {
      ...stores,
      redact: redactKeys,
      log,
      startedAtMs,
      // The host's uptime (containers share its kernel) and the folder the job definition mounts from it.
      ...(process.env[GPU_ENV.instanceDir] ? { instanceClock: { uptimeSeconds, dir: process.env[GPU_ENV.instanceDir] } } : {}),
      publishSpend: gpuSpendPublisher(log),
      downloadWeights: async (prefix, dir) => {
        const got = await downloadPrefix(s3, bucket, prefix, dir);
        log.info('weights', { ...got });
      },
    });
  } finally {
    s3.destroy();
  }
}
