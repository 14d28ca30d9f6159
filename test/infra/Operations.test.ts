import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { MetricUnit } from '@aws-lambda-powertools/metrics';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
// eslint-disable-next-line no-restricted-imports -- the infra tests inspect the CDK app; lib/ still may not import it
import { App, Stack } from 'aws-cdk-lib';
// eslint-disable-next-line no-restricted-imports -- the infra tests inspect the CDK app; lib/ still may not import it
import { Match, Template } from 'aws-cdk-lib/assertions';
// eslint-disable-next-line no-restricted-imports -- the infra tests inspect the CDK app; lib/ still may not import it
import * as sfn from 'aws-cdk-lib/aws-stepfunctions';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { Operations } from '../../infra/constructs/Operations.js';
import { powertools } from '../../functions/shared/powertools.js';
import {
  ALARM_TOPIC_OUTPUT,
  CONTEXT,
  COST_TAG,
  DYNAMO_THROTTLE_PERIODS,
  METRICS_NAMESPACE,
  OPS_CONTEXT,
  SPEND_ALARM_SHARE,
  SPEND_METRICS,
  STALL_METRIC,
  STALL_PERIODS,
  WORKER_SERVICE,
} from '../../lib/config/index.js';
import { REPO_ROOT } from '../helpers/campaigns.js';
import { synthesize } from './synth.js';
import type { Synthesized } from './synth.js';

type Resource = { Type: string; Properties: Record<string, unknown> };
type Synth = Pick<Synthesized, 'template'>;
const resources = (s: Synth, type: string): Record<string, Resource> => s.template.findResources(type) as Record<string, Resource>;
const topicRef = (s: Synth): { Ref: string } => ({ Ref: Object.keys(resources(s, 'AWS::SNS::Topic'))[0]! });

let dir: string;
/** The whole app with the GPU route, two alarm addresses and a monthly budget (test/infra/SondageStack.test.ts checks it without them, cdk-nag included). */
let full: Synthesized;
/** The construct alone over a one-state machine, without any operations context: what it leaves out. */
let bare: Synth;
beforeAll(() => {
  dir = mkdtempSync(join(tmpdir(), 'sondage-ops-'));
  mkdirSync(join(dir, 'image'));
  writeFileSync(join(dir, 'image', 'Dockerfile'), 'FROM public.ecr.aws/docker/library/alpine:3\n');
  const stack = new Stack(new App(), 'Bare');
  const stateMachine = new sfn.StateMachine(stack, 'Machine', { definitionBody: sfn.DefinitionBody.fromChainable(new sfn.Pass(stack, 'Nothing')) });
  new Operations(stack, 'Operations', { stateMachine, athenaWorkgroup: 'wg', ...Operations.contextProps(stack) });
  bare = { template: Template.fromStack(stack) };
  full = synthesize({
    [CONTEXT.gpu]: 'true',
    [OPS_CONTEXT.alarmEmail]: 'ops@example.com, oncall@example.org',
    [OPS_CONTEXT.monthlyBudgetUsd]: '250',
  });
});
afterAll(() => rmSync(dir, { recursive: true, force: true }));

