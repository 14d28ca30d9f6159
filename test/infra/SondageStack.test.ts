// eslint-disable-next-line no-restricted-imports -- the infra tests inspect the CDK app; lib/ still may not import it
import { Match } from 'aws-cdk-lib/assertions';
import { AwsSolutionsChecks } from 'cdk-nag';
import type { IConstruct } from 'constructs';
import aslValidator from 'asl-validator';
import { Logger } from '@aws-lambda-powertools/logger';
import { Metrics } from '@aws-lambda-powertools/metrics';
// eslint-disable-next-line no-restricted-imports -- the handler's own Context type; lib/ still may not import it
import type { Context } from 'aws-lambda';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createHandler } from '../../functions/record-failure/handler.js';
import { DynamoLedger } from '../../lib/store/DynamoLedger.js';
import { startDynamoServer } from '../store/dynamoServer.js';
import type { DynamoServer } from '../store/dynamoServer.js';
import { namedQueryName, namedQueryParameters } from '../../infra/constructs/Analytics.js';
import { glueTableName } from '../../lib/analysis/athena.js';
import { allBatteries } from '../../lib/batteries/index.js';
import { ALARM_TOPIC_OUTPUT, DEFAULT_BYTES_SCANNED_CUTOFF, STACK_OUTPUTS } from '../../lib/config/index.js';
import { MAX_WORKER_TURNS } from '../../lib/config/pipeline.js';
import type { ExecutionInput, PlanEvent, Shard, WorkerEvent, WorkerOutput } from '../../lib/config/pipeline.js';
import { SondageError } from '../../lib/errors.js';
import { startExecution } from '../helpers/asl/interpreter.js';
import type { Integrations, Json, LambdaFunction } from '../helpers/asl/types.js';
import { FUNCTION_SIZING, REPORT_ROUNDS, SHARDS_PER_BATCH } from '../../lib/config/sizing.js';
import { tableColumns } from '../../lib/store/schemas.js';
import { allStates, iamStatements, synthesize, tokenText } from './synth.js';
import type { AslState } from '../helpers/asl/types.js';
import type { Synthesized } from './synth.js';

let s: Synthesized;
beforeAll(() => {
  s = synthesize();
});

describe('CampaignData', () => {
  it('encrypts the data bucket, blocks public access and expires scratch objects', () => {
    s.template.hasResourceProperties('AWS::S3::Bucket', {
      BucketEncryption: { ServerSideEncryptionConfiguration: [{ ServerSideEncryptionByDefault: { SSEAlgorithm: 'AES256' } }] },
      PublicAccessBlockConfiguration: { BlockPublicAcls: true, BlockPublicPolicy: true, IgnorePublicAcls: true, RestrictPublicBuckets: true },
      LoggingConfiguration: Match.objectLike({ LogFilePrefix: 'data-bucket/' }),
      LifecycleConfiguration: {
        Rules: Match.arrayWith([
          Match.objectLike({ Prefix: 'scratch/', ExpirationInDays: 7, Status: 'Enabled' }),
          Match.objectLike({ Prefix: 'athena-results/', ExpirationInDays: 30 }),
        ]),
      },
    });
  });

  it('denies every request to either bucket that does not use TLS', () => {
    const policies = s.template.findResources('AWS::S3::BucketPolicy', {
      Properties: {
        PolicyDocument: {
          Statement: Match.arrayWith([
            Match.objectLike({ Effect: 'Deny', Action: 's3:*', Condition: { Bool: { 'aws:SecureTransport': 'false' } } }),
          ]),
        },
      },
    });
    expect(Object.keys(policies)).toHaveLength(2);
  });

  it('keeps both tables on demand with point-in-time recovery, TTL on the ledger only', () => {
    const tables = s.template.findResources('AWS::DynamoDB::GlobalTable', {
      Properties: {
        BillingMode: 'PAY_PER_REQUEST',
        Replicas: [Match.objectLike({ PointInTimeRecoverySpecification: { PointInTimeRecoveryEnabled: true } })],
      },
    });
    expect(Object.keys(tables)).toHaveLength(2);
    const ttl = Object.values(tables).map((t) => (t as { Properties: { TimeToLiveSpecification?: { AttributeName: string } } }).Properties.TimeToLiveSpecification);
    expect(ttl.filter((t) => t !== undefined)).toEqual([{ AttributeName: 'expires_at', Enabled: true }]);
  });
});

