/**
 * The `.sync` integrations as hooks a test plugs in: batch:submitJob.sync (the GPU route, built
 * elsewhere: here only the hook) and athena:startQueryExecution.sync get exactly their rendered
 * parameters; what they return lands at the ResultPath; a job that failed is a StatesError the
 * Retry and Catch see; a call without a plugged-in hook is refused, never answered for it.
 */
import { describe, expect, it } from 'vitest';
import { StatesError, UnsupportedAslError } from './errors.js';
import { outputOf, run } from './testing.js';
import type { Json, TaskCall } from './types.js';

const SUBMIT = {
  Type: 'Task',
  Resource: 'arn:aws:states:::batch:submitJob.sync',
  Parameters: {
    JobDefinition: 'arn:aws:batch:us-east-1:123456789012:job-definition/gpu:1',
    'JobName.$': "States.Format('{}-gpu', $$.Execution.Name)",
    JobQueue: 'arn:aws:batch:us-east-1:123456789012:job-queue/gpu',
    ArrayProperties: { 'Size.$': '$.shards' },
    ContainerOverrides: { Environment: [{ Name: 'SONDAGE_CAMPAIGN', 'Value.$': '$.campaign' }] },
  },
  ResultPath: '$.job',
  Retry: [{ ErrorEquals: ['Batch.AWSBatchException'], MaxAttempts: 1 }],
  Catch: [{ ErrorEquals: ['States.TaskFailed'], ResultPath: '$.failure', Next: 'Failed job' }],
  End: true,
};
const definition = { StartAt: 'Submit', States: { Submit: SUBMIT, 'Failed job': { Type: 'Pass', End: true } } };

describe('batch:submitJob.sync', () => {
  it('hands the hook the rendered SubmitJob parameters and puts the described job at the ResultPath', async () => {
    const calls: { parameters: Json; call: TaskCall }[] = [];
    const batchSubmitJobSync = async (parameters: Json, call: TaskCall): Promise<Json> => {
      calls.push({ parameters, call });
      return { JobId: 'job-1', JobName: (parameters as { JobName: string }).JobName, Status: 'SUCCEEDED', ArrayProperties: { Size: 3 } };
    };
    const out = await run(definition, { campaign: 'c', shards: 3 }, {}, { name: 'exec-9', integrations: { batchSubmitJobSync } });
    expect(calls.map((c) => c.parameters)).toEqual([
      {
        JobDefinition: 'arn:aws:batch:us-east-1:123456789012:job-definition/gpu:1',
        JobName: 'exec-9-gpu',
        JobQueue: 'arn:aws:batch:us-east-1:123456789012:job-queue/gpu',
        ArrayProperties: { Size: 3 },
        ContainerOverrides: { Environment: [{ Name: 'SONDAGE_CAMPAIGN', Value: 'c' }] },
      },
    ]);
    expect(calls[0]!.call).toMatchObject({ state: 'Submit', resource: 'arn:aws:states:::batch:submitJob.sync', retryCount: 0 });
    expect(outputOf(out)).toEqual({ campaign: 'c', shards: 3, job: { JobId: 'job-1', JobName: 'exec-9-gpu', Status: 'SUCCEEDED', ArrayProperties: { Size: 3 } } });
  });

  it('retries an API error, catches a failed job as States.TaskFailed', async () => {
    let n = 0;
    const batchSubmitJobSync = async (): Promise<Json> => {
      if (++n === 1) throw new StatesError('Batch.AWSBatchException', 'throttled');
      throw new StatesError('States.TaskFailed', JSON.stringify({ JobId: 'job-2', Status: 'FAILED', StatusReason: 'Essential container in task exited' }));
    };
    const out = await run(definition, { campaign: 'c', shards: 2 }, {}, { integrations: { batchSubmitJobSync } });
    expect(n).toBe(2);
    expect(outputOf<{ failure: { Error: string; Cause: string } }>(out).failure).toEqual({ Error: 'States.TaskFailed', Cause: expect.stringContaining('"Status":"FAILED"') as unknown });
  });

  it('refuses to run the task without a hook plugged in', async () => {
    await expect(run(definition, { campaign: 'c', shards: 2 })).rejects.toThrow(UnsupportedAslError);
    await expect(run(definition, { campaign: 'c', shards: 2 })).rejects.toThrow(/state "Submit": .*no batchSubmitJobSync integration is plugged in/);
  });
});

describe('athena:startQueryExecution.sync', () => {
  it('hands the hook the StartQueryExecution parameters; GetQueryExecution\'s answer lands at the ResultPath', async () => {
    const seen: Json[] = [];
    const def = {
      StartAt: 'Sql',
      States: {
        Sql: {
          Type: 'Task',
          Resource: 'arn:aws:states:::athena:startQueryExecution.sync',
          Parameters: { 'QueryString.$': '$.q', WorkGroup: 'wg', QueryExecutionContext: { Database: 'db' } },
          ResultPath: '$.sql',
          Next: 'Use',
        },
        Use: { Type: 'Pass', Parameters: { 'id.$': '$.sql.QueryExecution.QueryExecutionId' }, End: true },
      },
    };
    const out = await run(def, { q: 'SELECT 1' }, {}, {
      integrations: { athenaStartQueryExecutionSync: async (p) => (seen.push(p), { QueryExecution: { QueryExecutionId: 'q-1', Status: { State: 'SUCCEEDED' } } }) },
    });
    expect(seen).toEqual([{ QueryString: 'SELECT 1', WorkGroup: 'wg', QueryExecutionContext: { Database: 'db' } }]);
    expect(outputOf(out)).toEqual({ id: 'q-1' });
  });
});