describe('Operations: the alarm topic', () => {
  it('is encrypted with a rotated customer managed key, refuses publishing without TLS, and is an output', () => {
    const keys = resources(full, 'AWS::KMS::Key');
    expect(Object.values(keys)).toEqual([expect.objectContaining({ Properties: expect.objectContaining({ EnableKeyRotation: true }) })]);
    full.template.hasResourceProperties('AWS::SNS::Topic', { KmsMasterKeyId: { 'Fn::GetAtt': [Object.keys(keys)[0], 'Arn'] } });
    full.template.hasResourceProperties('AWS::SNS::TopicPolicy', {
      PolicyDocument: {
        Statement: Match.arrayWith([Match.objectLike({ Effect: 'Deny', Action: 'sns:Publish', Condition: { Bool: { 'aws:SecureTransport': 'false' } } })]),
      },
    });
    full.template.hasOutput(ALARM_TOPIC_OUTPUT, { Value: topicRef(full) });
  });

  it('lets CloudWatch and AWS Budgets (and with the GPU route EventBridge) use the key and publish, for this account only', () => {
    const [key] = Object.values(resources(full, 'AWS::KMS::Key'));
    const statements = (key!.Properties.KeyPolicy as { Statement: { Principal?: { Service?: string }; Action: string | string[]; Condition?: unknown }[] }).Statement;
    const byService = (service: string) => statements.find((st) => st.Principal?.Service === service);
    const arn = (s: unknown): string => JSON.stringify(s);
    for (const [service, sourceArn] of [
      ['cloudwatch.amazonaws.com', /":cloudwatch:",\{"Ref":"AWS::Region"\},":",\{"Ref":"AWS::AccountId"\},":alarm:Sondage-\*"/],
      ['budgets.amazonaws.com', /":budgets::",\{"Ref":"AWS::AccountId"\},":\*"/],
    ] as const) {
      const st = byService(service) as { Condition: { ArnLike: { 'aws:SourceArn': unknown } } } | undefined;
      expect(st, service).toMatchObject({ Action: ['kms:Decrypt', 'kms:GenerateDataKey*'], Condition: { StringEquals: { 'aws:SourceAccount': { Ref: 'AWS::AccountId' } } } });
      expect(arn(st!.Condition.ArnLike['aws:SourceArn'])).toMatch(sourceArn);
    }
    expect(byService('events.amazonaws.com')).toBeDefined();
    full.template.hasResourceProperties('AWS::SNS::TopicPolicy', {
      PolicyDocument: {
        Statement: Match.arrayWith([
          Match.objectLike({
            Effect: 'Allow',
            Action: 'sns:Publish',
            Principal: { Service: 'budgets.amazonaws.com' },
            Condition: Match.objectLike({ StringEquals: { 'aws:SourceAccount': { Ref: 'AWS::AccountId' } } }),
          }),
          Match.objectLike({ Effect: 'Allow', Action: 'sns:Publish', Principal: { Service: 'events.amazonaws.com' } }),
        ]),
      },
    });
  });

  it('subscribes each address of -c sondage:alarmEmail, and none without it', () => {
    expect(Object.keys(resources(bare, 'AWS::SNS::Subscription'))).toEqual([]);
    const subs = Object.values(resources(full, 'AWS::SNS::Subscription')).map((r) => r.Properties);
    expect(subs.map((p) => [p.Protocol, p.Endpoint]).sort()).toEqual([
      ['email', 'oncall@example.org'],
      ['email', 'ops@example.com'],
    ]);
    for (const p of subs) expect(p.TopicArn).toEqual(topicRef(full));
  });
});

