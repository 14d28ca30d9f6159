/**
 * `status --aws` and `stop --aws` see and cancel a campaign's GPU jobs through @aws-sdk/client-batch,
 * against an AWS Batch-speaking server on 127.0.0.1 (test/helpers/batchServer.ts, REST-JSON), beside
 * the S3, DynamoDB and Step Functions stand-ins of the other `--aws` tests.
 */
import { writeFile } from 'node:fs/promises';
import path from 'node:path';
import { stringify } from 'yaml';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { executionName } from '../../lib/cli/aws.js';
import { GPU_STACK_OUTPUTS, STACK_OUTPUTS } from '../../lib/config/index.js';
import { gpuJobName } from '../../lib/run/planWave.js';
import { STACK, useAwsFakes } from '../helpers/awsFakes.js';
import { startBatchServer } from '../helpers/batchServer.js';
import type { BatchServer } from '../helpers/batchServer.js';
import { REPO_ROOT } from '../helpers/campaigns.js';
import { runMain } from '../helpers/cli.js';

const SPOT = 'arn:aws:batch:us-east-1:123456789012:job-queue/SondageGpuBatchQueueg6exlargespot-AbC';
const ON_DEMAND = 'arn:aws:batch:us-east-1:123456789012:job-queue/SondageGpuBatchQueueg6exlargeondemand-DeF';

const aws = useAwsFakes('cli-gpu-jobs');
let batch: BatchServer;
let outputs: string;
beforeAll(async () => {
  batch = await startBatchServer();
  vi.stubEnv('AWS_ENDPOINT_URL_BATCH', batch.url);
  vi.stubEnv('SONDAGE_GPU_JOB_QUEUES', undefined);
  batch.pageSize = 2;
  outputs = path.join(aws.dir, 'gpu.aws.json');
  const stack = JSON.parse(await (await import('node:fs/promises')).readFile(aws.outputsFile, 'utf8')) as { Sondage: Record<string, string> };
  await writeFile(outputs, JSON.stringify({ Sondage: { ...stack.Sondage, [GPU_STACK_OUTPUTS.gpuJobQueues]: `${SPOT},${ON_DEMAND}` } }));
});
afterAll(async () => {
  await batch.close();
});

