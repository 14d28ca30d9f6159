/**
 * The GPU half of a wave as the synthesized definition runs it (context sondage:gpu=true): the
 * Parallel of the Lambda shards and the Batch job, with `batch:submitJob.sync` answered by a
 * stand-in callback (the GPU route itself is built elsewhere; this is its hook). The functions
 * are stubs that answer with the pipeline's contract (lib/config/pipeline.ts); what is checked is
 * what the definition hands the Batch job and what it does with the job's outcome.
 */
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { CONTEXT } from '../../lib/config/index.js';
import type { PlanOutput } from '../../lib/config/pipeline.js';
import { StatesError } from '../helpers/asl/errors.js';
import { startExecution } from '../helpers/asl/interpreter.js';
import type { Json, LambdaFunction } from '../helpers/asl/types.js';
import { synthesizePipeline } from '../helpers/pipeline/synthesizedPipeline.js';
import type { SynthesizedPipeline } from '../helpers/pipeline/synthesizedPipeline.js';

let dir: string;
let s: SynthesizedPipeline;
beforeAll(() => {
  dir = mkdtempSync(join(tmpdir(), 'sondage-gpu-run-'));
  mkdirSync(join(dir, 'image'));
  writeFileSync(join(dir, 'image', 'Dockerfile'), 'FROM public.ecr.aws/docker/library/alpine:3\n');
  s = synthesizePipeline({ [CONTEXT.gpu]: 'true', [CONTEXT.gpuImageDir]: join(dir, 'image') });
});
afterAll(() => rmSync(dir, { recursive: true, force: true }));

/** A plan that gives one wave of `gpuShards` GPU shards and no Lambda shard, then says done. */
function planStub(gpuShards: number): LambdaFunction {
  return async (payload) => {
    const first = ((payload as { phasesRun: string[] }).phasesRun ?? []).length === 0;
    const out: PlanOutput = {
      wave: {
        phases: first ? ['generate'] : [],
        lambda: { manifestKey: 'scratch/e/wave-0-lambda.json', shardCount: 0, maxConcurrency: 1, toleratedFailurePercentage: 0, pollSeconds: 5 },
        gpu: { manifestKey: 'scratch/e/wave-0-gpu.json', shardCount: first ? gpuShards : 0 },
      },
      phasesRun: ['generate'],
      done: !first,
      analysis: { queryString: 'SELECT 1' },
      expectedCostUsd: 0,
      capUsd: 1,
    };
    return out;
  };
}

async function execute(gpuShards: number, job: (parameters: Json) => Promise<Json>) {
  const f = s.functions;
  const recorded: Json[] = [];
  const lambda: Record<string, LambdaFunction> = {
    [f.plan.arn]: planStub(gpuShards),
    [f.worker.arn]: async () => {
      throw new Error('no Lambda shard in this wave: the worker must not be invoked');
    },
    [f.report.arn]: async () => ({ resultsPrefix: 'campaigns/c/results/', files: [] }),
    [f.recordFailure.arn]: async (p) => (recorded.push(p), { recorded: true }),
  };
  const calls: Json[] = [];
  const run = await startExecution(s.machine.definition, { campaign: 'c' }, {
    name: 'c-gpu-1',
    stateMachineArn: s.machine.arn,
    integrations: {
      lambda,
      athenaStartQueryExecutionSync: async () => ({ QueryExecution: { QueryExecutionId: 'q-1', Status: { State: 'SUCCEEDED' } } }),
      batchSubmitJobSync: async (parameters) => (calls.push(parameters), job(parameters)),
    },
  });
  return { run, calls, recorded };
}

describe('the GPU half of a wave, batch:submitJob.sync as a stand-in hook', () => {
  it('submits an array job of one child per GPU shard, told the campaign and the manifest, beside the Lambda half', async () => {
    const { run, calls } = await execute(3, async (p) => ({ JobId: 'j-1', JobName: (p as { JobName: string }).JobName, Status: 'SUCCEEDED' }));
    expect(run.result.status).toBe('SUCCEEDED');
    expect(calls).toEqual([
      {
        JobDefinition: expect.stringMatching(/^arn:aws:batch:us-east-1:123456789012:job-definition\//) as unknown,
        JobName: 'c-gpu-1-gpu',
        JobQueue: expect.stringMatching(/^arn:aws:batch:us-east-1:123456789012:job-queue\//) as unknown,
        ArrayProperties: { Size: 3 },
        ContainerOverrides: {
          Environment: [
            { Name: 'SONDAGE_CAMPAIGN', Value: 'c' },
            { Name: 'SONDAGE_MANIFEST_KEY', Value: 'scratch/e/wave-0-gpu.json' },
          ],
        },
      },
    ]);
    const states = run.history.filter((e) => e.type === 'StateEntered').map((e) => e.state);
    expect(states).toEqual(expect.arrayContaining(['Run the wave', 'No Lambda shards in this wave', "Run the wave's GPU shards", 'SqlStep', 'Report', 'Done']));
  });

  it('submits a plain job told its shard index when there is one GPU shard (Batch arrays start at 2), none without', async () => {
    const one = await execute(1, async () => ({ JobId: 'j-2', Status: 'SUCCEEDED' }));
    expect(one.run.result.status).toBe('SUCCEEDED');
    expect(one.calls).toHaveLength(1);
    expect(one.calls[0]).not.toHaveProperty('ArrayProperties');
    expect((one.calls[0] as { ContainerOverrides: { Environment: unknown[] } }).ContainerOverrides.Environment).toContainEqual({ Name: 'SONDAGE_SHARD_INDEX', Value: '0' });
    const none = await execute(0, async () => ({}));
    expect(none.run.result.status).toBe('SUCCEEDED');
    expect(none.calls).toEqual([]);
  });

  it('records a failed job through the Parallel\'s Catch, and ends the execution failed', async () => {
    const { run, recorded } = await execute(2, async () => {
      throw new StatesError('States.TaskFailed', JSON.stringify({ JobId: 'j-3', Status: 'FAILED', StatusReason: 'Array Child Job failed' }));
    });
    expect(run.result).toMatchObject({ status: 'FAILED', error: 'SondageFailed', cause: expect.stringContaining('Array Child Job failed') as unknown });
    expect(recorded).toEqual([{ campaign: 'c', execution: run.arn, failure: { Error: 'States.TaskFailed', Cause: expect.stringContaining('"Status":"FAILED"') as unknown } }]);
  });
});