describe('Analytics', () => {
  it('caps bytes scanned per query and enforces the workgroup settings', () => {
    s.template.hasResourceProperties('AWS::Athena::WorkGroup', {
      WorkGroupConfiguration: Match.objectLike({
        BytesScannedCutoffPerQuery: DEFAULT_BYTES_SCANNED_CUTOFF,
        EnforceWorkGroupConfiguration: true,
        ResultConfiguration: Match.objectLike({ EncryptionConfiguration: { EncryptionOption: 'SSE_S3' } }),
      }),
    });
  });

  const tables = [
    ...allBatteries().map((b) => ({ name: glueTableName(b.name, 'prompts'), table: 'prompts' as const, battery: b })),
    { name: 'replies', table: 'replies' as const, battery: undefined },
    { name: 'readings', table: 'readings' as const, battery: undefined },
  ];
  it.each(tables)('describes $name with the columns of lib/store/schemas.ts and partition projection', ({ name, table, battery }) => {
    const found = s.template.findResources('AWS::Glue::Table', { Properties: { TableInput: { Name: name } } });
    const input = (Object.values(found)[0] as { Properties: { TableInput: Record<string, unknown> } }).Properties.TableInput as {
      PartitionKeys: { Name: string }[];
      Parameters: Record<string, unknown>;
      StorageDescriptor: { Columns: { Name: string; Type: string }[] };
    };
    const columns = input.StorageDescriptor.Columns.map((c) => c.Name);
    expect(columns).toEqual(tableColumns(table, battery?.prompts).map((c) => c.name));
    const keys = input.PartitionKeys.map((k) => k.Name);
    expect(keys).toEqual(['campaign_key', 'phase_key', 'model', 'language']);
    expect(keys.filter((k) => columns.includes(k))).toEqual([]); // Athena rejects a key repeating a column
    // A battery's table projects its own languages; the shared tables every battery's.
    const languages = battery ? battery.languages : [...new Set(allBatteries().flatMap((b) => b.languages))];
    expect(input.Parameters).toMatchObject({
      'projection.enabled': 'true',
      'projection.model.type': 'injected',
      'projection.language.type': 'enum',
      'projection.language.values': languages.join(','),
    });
    expect(tokenText(input.Parameters['storage.location.template'])).toMatch(
      new RegExp(`/campaigns/\\$\\{campaign_key\\}/\\$\\{phase_key\\}/${table}/model=\\$\\{model\\}/language=\\$\\{language\\}/$`),
    );
  });

  it("saves every battery's SQL files as named queries for any campaign: campaign and model are execution parameters", () => {
    const queries = Object.values(s.template.findResources('AWS::Athena::NamedQuery')).map(
      (q) => (q as { Properties: { Name: string; QueryString: string; Description: string } }).Properties,
    );
    expect(queries.map((q) => q.Name).sort()).toEqual(allBatteries().flatMap((b) => b.analysis.sql.queries.map((n) => namedQueryName(b, n))).sort());
    for (const q of queries) {
      const battery = allBatteries().find((b) => q.Name.startsWith(`sondage-${b.name}-`))!;
      const code = q.QueryString.replace(/--.*$/gm, '');
      expect(code).not.toContain('{{');
      expect(code).not.toContain('my-campaign');
      expect(code.match(/\?/g)).toHaveLength(namedQueryParameters(battery).length);
      expect(q.Description).toContain(namedQueryParameters(battery).join(', '));
    }
  });
});