describe('GPU jobs on the deployed stack', () => {
  it("status --aws lists the latest execution's GPU jobs, an array job with its children's states", async () => {
    const old = executionName('gpu-status', new Date('2026-11-30T04:00:00Z'));
    const latest = executionName('gpu-status', new Date('2026-11-30T05:00:00Z'));
    aws.sfn.add(STACK.stateMachineArn, old, { campaign: 'gpu-status' }, 'FAILED');
    aws.sfn.add(STACK.stateMachineArn, latest, { campaign: 'gpu-status' });
    batch.add({ jobName: gpuJobName(old, 0, 'qwen'), jobQueue: SPOT, status: 'FAILED' });
    batch.add({ jobName: gpuJobName(latest, 0, 'qwen'), jobQueue: SPOT, status: 'SUCCEEDED', arraySize: 3, statusSummary: { SUCCEEDED: 3 } });
    batch.add({ jobName: gpuJobName(latest, 1, 'qwen'), jobQueue: SPOT, status: 'RUNNING', arraySize: 12, statusSummary: { SUCCEEDED: 3, RUNNING: 8, RUNNABLE: 1 } });
    batch.add({ jobName: gpuJobName(latest, 1, 'llama.70b'), jobQueue: ON_DEMAND, status: 'RUNNABLE' });
    // Another campaign whose execution names start the same way.
    batch.add({ jobName: gpuJobName(executionName('gpu-status-2', new Date('2026-11-30T05:00:00Z')), 0, 'qwen'), jobQueue: SPOT, status: 'RUNNING' });

    const { code, stdout, stderr } = await runMain(['status', 'gpu-status', '--aws', '--outputs', outputs]);

    expect(stderr).toBe('');
    expect(code).toBe(0);
    // Newest first.
    expect(stdout).toContain(
      [
        'GPU jobs: 3',
        `  ${gpuJobName(latest, 1, 'llama_70b')} (SondageGpuBatchQueueg6exlargeondemand-DeF): RUNNABLE`,
        `  ${gpuJobName(latest, 1, 'qwen')} (SondageGpuBatchQueueg6exlargespot-AbC): RUNNING, 12 shards: 3 SUCCEEDED, 8 RUNNING, 1 RUNNABLE`,
        `  ${gpuJobName(latest, 0, 'qwen')} (SondageGpuBatchQueueg6exlargespot-AbC): SUCCEEDED, 3 shards: 3 SUCCEEDED`,
      ].join('\n'),
    );
    expect(stdout).not.toContain(old);
    expect(stdout).not.toContain('gpu-status-2-');
  });

  it('stop --aws stops the running execution and terminates its GPU jobs still running, nothing else', async () => {
    const running = aws.sfn.add(STACK.stateMachineArn, executionName('gpu-stop', new Date('2026-11-30T05:00:00Z')), { campaign: 'gpu-stop' });
    const array = batch.add({ jobName: gpuJobName(running.name, 1, 'qwen'), jobQueue: SPOT, status: 'RUNNING', arraySize: 4, statusSummary: { RUNNING: 2, SUCCEEDED: 2 } });
    const queued = batch.add({ jobName: gpuJobName(running.name, 1, 'gemma'), jobQueue: ON_DEMAND, status: 'RUNNABLE' });
    const finished = batch.add({ jobName: gpuJobName(running.name, 0, 'qwen'), jobQueue: SPOT, status: 'SUCCEEDED' });
    const other = batch.add({ jobName: gpuJobName(executionName('gpu-stop-2', new Date('2026-11-30T05:00:00Z')), 0, 'qwen'), jobQueue: SPOT, status: 'RUNNING' });

    const { code, stdout, stderr } = await runMain(['stop', 'gpu-stop', '--aws', '--outputs', outputs]);

    expect(stderr).toBe('');
    expect(code).toBe(0);
    expect(running.status).toBe('ABORTED');
    expect(stdout).toContain(`terminated GPU job ${array.jobName} (${array.jobId})`);
    expect(stdout).toContain(`terminated GPU job ${queued.jobName} (${queued.jobId})`);
    expect([array.status, queued.status, finished.status, other.status]).toEqual(['FAILED', 'FAILED', 'SUCCEEDED', 'RUNNING']);
    expect(array.statusReason).toMatch(/^sondage stop gpu-stop \(/);
    expect(batch.calls.get('terminatejob')).toBe(2);
  });

  it("start --aws refuses a GPU model whose weights are not in the bucket: nothing uploaded, no execution", async () => {
    const file = path.join(aws.dir, 'gpu-start.yaml');
    await writeFile(path.join(aws.dir, 'items.jsonl'), await (await import('node:fs/promises')).readFile(path.join(REPO_ROOT, 'examples/ptrue/items.jsonl')));
    await writeFile(
      file,
      stringify({
        name: 'gpu-start',
        seed: 1,
        budget_usd: 10,
        battery: 'ptrue',
        design: { items: 'items.jsonl', languages: ['en'], verifier_languages: ['en'], item_limit: 2 },
        models: [{ id: 'qwen', provider: 'openai-compatible', model: 'Qwen/Qwen3-8B', runs_on: 'gpu', gpu: { instance_type: 'g5.xlarge', weights_prefix: 'weights/qwen3-8b/' } }],
      }),
    );
    const executions = aws.sfn.executions.length;

    const { code, stderr } = await runMain(['start', file, '--aws', '--outputs', outputs]);

    expect(code).toBe(1);
    expect(stderr).toContain(`models[0].gpu.weights_prefix: nothing under weights/qwen3-8b/ in s3://${STACK.bucket}; upload the model's files there first`);
    expect(aws.sfn.executions.length).toBe(executions);
    expect([...aws.objects('campaigns/gpu-start/').keys()]).toEqual([]);
  });

  it('a stack without GPU queues: no Batch call, no GPU section', async () => {
    aws.sfn.add(STACK.stateMachineArn, executionName('no-gpu', new Date('2026-11-30T05:00:00Z')), { campaign: 'no-gpu' });
    const before = [...batch.calls.values()].reduce((a, b) => a + b, 0);

    const status = await runMain(['status', 'no-gpu', '--aws', '--outputs', aws.outputsFile]);
    const stop = await runMain(['stop', 'no-gpu', '--aws', '--outputs', aws.outputsFile]);

    expect(status.code).toBe(0);
    expect(status.stdout).not.toContain('GPU jobs');
    expect(stop.code).toBe(0);
    expect([...batch.calls.values()].reduce((a, b) => a + b, 0)).toBe(before);
    expect(STACK_OUTPUTS.stateMachineArn).toBe('StateMachineArn');
  });
});