describe('Operations: alarms', () => {
  const alarms = (s: Synth) => Object.values(resources(s, 'AWS::CloudWatch::Alarm')).map((r) => r.Properties);

  it('send every alarm to the topic, and treat no data as nothing wrong', () => {
    for (const s of [full, bare]) {
      const all = alarms(s);
      expect(all.length).toBeGreaterThanOrEqual(4);
      for (const a of all) {
        expect(a.AlarmActions, String(a.AlarmName)).toEqual([topicRef(s)]);
        expect(a.TreatMissingData).toBe('notBreaching');
      }
    }
  });

  it.each([
    ['ExecutionsFailed', 'Sondage-executions-failed'],
    ['ExecutionsTimedOut', 'Sondage-executions-timed-out'],
    ['ExecutionsAborted', 'Sondage-executions-aborted'],
  ])('watch the state machine: %s ≥ 1 in 5 minutes', (metric, name) => {
    const machine = Object.keys(resources(full, 'AWS::StepFunctions::StateMachine'))[0]!;
    full.template.hasResourceProperties('AWS::CloudWatch::Alarm', {
      AlarmName: name,
      Namespace: 'AWS/States',
      MetricName: metric,
      Dimensions: [{ Name: 'StateMachineArn', Value: { Ref: machine } }],
      Statistic: 'Sum',
      Period: 300,
      Threshold: 1,
      ComparisonOperator: 'GreaterThanOrEqualToThreshold',
      EvaluationPeriods: 1,
    });
  });

  it('watch every Lambda function of the stack: errors in one 5-minute period, throttles sustained over three', () => {
    for (const s of [full, bare]) {
      const functions = Object.keys(resources(s, 'AWS::Lambda::Function')).sort();
      expect(functions.length).toBeGreaterThanOrEqual(s === bare ? 0 : 4); // a function added later is watched too
      const watched = (metric: string) =>
        alarms(s)
          .filter((a) => a.Namespace === 'AWS/Lambda' && a.MetricName === metric)
          .map((a) => {
            expect(a).toMatchObject({ Statistic: 'Sum', Period: 300, Threshold: 1 });
            const periods = metric === 'Throttles' ? 3 : 1;
            expect([a.EvaluationPeriods, a.DatapointsToAlarm]).toEqual([periods, periods]);
            return ((a.Dimensions as { Name: string; Value: { Ref: string } }[])[0]!.Value.Ref);
          })
          .sort();
      expect(watched('Errors')).toEqual(functions);
      expect(watched('Throttles')).toEqual(functions);
    }
    full.template.hasResourceProperties('AWS::CloudWatch::Alarm', { AlarmName: 'Sondage-worker-errors' });
    full.template.hasResourceProperties('AWS::CloudWatch::Alarm', { AlarmName: 'Sondage-record-failure-throttles' });
  });

  it(`fire when any campaign has spent ${SPEND_ALARM_SHARE * 100} % of its cap (the worker's metric, maximum over campaigns)`, () => {
    full.template.hasResourceProperties('AWS::CloudWatch::Alarm', {
      AlarmName: 'Sondage-spend-near-cap',
      Metrics: [
        Match.objectLike({
          // Any service: the worker and the GPU job both publish it.
          Expression: `SELECT MAX(${SPEND_METRICS.share}) FROM SCHEMA("${METRICS_NAMESPACE}", campaign, service)`,
          Period: 300,
          ReturnData: true,
        }),
      ],
      Threshold: SPEND_ALARM_SHARE,
      ComparisonOperator: 'GreaterThanOrEqualToThreshold',
    });
  });

  it.each([
    ['LedgerTable', 'Sondage-ledger-table-throttled'],
    ['BudgetTable', 'Sondage-budget-table-throttled'],
  ])('fire when the %s DynamoDB table throttles in 3 consecutive 5-minute periods (read + write throttle events)', (id, name) => {
    const table = Object.entries(resources(full, 'AWS::DynamoDB::GlobalTable')).find(([logical]) => logical.includes(id.replace('Table', '')))?.[0];
    expect(table, `the ${id} table`).toBeDefined();
    const events = (metric: string) =>
      Match.objectLike({ MetricStat: Match.objectLike({ Metric: Match.objectLike({ Namespace: 'AWS/DynamoDB', MetricName: metric, Dimensions: [{ Name: 'TableName', Value: { Ref: table } }] }), Period: 300, Stat: 'Sum' }), ReturnData: false });
    full.template.hasResourceProperties('AWS::CloudWatch::Alarm', {
      AlarmName: name,
      Metrics: Match.arrayWith([Match.objectLike({ Expression: 'FILL(r, 0) + FILL(w, 0)', ReturnData: true }), events('ReadThrottleEvents'), events('WriteThrottleEvents')]),
      Threshold: 1,
      ComparisonOperator: 'GreaterThanOrEqualToThreshold',
      EvaluationPeriods: DYNAMO_THROTTLE_PERIODS,
      DatapointsToAlarm: DYNAMO_THROTTLE_PERIODS,
    });
  });

  it(`fire when every worker invocation for ${STALL_PERIODS * 5} minutes settled nothing (the worker's ${STALL_METRIC}, minimum over campaigns)`, () => {
    full.template.hasResourceProperties('AWS::CloudWatch::Alarm', {
      AlarmName: 'Sondage-progress-stalled',
      Metrics: [Match.objectLike({ Expression: `SELECT MIN(${STALL_METRIC}) FROM SCHEMA("${METRICS_NAMESPACE}", campaign, service) WHERE service = '${WORKER_SERVICE}'`, Period: 300, ReturnData: true })],
      Threshold: 1,
      EvaluationPeriods: STALL_PERIODS,
      DatapointsToAlarm: STALL_PERIODS,
      TreatMissingData: 'notBreaching',
    });
  });

  it('watch the namespace and service the handlers publish under (the spend alarm reads the worker)', () => {
    for (const name of ['plan', 'worker', 'report', 'record-failure']) {
      // Each entry point builds its metrics with powertools(name) (functions/shared/powertools.ts)...
      const source = readFileSync(join(REPO_ROOT, 'functions', name, 'handler.ts'), 'utf8');
      expect(source, name).toContain(`powertools('${name}')`);
      // ...which publishes in the namespace, under the service, the alarms and dashboard read.
      const { metrics } = powertools(name);
      metrics.addMetric('Probe', MetricUnit.Count, 1);
      const emf = metrics.serializeMetrics() as unknown as { _aws: { CloudWatchMetrics: { Namespace: string }[] }; service: string };
      metrics.clearMetrics();
      expect(emf._aws.CloudWatchMetrics[0]?.Namespace, name).toBe(METRICS_NAMESPACE);
      expect(emf.service, name).toBe(`sondage-${name}`);
    }
    expect(WORKER_SERVICE).toBe('sondage-worker');
  });
});