describe('Pipeline', () => {
  const maps = (): [string, AslState][] => [...allStates(s.definition)].filter(([, st]) => st.Type === 'Map');

  it('is a Standard state machine with tracing and full logging', () => {
    s.template.hasResourceProperties('AWS::StepFunctions::StateMachine', {
      StateMachineType: 'STANDARD',
      TracingConfiguration: { Enabled: true },
      LoggingConfiguration: Match.objectLike({ Level: 'ALL', IncludeExecutionData: false }),
    });
  });

  it('loops over waves: plan a wave, run its shards, plan again; once every phase has run, Athena SQL → report', () => {
    const st = s.definition.States;
    // The first state only defaults retryFailed and starts phasesRun empty (see the PlanEvent test); both ways lead to the plan.
    const first = st[s.definition.StartAt]!;
    expect(first.Type).toBe('Choice');
    // then allowPartial the same way
    const second = (first.Choices as { Next: string }[])[0]!.Next;
    expect(st[second]?.Type).toBe('Choice');
    expect(st[first.Default as string]!.Next).toBe(second);
    const start = (st[second]!.Choices as { Next: string }[])[0]!.Next;
    expect(st[start]).toMatchObject({ Type: 'Pass', ResultPath: '$.phasesRun', Result: [], Next: 'Plan wave' });
    expect(st[st[st[second]!.Default as string]!.Next as string]).toBe(st[start]);
    expect(st['Plan wave']).toMatchObject({ Type: 'Task', ResultPath: '$.plan', Next: 'Every phase run?' });
    expect(st['Every phase run?']).toMatchObject({ Type: 'Choice', Choices: [{ Variable: '$.plan.done', BooleanEquals: true, Next: 'SqlStep' }], Default: 'Any Lambda shards?' });
    expect(st['Any Lambda shards?']).toMatchObject({
      Type: 'Choice',
      Choices: [{ Variable: '$.plan.wave.lambda.shardCount', NumericGreaterThan: 0, Next: "Run the wave's shards" }],
      Default: 'No Lambda shards in this wave',
    });
    for (const name of ["Run the wave's shards", 'No Lambda shards in this wave']) expect(st[name]?.Next).toBe('Next wave');
    expect(st['Next wave']).toMatchObject({ Type: 'Pass', InputPath: '$.plan.phasesRun', ResultPath: '$.phasesRun', Next: 'Plan wave' });
    // The report from no progress, then again after a Wait while it answers that queries still run.
    expect(st.SqlStep?.Next).toBe('Report: no round yet');
    expect(st['Report: no round yet']).toEqual({ Type: 'Pass', Result: { round: 0, queries: {} }, ResultPath: '$.report', Next: 'Report' });
    expect(st.Report?.Next).toBe('Analysis queries still running?');
    expect(st['Analysis queries still running?']).toMatchObject({
      Type: 'Choice',
      Choices: [{ And: [{ Variable: '$.report.again', IsPresent: true }, { Variable: '$.report.again', BooleanEquals: true }], Next: 'Wait for the analysis queries' }],
      Default: 'Done',
    });
    expect(st['Wait for the analysis queries']).toEqual({ Type: 'Wait', SecondsPath: '$.report.waitSeconds', Next: 'Report' });
    expect(st.SqlStep).toMatchObject({
      Parameters: { 'QueryString.$': '$.plan.analysis.queryString', WorkGroup: expect.any(String) as unknown },
    });
    expect(String(st.SqlStep!.Resource)).toMatch(/:states:::athena:startQueryExecution\.sync$/);
    // No phase is named anywhere in the definition: the plan decides what runs.
    expect(JSON.stringify(s.definition)).not.toMatch(/generate|judge/);
  });

  it("fans each wave out as a Distributed Map over the wave's S3 manifest, with concurrency, tolerance and batching from the plan", () => {
    expect(maps().map(([n]) => n)).toEqual(["Run the wave's shards"]);
    const [, map] = maps()[0]!;
    expect(map).toMatchObject({
      ItemProcessor: { ProcessorConfig: { Mode: 'DISTRIBUTED', ExecutionType: 'STANDARD' } },
      ItemReader: { Resource: expect.stringMatching(/:states:::s3:getObject$/) as unknown, ReaderConfig: { InputType: 'JSON' }, Parameters: { 'Key.$': '$.plan.wave.lambda.manifestKey' } },
      MaxConcurrencyPath: '$.plan.wave.lambda.maxConcurrency',
      ToleratedFailurePercentagePath: '$.plan.wave.lambda.toleratedFailurePercentage',
      ItemBatcher: {
        MaxItemsPerBatch: SHARDS_PER_BATCH,
        BatchInput: {
          'campaign.$': '$.campaign',
          'execution.$': '$$.Execution.Name',
          'pollSeconds.$': '$.plan.wave.lambda.pollSeconds',
          'retryFailed.$': '$.retryFailed',
          'copies.$': '$.plan.wave.lambda.maxConcurrency',
        },
      },
      ResultWriter: expect.objectContaining({ Resource: expect.stringMatching(/:states:::s3:putObject$/) as unknown }) as unknown,
    });
  });

  it('routes every failing step to the state that records the failure', () => {
    const top = Object.entries(s.definition.States).filter(([, st]) => st.Type === 'Task' || st.Type === 'Map');
    for (const [name, st] of top) {
      const target = name === 'Record failure' ? 'Failed' : 'Record failure';
      expect({ name, catch: st.Catch }).toEqual({ name, catch: [expect.objectContaining({ ErrorEquals: ['States.ALL'], Next: target })] });
    }
    expect(s.definition.States['Record failure']?.Next).toBe('Failed');
  });

  it('passes asl-validator', () => {
    // asl-validator writes into what it validates: hand it a copy.
    const result = aslValidator(structuredClone(s.definition));
    expect(result.errorsText('\n')).toBe('');
    expect(result.isValid).toBe(true);
  });

  it('loops each batch of shards: invoke the worker, and while it answers again, wait pollSeconds and invoke it again', () => {
    const [, map] = maps()[0]!;
    const processor = map.ItemProcessor as { StartAt: string; States: Record<string, AslState> };
    const invoke = processor.States[processor.StartAt]!;
    expect(processor.StartAt).toBe('Run a batch of shards');
    expect(invoke).toMatchObject({ Type: 'Task', ResultPath: '$.result', Next: 'More work in this batch?' });
    const retried = (invoke.Retry as { ErrorEquals: string[] }[]).flatMap((r) => r.ErrorEquals);
    expect(retried).toEqual(expect.arrayContaining(['Lambda.ServiceException', 'Lambda.TooManyRequestsException', 'TransientAwsError']));
    // A killed runtime is not invoked again within the execution (its reservations and part are settled by the next one).
    for (const killed of ['Runtime.ExitError', 'Runtime.OutOfMemory', 'Sandbox.Timedout', 'States.ALL', 'States.TaskFailed']) expect(retried).not.toContain(killed);
    // Throttled at the reserved concurrency (a second campaign at once): wait for a slot, up to a minute apart, over half an hour in all.
    const throttled = (invoke.Retry as { ErrorEquals: string[]; IntervalSeconds: number; BackoffRate: number; MaxAttempts: number; MaxDelaySeconds?: number }[]).find((r) =>
      r.ErrorEquals.includes('Lambda.TooManyRequestsException'),
    )!;
    expect(throttled.MaxDelaySeconds).toBe(60);
    let waited = 0;
    for (let n = 0; n < throttled.MaxAttempts; n++) waited += Math.min(throttled.MaxDelaySeconds!, throttled.IntervalSeconds * throttled.BackoffRate ** n);
    expect(waited).toBeGreaterThan(30 * 60);
    expect(processor.States['Wait before invoking again']).toEqual({ Type: 'Wait', SecondsPath: '$.BatchInput.pollSeconds', Next: 'Run a batch of shards' });
    expect(processor.States['Batch settled']).toEqual({ Type: 'Succeed', OutputPath: '$.result' });
  });

  it('hands the plan exactly a PlanEvent, and the map retryFailed, whether or not the execution input has them', async () => {
    const inputs: { input: ExecutionInput; retryFailed: boolean; allowPartial: boolean }[] = [
      { input: { campaign: 'far6-demo' }, retryFailed: false, allowPartial: false },
      { input: { campaign: 'far6-demo', retryFailed: false }, retryFailed: false, allowPartial: false },
      { input: { campaign: 'far6-demo', retryFailed: true }, retryFailed: true, allowPartial: false },
      { input: { campaign: 'far6-demo', allowPartial: true }, retryFailed: false, allowPartial: true },
      { input: { campaign: 'far6-demo', retryFailed: true, allowPartial: false }, retryFailed: true, allowPartial: false },
    ];
    for (const { input, retryFailed, allowPartial } of inputs) {
      // act: the whole definition, on the test interpreter (test/helpers/asl), with stand-in functions
      const stub = pipelineStubs([{ done: 1, failed: 0, pending: 0, openBatches: 0, costUsd: 0, again: false }]);
      const run = await startExecution(s.definition, input as unknown as Json, { name: 'run-1', integrations: stub.integrations, validate: false });
      // assess: the plan's first payload, and the BatchInput each worker is given
      expect(run.result.status).toBe('SUCCEEDED');
      const expected: PlanEvent = { campaign: 'far6-demo', execution: 'run-1', retryFailed, allowPartial, phasesRun: [] };
      expect(stub.calls.plan[0]).toEqual(expected);
      expect(stub.calls.plan[1]).toEqual({ ...expected, phasesRun: ['generate'] });
      expect((stub.calls.worker[0] as unknown as WorkerEvent).BatchInput).toEqual({ campaign: 'far6-demo', execution: 'run-1', pollSeconds: 60, retryFailed, copies: 3 });
    }
  });

  it('hands the worker exactly a WorkerEvent on every turn of the loop, and ends with its last answer', async () => {
    // prepare: a worker that needs three turns (items left, then an open provider batch, then done)
    const answers: WorkerOutput[] = [
      { done: 20, failed: 0, pending: 30, openBatches: 0, costUsd: 0.1, again: true },
      { done: 20, failed: 0, pending: 0, openBatches: 1, costUsd: 0.1, again: true },
      { done: 50, failed: 0, pending: 0, openBatches: 0, costUsd: 0.3, again: false },
    ];
    const stub = pipelineStubs(answers);
    // act
    const run = await startExecution(s.definition, { campaign: 'far6-demo', retryFailed: true }, { name: 'run-1', integrations: stub.integrations, validate: false });
    // assess: what ItemBatcher gives a child (Items + the rendered BatchInput), then the previous answer at $.result
    expect(run.result.status).toBe('SUCCEEDED');
    const batchInput = { campaign: 'far6-demo', execution: 'run-1', pollSeconds: 60, retryFailed: true, copies: 3 };
    const expected: WorkerEvent[] = [
      { Items: SHARDS, BatchInput: batchInput },
      { Items: SHARDS, BatchInput: batchInput, result: answers[0]! },
      { Items: SHARDS, BatchInput: batchInput, result: answers[1]! },
    ];
    expect(stub.calls.worker).toEqual(expected);
    expect(run.history.filter((e) => e.type === 'Waited').map((e) => (e as { seconds?: number }).seconds)).toEqual([60, 60]);
    // the child's output, as the ResultWriter stored it, is the worker's last answer
    const [succeeded] = [...stub.objects].filter(([k]) => /SUCCEEDED_0\.json$/.test(k)).map(([, v]) => JSON.parse(v) as { Output: string }[]);
    expect(succeeded!.map((r) => JSON.parse(r.Output) as unknown)).toEqual([answers[2]]);
  });

  it('hands a batch whose invocation failed (past MAX_WORKER_TURNS, say) to the give-up step with its failure, then fails the child and, tolerating none, the wave', async () => {
    // prepare: a worker that fails its batch, and answers the give-up step
    const stub = pipelineStubs([]);
    const cap = `worker: the batch of shards generate alpha/en [0, 50) was invoked ${MAX_WORKER_TURNS} times and still answered again`;
    const integrations: Integrations = {
      ...stub.integrations,
      lambda: {
        ...stub.integrations.lambda,
        [stub.fn('Worker')]: async (p) => {
          stub.calls.worker.push(p);
          if ((p as { failure?: unknown }).failure === undefined) throw new SondageError(cap);
          return { done: 0, failed: 50, pending: 0, openBatches: 0, costUsd: 0, again: false, gaveUp: ['generate alpha/en [0, 50)'] };
        },
      },
    };
    // act
    const run = await startExecution(s.definition, { campaign: 'far6-demo' }, { name: 'run-1', integrations, validate: false });
    // assess: the give-up step got the batch, its input and the failure; the child failed with it; the execution recorded the Map's failure
    expect(run.result.status).toBe('FAILED');
    expect(stub.calls.worker).toHaveLength(2);
    const giveUp = stub.calls.worker[1] as unknown as WorkerEvent;
    expect(giveUp).toEqual({ Items: SHARDS, BatchInput: { campaign: 'far6-demo', execution: 'run-1', pollSeconds: 60, retryFailed: false, copies: 3 }, failure: { Error: 'SondageError', Cause: expect.stringContaining(cap) as unknown } });
    expect(stub.calls.recordFailure).toHaveLength(1);
    expect(JSON.stringify(stub.calls.recordFailure[0])).toMatch(/ExceedToleratedFailureThreshold/);
  });

  it('runs the SQL stage without result reuse (an execution reads what it just wrote) and retries on throttling', () => {
    expect(s.definition.States.SqlStep).toMatchObject({
      Retry: [expect.objectContaining({ ErrorEquals: expect.arrayContaining(['Athena.TooManyRequestsException']) as unknown })],
    });
    expect((s.definition.States.SqlStep as unknown as { Parameters: Record<string, unknown> }).Parameters['ResultReuseConfiguration']).toBeUndefined();
    expect(s.definition.States.Report).toMatchObject({
      Parameters: { 'campaign.$': '$.campaign', 'queryExecutionId.$': '$.sql.QueryExecution.QueryExecutionId', maxRounds: REPORT_ROUNDS.maxRounds, 'progress.$': '$.report' },
      ResultPath: '$.report',
    });
  });

  it.each([
    ['writes the shard manifests', FUNCTION_SIZING.plan],
    ['shards against a model API', FUNCTION_SIZING.worker],
    ['statistics over the Athena results', FUNCTION_SIZING.report],
    ['records a failed execution step', FUNCTION_SIZING.recordFailure],
  ])('bundles the handler that %s with esbuild, sized as lib/config/sizing.ts says', (description, sizing) => {
    s.template.hasResourceProperties('AWS::Lambda::Function', {
      Description: Match.stringLikeRegexp(description),
      Handler: 'index.handler',
      Runtime: 'nodejs24.x',
      Code: { S3Bucket: Match.anyValue(), S3Key: Match.stringLikeRegexp('\\.zip$') },
      MemorySize: sizing.memoryMb,
      Timeout: sizing.timeoutSeconds,
      Architectures: [sizing.architecture],
      ...(sizing.reservedConcurrency === undefined ? {} : { ReservedConcurrentExecutions: sizing.reservedConcurrency }),
      ...(sizing.ephemeralStorageMb === undefined ? {} : { EphemeralStorage: { Size: sizing.ephemeralStorageMb } }),
    });
  });

  it('caps the worker with reserved concurrency', () => {
    s.template.hasResourceProperties('AWS::Lambda::Function', {
      Description: Match.stringLikeRegexp('shards against a model API'),
      ReservedConcurrentExecutions: 100,
      Environment: { Variables: Match.objectLike({ SONDAGE_BUCKET: Match.anyValue(), SONDAGE_BUDGET_TABLE: Match.anyValue() }) },
    });
  });

  it('outputs the names the CLI reads from `cdk deploy --outputs-file`', () => {
    const outputs = s.template.findOutputs('*');
    // …and the alarm topic, for subscribing more endpoints (test/infra/Operations.test.ts).
    expect(Object.keys(outputs).sort()).toEqual([...Object.values(STACK_OUTPUTS), ALARM_TOPIC_OUTPUT].sort());
  });
});

