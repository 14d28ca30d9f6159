// eslint-disable-next-line no-restricted-imports -- the infra tests inspect the CDK app; lib/ still may not import it
import { Match } from 'aws-cdk-lib/assertions';
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
import { SQL_NAMES } from '../../lib/analysis/runSql.js';
import { DEFAULT_BYTES_SCANNED_CUTOFF } from '../../lib/config/index.js';
import { TABLE_SCHEMAS } from '../../lib/store/schemas.js';
import { allStates, iamStatements, synthesize, tokenText } from './synth.js';
import type { AslState, Synthesized } from './synth.js';

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

  it.each(['prompts', 'replies', 'readings'] as const)('describes %s with the columns of lib/store/schemas.ts and partition projection', (name) => {
    const tables = s.template.findResources('AWS::Glue::Table', { Properties: { TableInput: { Name: name } } });
    const input = (Object.values(tables)[0] as { Properties: { TableInput: Record<string, unknown> } }).Properties.TableInput as {
      PartitionKeys: { Name: string }[];
      Parameters: Record<string, unknown>;
      StorageDescriptor: { Columns: { Name: string; Type: string }[] };
    };
    const columns = input.StorageDescriptor.Columns.map((c) => c.Name);
    expect(columns).toEqual(TABLE_SCHEMAS[name].map((c) => c.name));
    const keys = input.PartitionKeys.map((k) => k.Name);
    expect(keys).toEqual(['campaign_key', 'phase_key', 'model', 'language']);
    expect(keys.filter((k) => columns.includes(k))).toEqual([]); // Athena rejects a key repeating a column
    expect(input.Parameters).toMatchObject({
      'projection.enabled': 'true',
      'projection.model.type': 'injected',
      'projection.language.type': 'enum',
      'projection.language.values': 'en,zh,de,ja,ko,fr',
    });
    expect(tokenText(input.Parameters['storage.location.template'])).toMatch(
      new RegExp(`/campaigns/\\$\\{campaign_key\\}/\\$\\{phase_key\\}/${name}/model=\\$\\{model\\}/language=\\$\\{language\\}/$`),
    );
  });

  it('saves every analysis SQL file as a named query with its placeholders filled', () => {
    const queries = Object.values(s.template.findResources('AWS::Athena::NamedQuery')).map(
      (q) => (q as { Properties: { Name: string; QueryString: string } }).Properties,
    );
    expect(queries.map((q) => q.Name).sort()).toEqual(SQL_NAMES.map((n) => `sondage-${n}`).sort());
    for (const q of queries) {
      expect(q.QueryString).not.toContain('{{');
      expect(q.QueryString).toContain("campaign_key = 'far6-demo'");
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

  it('runs plan → generate → judge → Athena SQL → report', () => {
    const order: string[] = [];
    for (let name: string | undefined = s.definition.StartAt; name !== undefined; ) {
      order.push(name);
      name = s.definition.States[name]?.Next as string | undefined;
    }
    expect(order).toEqual(['Plan', 'Run generate shards', 'Run judge shards', 'SqlStep', 'Report', 'Done']);
    expect(s.definition.States.SqlStep).toMatchObject({
      Parameters: { 'QueryString.$': '$.plan.analysis.queryString', WorkGroup: expect.any(String) as unknown },
    });
    expect(String(s.definition.States.SqlStep!.Resource)).toMatch(/:states:::athena:startQueryExecution\.sync$/);
  });

  it('fans each phase out as a Distributed Map over the S3 manifest, with concurrency, tolerance and batching from the plan', () => {
    expect(maps().map(([n]) => n)).toEqual(['Run generate shards', 'Run judge shards']);
    for (const [name, map] of maps()) {
      const phase = name.split(' ')[1]!;
      expect(map).toMatchObject({
        ItemProcessor: { ProcessorConfig: { Mode: 'DISTRIBUTED', ExecutionType: 'STANDARD' } },
        ItemReader: { Resource: expect.stringMatching(/:states:::s3:getObject$/) as unknown, ReaderConfig: { InputType: 'JSON' }, Parameters: { 'Key.$': `$.plan.${phase}.manifestKey` } },
        MaxConcurrencyPath: `$.plan.${phase}.maxConcurrency`,
        ToleratedFailurePercentagePath: `$.plan.${phase}.toleratedFailurePercentage`,
        ItemBatcher: { MaxItemsPerBatch: 4, BatchInput: { 'campaign.$': '$.campaign', phase, 'execution.$': '$$.Execution.Name' } },
        ResultWriter: expect.objectContaining({ Resource: expect.stringMatching(/:states:::s3:putObject$/) as unknown }) as unknown,
      });
    }
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
    const result = aslValidator(s.definition);
    expect(result.errorsText('\n')).toBe('');
    expect(result.isValid).toBe(true);
  });

  it('bundles the handlers that exist with esbuild, and deploys the others as placeholders that fail loudly', () => {
    s.template.hasResourceProperties('AWS::Lambda::Function', {
      Description: Match.stringLikeRegexp('records a failed execution step'),
      Handler: 'index.handler',
      Code: { S3Bucket: Match.anyValue(), S3Key: Match.stringLikeRegexp('\\.zip$') },
    });
    s.template.hasResourceProperties('AWS::Lambda::Function', {
      Description: Match.stringLikeRegexp('writes the shard manifests'),
      Code: { ZipFile: Match.stringLikeRegexp('handler is not deployed yet') },
    });
  });

  it('caps the worker with reserved concurrency', () => {
    s.template.hasResourceProperties('AWS::Lambda::Function', {
      Description: Match.stringLikeRegexp('shards against a model API'),
      ReservedConcurrentExecutions: 100,
      Runtime: 'nodejs24.x',
      Environment: { Variables: Match.objectLike({ SONDAGE_BUCKET: Match.anyValue(), SONDAGE_BUDGET_TABLE: Match.anyValue() }) },
    });
  });
});

/** Step Functions' JSONPath parameters for the forms the definition uses (`$.a.b`, `$$.Execution.Id`). */
function applyParameters(parameters: Record<string, unknown>, input: unknown, context: unknown): Record<string, unknown> {
  const at = (root: unknown, path: string): unknown =>
    path
      .split('.')
      .slice(1)
      .reduce<unknown>((v, k) => (v as Record<string, unknown> | undefined)?.[k], root);
  return Object.fromEntries(
    Object.entries(parameters).map(([k, v]) =>
      k.endsWith('.$') ? [k.slice(0, -2), String(v).startsWith('$$.') ? at(context, String(v).slice(1)) : at(input, String(v))] : [k, v],
    ),
  );
}

describe('Record failure: definition → handler → ledger', () => {
  let server: DynamoServer;
  beforeAll(async () => {
    server = await startDynamoServer();
  });
  afterAll(async () => server.close());

  it('the handler accepts exactly what a caught failure hands it, and the failure lands in the ledger', async () => {
    // prepare: a Plan failure as Step Functions passes it on (Catch ResultPath $.failure)
    const plan = s.definition.States.Plan!;
    expect(plan.Catch).toEqual([{ ErrorEquals: ['States.ALL'], ResultPath: '$.failure', Next: 'Record failure' }]);
    const stateInput = { campaign: 'far6-demo', failure: { Error: 'States.TaskFailed', Cause: '{"errorMessage":"no plan.json"}' } };
    const executionId = 'arn:aws:states:us-east-1:123456789012:execution:sondage-Sondage:run-9';
    const event = applyParameters(s.definition.States['Record failure']!.Parameters as Record<string, unknown>, stateInput, { Execution: { Id: executionId } });
    const ledger = new DynamoLedger({
      ledgerTable: 'ledger',
      budgetTable: 'budget',
      clientConfig: { endpoint: server.url, region: 'us-east-1', credentials: { accessKeyId: 'test', secretAccessKey: 'test' }, maxAttempts: 1 },
    });
    const quiet = { error: () => {}, info: () => {}, log: () => {}, warn: () => {}, debug: () => {}, trace: () => {} };
    const logger = Object.assign(new Logger({ serviceName: 'test' }), { console: quiet });
    const metrics = Object.assign(new Metrics({ namespace: 'test' }), { console: quiet });
    // act
    await createHandler({ ledger, logger, metrics, now: () => new Date('2026-11-30T07:00:00.000Z') })(event, { functionName: 'rf', awsRequestId: 'r' } as Context);
    // assess
    expect(await ledger.failures('far6-demo')).toEqual([
      { campaign: 'far6-demo', execution: executionId, at: '2026-11-30T07:00:00.000Z', error: 'States.TaskFailed', cause: '{"errorMessage":"no plan.json"}' },
    ]);
    await ledger.close();
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

describe('IAM and cdk-nag', () => {
  it('grants no wildcard action, and no data action on every resource', () => {
    const statements = iamStatements(s.template);
    expect(statements.length).toBeGreaterThan(5);
    expect(statements.flatMap((st) => st.actions.filter((a) => a.includes('*')).map((a) => `${st.policy}: ${a}`))).toEqual([]);
    const dataOnStar = statements.filter((st) => st.resources.includes('*') && st.actions.some((a) => /^(s3|dynamodb|glue|athena):/.test(a)));
    expect(dataOnStar).toEqual([]);
  });

  it('has no unacknowledged AwsSolutions finding', () => {
    expect(s.nagFindings).toEqual([]);
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