describe('Operations: AWS Batch job failures (GPU route)', () => {
  it('send one message per failed job of the stack\'s queues, leaving out array children', () => {
    // One queue per instance type and capacity (Spot, on-demand): every one of them is watched.
    const queues = Object.keys(resources(full, 'AWS::Batch::JobQueue'));
    expect(queues.length).toBeGreaterThanOrEqual(1);
    const rules = Object.values(resources(full, 'AWS::Events::Rule')).map((r) => r.Properties);
    expect(rules).toHaveLength(1);
    expect(rules[0]).toMatchObject({
      EventPattern: {
        source: ['aws.batch'],
        'detail-type': ['Batch Job State Change'],
        detail: { status: ['FAILED'], jobQueue: queues.map((q) => ({ 'Fn::GetAtt': [q, 'JobQueueArn'] })), arrayProperties: { index: [{ exists: false }] } },
      },
      Targets: [expect.objectContaining({ Arn: topicRef(full), InputTransformer: expect.objectContaining({ InputPathsMap: expect.objectContaining({ 'detail-statusReason': '$.detail.statusReason' }) }) })],
    });
  });

  it('have no rule without the GPU route', () => {
    expect(Object.keys(resources(bare, 'AWS::Events::Rule'))).toEqual([]);
  });
});