/** One shard, in the manifest of the one wave the stub plan gives. */
const SHARDS: Shard[] = [{ phase: 'generate', model: 'alpha', language: 'en', start: 0, end: 50, mode: 'batch' }];

/**
 * Stand-in functions for the definition (the real handlers run in pipelineRun.test.ts): a plan of
 * one wave (SHARDS, 3 copies, polls of 60 s) then done, a worker answering `answers` in turn, the
 * SQL step and the report succeeding; every payload recorded, S3 in memory.
 */
function pipelineStubs(answers: readonly WorkerOutput[]) {
  const calls: Record<'plan' | 'worker' | 'report' | 'recordFailure', Json[]> = { plan: [], worker: [], report: [], recordFailure: [] };
  const objects = new Map<string, string>();
  const fn = (id: string): string => {
    const arn = [...allStates(s.definition).values()].map((st) => st.Resource).find((r): r is string => typeof r === 'string' && r.includes(`function:Pipeline${id}Function`));
    if (!arn) throw new Error(`no function Pipeline${id} in the definition`);
    return arn;
  };
  const plan: LambdaFunction = async (p) => {
    calls.plan.push(p);
    const first = (p as unknown as PlanEvent).phasesRun?.length === 0;
    const wave = { manifestKey: 'scratch/run-1/wave-0-lambda.json', shardCount: first ? SHARDS.length : 0, maxConcurrency: 3, toleratedFailurePercentage: 0, pollSeconds: 60 };
    objects.set(wave.manifestKey, JSON.stringify(SHARDS));
    return { wave: { phases: first ? ['generate'] : [], lambda: wave, gpu: { manifestKey: 'scratch/run-1/wave-0-gpu.json', shardCount: 0 } }, phasesRun: ['generate'], done: !first, analysis: { queryString: 'SELECT 1' }, expectedCostUsd: 0, capUsd: 1 };
  };
  const integrations: Integrations = {
    lambda: {
      [fn('Plan')]: plan,
      [fn('Worker')]: async (p) => (calls.worker.push(p), answers[calls.worker.length - 1]),
      [fn('Report')]: async (p) => (calls.report.push(p), { resultsPrefix: 'campaigns/far6-demo/results/', files: [] }),
      [fn('RecordFailure')]: async (p) => (calls.recordFailure.push(p), { recorded: true }),
    },
    athenaStartQueryExecutionSync: async () => ({ QueryExecution: { QueryExecutionId: 'q-1', Status: { State: 'SUCCEEDED' } } }),
    s3: {
      getObject: async (_bucket, key) => (objects.has(key) ? Buffer.from(objects.get(key)!) : undefined),
      putObject: async (_bucket, key, body) => void objects.set(key, body),
    },
  };
  return { calls, objects, integrations, fn };
}

describe('Record failure: definition → handler → ledger', () => {
  let server: DynamoServer;
  beforeAll(async () => {
    server = await startDynamoServer();
  });
  afterAll(async () => server.close());

  it('the handler accepts exactly what a caught failure hands it, and the failure lands in the ledger', async () => {
    // prepare: a plan that fails; the real record-failure handler over a ledger on the stand-in
    const plan = s.definition.States['Plan wave']!;
    expect(plan.Catch).toEqual([{ ErrorEquals: ['States.ALL'], ResultPath: '$.failure', Next: 'Record failure' }]);
    const ledger = new DynamoLedger({
      ledgerTable: 'ledger',
      budgetTable: 'budget',
      clientConfig: { endpoint: server.url, region: 'us-east-1', credentials: { accessKeyId: 'test', secretAccessKey: 'test' }, maxAttempts: 1 },
    });
    const quiet = { error: () => {}, info: () => {}, log: () => {}, warn: () => {}, debug: () => {}, trace: () => {} };
    const logger = Object.assign(new Logger({ serviceName: 'test' }), { console: quiet });
    const metrics = Object.assign(new Metrics({ namespace: 'test' }), { console: quiet });
    const recordFailure = createHandler({ ledger, logger, metrics, now: () => new Date('2026-11-30T07:00:00.000Z') });
    const stub = pipelineStubs([]);
    const integrations: Integrations = {
      ...stub.integrations,
      lambda: {
        ...stub.integrations.lambda,
        [stub.fn('Plan')]: async () => {
          throw new SondageError('no plan.json');
        },
        [stub.fn('RecordFailure')]: (event) => recordFailure(event, { functionName: 'rf', awsRequestId: 'r' } as Context),
      },
    };
    // act: the definition, from its start to the Fail state
    const run = await startExecution(s.definition, { campaign: 'far6-demo' }, { name: 'run-9', integrations, validate: false });
    // assess: the execution failed with the plan's error as cause; the failure is in the ledger under the execution's ARN
    expect(run.result).toMatchObject({ status: 'FAILED', error: 'SondageFailed' });
    const failures = await ledger.failures('far6-demo');
    expect(failures).toEqual([{ campaign: 'far6-demo', execution: run.arn, at: '2026-11-30T07:00:00.000Z', error: 'SondageError', cause: expect.stringContaining('"errorMessage":"no plan.json"') as unknown }]);
    expect(run.result).toMatchObject({ cause: failures[0]!.cause });
    await ledger.close();
  });
});