describe('Operations: AWS Budgets', () => {
  it('budgets the month on the stack\'s cost tag, notifying the topic at 80 % and 100 % actual and 100 % forecast', () => {
    full.template.hasResourceProperties('AWS::Budgets::Budget', {
      Budget: {
        BudgetName: 'Sondage-monthly',
        BudgetType: 'COST',
        TimeUnit: 'MONTHLY',
        BudgetLimit: { Amount: 250, Unit: 'USD' },
        FilterExpression: { Tags: { Key: COST_TAG, Values: ['Sondage'], MatchOptions: ['EQUALS'] } },
      },
      NotificationsWithSubscribers: [
        { Notification: { NotificationType: 'ACTUAL', ComparisonOperator: 'GREATER_THAN', Threshold: 80, ThresholdType: 'PERCENTAGE' }, Subscribers: [{ SubscriptionType: 'SNS', Address: topicRef(full) }] },
        { Notification: { NotificationType: 'ACTUAL', ComparisonOperator: 'GREATER_THAN', Threshold: 100, ThresholdType: 'PERCENTAGE' }, Subscribers: [{ SubscriptionType: 'SNS', Address: topicRef(full) }] },
        { Notification: { NotificationType: 'FORECASTED', ComparisonOperator: 'GREATER_THAN', Threshold: 100, ThresholdType: 'PERCENTAGE' }, Subscribers: [{ SubscriptionType: 'SNS', Address: topicRef(full) }] },
      ],
    });
  });

  it('is absent without -c sondage:monthlyBudgetUsd', () => {
    expect(Object.keys(resources(bare, 'AWS::Budgets::Budget'))).toEqual([]);
  });

  it('tags the resources with the cost tag it filters on', () => {
    for (const type of ['AWS::S3::Bucket', 'AWS::Lambda::Function', 'AWS::StepFunctions::StateMachine', 'AWS::SNS::Topic', 'AWS::CloudWatch::Alarm']) {
      const all = Object.values(resources(full, type));
      expect(all.length, type).toBeGreaterThan(0);
      for (const r of all) expect(r.Properties.Tags, type).toEqual(expect.arrayContaining([{ Key: COST_TAG, Value: 'Sondage' }]));
    }
    // The GPU route's Spot instances (its largest AWS cost) are tagged through the compute environment.
    full.template.hasResourceProperties('AWS::Batch::ComputeEnvironment', { ComputeResources: Match.objectLike({ Tags: { [COST_TAG]: 'Sondage' } }) });
    // DynamoDB global tables carry their tags per replica.
    for (const r of Object.values(resources(full, 'AWS::DynamoDB::GlobalTable'))) {
      expect((r.Properties.Replicas as { Tags: unknown }[])[0]!.Tags).toEqual(expect.arrayContaining([{ Key: COST_TAG, Value: 'Sondage' }]));
    }
  });

  it.each([
    [OPS_CONTEXT.monthlyBudgetUsd, 'lots', 'expected a positive amount of USD per month'],
    [OPS_CONTEXT.monthlyBudgetUsd, '-5', 'expected a positive amount of USD per month'],
    [OPS_CONTEXT.monthlyBudgetUsd, '0', 'expected a positive amount of USD per month'],
    [OPS_CONTEXT.alarmEmail, 'ops@example.com,not-an-address', '"not-an-address" is not an email address'],
  ])('refuses -c %s=%s, naming the key and what it takes', (key, value, message) => {
    const app = new App({ context: { [key]: value } });
    expect(() => Operations.contextProps(app)).toThrow(`-c ${key}=${value}: `);
    expect(() => Operations.contextProps(app)).toThrow(message);
  });
});

describe('Operations: the dashboard', () => {
  const body = (s: Synth): string => JSON.stringify(Object.values(resources(s, 'AWS::CloudWatch::Dashboard'))[0]!.Properties.DashboardBody);

  it('shows executions, shard throughput, Lambda errors/duration/throttles, spend vs cap and Athena bytes scanned', () => {
    const text = body(full);
    for (const title of [
      'Executions (per 5 minutes)',
      'Alarms',
      'Shard throughput: items per 5 minutes, by campaign',
      'Lambda errors',
      'Lambda duration (p95, ms)',
      'Lambda throttles',
      'Spend vs cap (USD), by campaign',
      'Share of the cap spent, by campaign',
      'Athena bytes scanned (per hour)',
    ]) {
      expect(text, title).toContain(`\\"title\\":\\"${title}\\"`);
    }
    for (const metric of ['ExecutionsFailed', 'ExecutionsTimedOut', 'ExecutionsAborted', 'ItemsDone', 'ItemsFailed', 'Duration', 'Throttles', SPEND_METRICS.spent, SPEND_METRICS.cap, SPEND_METRICS.share]) {
      expect(text, metric).toContain(metric);
    }
    expect(text).toContain('{AWS/Athena,QueryState,QueryType,WorkGroup} WorkGroup=\\\\\\"sondage-Sondage\\\\\\" MetricName=\\\\\\"ProcessedBytes\\\\\\"');
    expect(text).toContain('AWS Batch jobs failed');
    expect(text).toContain('TriggeredRules');
  });

  it('leaves the failed Batch jobs out without the GPU route', () => {
    expect(body(bare)).toContain('Athena bytes scanned');
    expect(body(bare)).not.toContain('AWS Batch jobs failed');
  });
});

describe('Operations: cdk-nag', () => {
  it('leaves no unacknowledged AwsSolutions finding with every option on', () => {
    expect(full.nagFindings).toEqual([]);
  });
});