describe('Report', () => {
  it('may run, page and stop Athena queries in the sondage workgroup only, as the report handler does', () => {
    const athena = iamStatements(s.template).filter((st) => st.policy.startsWith('PipelineReport') && st.actions.some((a) => a.startsWith('athena:')));
    expect(athena).toHaveLength(1);
    // Start (with a ClientRequestToken), poll, page the rows, and stop the query still running at the round limit.
    expect([...athena[0]!.actions].sort()).toEqual(['athena:GetQueryExecution', 'athena:GetQueryResults', 'athena:StartQueryExecution', 'athena:StopQueryExecution']);
    expect(JSON.stringify(athena[0]!.resources)).toMatch(/workgroup\//);
  });
});

describe('ProviderSecrets', () => {
  it('lets only the plan and the worker read the provider keys, and tells them where', () => {
    const secrets = Object.keys(s.template.findResources('AWS::SecretsManager::Secret'));
    expect(secrets).toHaveLength(1);
    const readers = iamStatements(s.template)
      .filter((st) => st.actions.includes('secretsmanager:GetSecretValue'))
      .map((st) => ({ policy: st.policy, resources: st.resources }));
    expect(readers.map((r) => r.policy.replace(/RoleDefaultPolicy.*$/, '')).sort()).toEqual(['PipelinePlan', 'PipelineWorker']);
    for (const r of readers) expect(r.resources).toEqual([{ Ref: secrets[0] }]);
    s.template.hasResourceProperties('AWS::Lambda::Function', {
      Description: Match.stringLikeRegexp('shards against a model API'),
      Environment: { Variables: Match.objectLike({ SONDAGE_PROVIDER_SECRET_ARN: { Ref: secrets[0] } }) },
    });
  });
});

describe('provider bedrock', () => {
  it('lets only the worker call Converse (bedrock:InvokeModel), on foundation models and this account\'s inference profiles, nothing else of Bedrock', () => {
    const bedrock = iamStatements(s.template).filter((st) => st.actions.some((a) => a.startsWith('bedrock:')));
    expect(bedrock.map((st) => st.policy.replace(/RoleDefaultPolicy.*$/, ''))).toEqual(['PipelineWorker']);
    expect(bedrock[0]!.actions).toEqual(['bedrock:InvokeModel']);
    expect(bedrock[0]!.resources.map((r) => tokenText(r))).toEqual([
      expect.stringMatching(/^arn:.*:bedrock:\*::foundation-model\/\*$/),
      'arn:aws:bedrock:us-east-1:123456789012:inference-profile/*',
    ]);
  });
});

describe('IAM and cdk-nag', () => {
  it('grants no wildcard action, and no data action on every resource', () => {
    const statements = iamStatements(s.template);
    expect(statements.length).toBeGreaterThan(5);
    expect(statements.flatMap((st) => st.actions.filter((a) => a.includes('*')).map((a) => `${st.policy}: ${a}`))).toEqual([]);
    const dataOnStar = statements.filter((st) => st.resources.includes('*') && st.actions.some((a) => /^(s3|dynamodb|glue|athena):/.test(a)));
    expect(dataOnStar).toEqual([]);
  });

  it('grants the report and record-failure exactly what their handlers call', () => {
    const actionsOf = (prefix: string) =>
      iamStatements(s.template)
        .filter((st) => st.policy.startsWith(prefix))
        .flatMap((st) => st.actions.filter((a) => !a.startsWith('logs:') && !a.startsWith('xray:')).map((a) => `${a} ${JSON.stringify(st.resources)}`));
    // record-failure: DynamoLedger.recordFailure, one UpdateItem on the ledger table
    const recordFailure = actionsOf('PipelineRecordFailure');
    expect(recordFailure).toHaveLength(1);
    expect(recordFailure[0]).toMatch(/^dynamodb:UpdateItem .*CampaignDataLedger/);
    // the report: reads the campaign, writes its results, runs Athena, reads the budget item's
    // overrun (one GetItem); no other ledger call, no delete, no scratch
    const report = actionsOf('PipelineReport');
    expect(report.filter((a) => a.startsWith('s3:DeleteObject'))).toEqual([]);
    const dynamo = report.filter((a) => a.startsWith('dynamodb:'));
    expect(dynamo).toHaveLength(1);
    expect(dynamo[0]).toMatch(/^dynamodb:GetItem .*CampaignDataBudget/);
    expect(report.filter((a) => a.startsWith('s3:PutObject') && !/campaigns\/\*\/results\/\*|athena-results/.test(a))).toEqual([]);
    expect(report.some((a) => a.startsWith('s3:PutObject') && a.includes('campaigns/*/results/*'))).toBe(true);
  });

  it('grants the state machine the bucket under scratch/ (manifests, Map results) and what Athena reads and writes, never the whole bucket', () => {
    const s3Of = iamStatements(s.template)
      .filter((st) => st.policy.startsWith('PipelineStateMachineRole'))
      .flatMap((st) => st.actions.filter((a) => a.startsWith('s3:')).flatMap((a) => st.resources.map((r) => ({ action: a, resource: tokenText(r) }))));
    expect(s3Of.length).toBeGreaterThan(0);
    // every object grant names a prefix: no "<bucket>/*"
    expect(s3Of.filter(({ resource }) => /CampaignDataBucket[^/]*\/\*$/i.test(resource) || resource === '*')).toEqual([]);
    expect(s3Of).toEqual(expect.arrayContaining([
      { action: 's3:GetObject', resource: expect.stringMatching(/\/scratch\/\*$/) as unknown },
      { action: 's3:PutObject', resource: expect.stringMatching(/\/scratch\/map-results\/\*$/) as unknown },
    ]));
    for (const { action, resource } of s3Of.filter((x) => x.action === 's3:PutObject')) expect(resource, action).toMatch(/\/scratch\/map-results\/\*$|athena-results/);
  });

  it('has no unacknowledged AwsSolutions finding', () => {
    expect(s.nagFindings).toEqual([]);
  });

  it('acknowledges only findings cdk-nag makes: every acknowledgement matches one', () => {
    // cdk-nag asks isAcknowledged for each finding; record which acknowledgement answered each one.
    const used = new Set<string>();
    const pack = new AwsSolutionsChecks(s.app) as unknown as { isAcknowledged(node: IConstruct, ruleId: string): boolean; validateScope(scope: IConstruct): unknown };
    pack.isAcknowledged = (node, ruleId) => {
      for (let c: IConstruct | undefined = node; c; c = c.node.scope) {
        for (const m of c.node.metadata) {
          if (m.type !== 'aws:cdk:acknowledged-rules') continue;
          const id = Object.keys(m.data as Record<string, string>).map((k) => k.replace(/^annotation::/i, '')).find((k) => k === ruleId);
          if (id !== undefined) {
            used.add(`${c.node.path} ${id}`);
            return true;
          }
        }
      }
      return false;
    };
    pack.validateScope(s.app);
    const acks = s.app.node
      .findAll()
      .flatMap((c) => c.node.metadata.filter((m) => m.type === 'aws:cdk:acknowledged-rules').flatMap((m) => Object.keys(m.data as Record<string, string>).map((k) => `${c.node.path} ${k.replace(/^annotation::/i, '')}`)));
    // Only cdk-nag's (aws-cdk-lib adds CloudFormation-Validate ones of its own).
    expect(acks.filter((a) => / AwsSolutions-/.test(a) && !used.has(a))).toEqual([]);
  });

  it('explains every acknowledgement', () => {
    const acks = s.app.node
      .findAll()
      .flatMap((c) => c.node.metadata.filter((m) => m.type === 'aws:cdk:acknowledged-rules'))
      .flatMap((m) => Object.entries(m.data as Record<string, string>));
    expect(acks.length).toBeGreaterThan(10);
    for (const [id, reason] of acks) expect(reason.length, `acknowledgement of ${id}`).toBeGreaterThan(60);
  });
});
