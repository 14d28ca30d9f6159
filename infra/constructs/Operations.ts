import { CfnOutput, Duration, Stack } from 'aws-cdk-lib';
import * as batch from 'aws-cdk-lib/aws-batch';
import * as budgets from 'aws-cdk-lib/aws-budgets';
import * as cloudwatch from 'aws-cdk-lib/aws-cloudwatch';
import * as cwActions from 'aws-cdk-lib/aws-cloudwatch-actions';
import type * as dynamodb from 'aws-cdk-lib/aws-dynamodb';
import * as events from 'aws-cdk-lib/aws-events';
import * as targets from 'aws-cdk-lib/aws-events-targets';
import * as iam from 'aws-cdk-lib/aws-iam';
import * as kms from 'aws-cdk-lib/aws-kms';
import * as sns from 'aws-cdk-lib/aws-sns';
import * as subscriptions from 'aws-cdk-lib/aws-sns-subscriptions';
import type * as sfn from 'aws-cdk-lib/aws-stepfunctions';
import { Construct } from 'constructs';
import type { IConstruct } from 'constructs';
import {
  ALARM_TOPIC_OUTPUT,
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
import { SondageError } from '../../lib/errors.js';
import { Handler } from './Handler.js';

export interface OperationsProps {
  /** The campaign state machine: executions failed, timed out and aborted. */
  readonly stateMachine: sfn.IStateMachine;
  /** The Athena workgroup whose bytes scanned the dashboard shows. */
  readonly athenaWorkgroup: string;
  /** Subscribed by email to the alarm topic (each address confirms once). Default none. */
  readonly alarmEmails?: readonly string[];
  /** Monthly AWS Budgets limit in USD on the stack's cost tag (COST_TAG). Default: no budget. */
  readonly monthlyBudgetUsd?: number;
  /** DynamoDB tables whose sustained throttling is an alarm (the ledger and the budget). Default none. */
  readonly tables?: readonly { readonly id: string; readonly table: dynamodb.ITable }[];
}

const FIVE_MINUTES = Duration.minutes(5);
const EMAIL = /^[^@\s,]+@[^@\s,]+\.[^@\s,]+$/;

/** `PipelineWorker` for a Handler at `Sondage/Pipeline/Worker`: stable as long as its construct path is. */
function pathId(scope: IConstruct): string {
  return scope.node.path.split('/').slice(1).join('').replace(/[^A-Za-z0-9]/g, '');
}

/**
 * What watches a deployed stack: one SNS topic (KMS-encrypted, TLS only,
 * optional email subscribers) that receives
 * - CloudWatch alarms: state machine executions failed, timed out or aborted; errors and sustained
 *   throttles of every Lambda function of the stack (every `Handler`, found in the stack, so a
 *   function added to the pipeline is watched without a change here); a campaign's spend at
 *   SPEND_ALARM_SHARE of its cap (`SpentShareOfCap`, published by the worker and the GPU job,
 *   maximum over campaigns);
 * - a message per failed AWS Batch job of any job queue in the stack (an EventBridge rule, so only
 *   the GPU route, when deployed, produces them; children of an array job are left out, their
 *   parent fails with them);
 * - AWS Budgets notifications on the stack's cost tag, when a monthly amount is given;
 * and a CloudWatch dashboard of all of it. Instantiate it last in the stack: it looks for the
 * functions and job queues already there.
 *
 * The topic is the stack's own rather than one given at deploy: CloudWatch, EventBridge and AWS
 * Budgets may only publish to it through its topic policy and its key's policy, which a stack
 * can set only on a topic it owns. Other endpoints subscribe to it (its ARN is an output).
 */
export class Operations extends Construct {
  public readonly topic: sns.Topic;
  public readonly key: kms.Key;
  public readonly alarms: readonly cloudwatch.Alarm[];
  public readonly dashboard: cloudwatch.Dashboard;
  /** Present when the stack has an AWS Batch job queue (`-c sondage:gpu=true`). */
  public readonly batchFailures?: events.Rule;
  /** Present when a monthly amount is given (`-c sondage:monthlyBudgetUsd=…`). */
  public readonly budget?: budgets.CfnBudget;

  /**
   * The props the CDK context gives: `sondage:alarmEmail` (one address or several separated by
   * commas) and `sondage:monthlyBudgetUsd`. A malformed value is an error naming the key.
   */
  public static contextProps(scope: Construct): Pick<OperationsProps, 'alarmEmails' | 'monthlyBudgetUsd'> {
    const emailsRaw = scope.node.tryGetContext(OPS_CONTEXT.alarmEmail) as unknown;
    const budgetRaw = scope.node.tryGetContext(OPS_CONTEXT.monthlyBudgetUsd) as unknown;
    const out: { alarmEmails?: string[]; monthlyBudgetUsd?: number } = {};
    if (emailsRaw !== undefined && String(emailsRaw).trim() !== '') {
      const emails = String(emailsRaw).split(',').map((e) => e.trim());
      const bad = emails.filter((e) => !EMAIL.test(e));
      if (bad.length > 0) {
        throw new SondageError(
          `-c ${OPS_CONTEXT.alarmEmail}=${String(emailsRaw)}: ${bad.map((e) => JSON.stringify(e)).join(', ')} is not an email address; ` +
            'give one address, or several separated by commas (ops@example.com,oncall@example.com)',
        );
      }
      out.alarmEmails = emails;
    }
    if (budgetRaw !== undefined && String(budgetRaw).trim() !== '') {
      const amount = typeof budgetRaw === 'number' ? budgetRaw : /^\s*\d+(\.\d+)?\s*$/.test(String(budgetRaw)) ? Number(budgetRaw) : NaN;
      if (!(Number.isFinite(amount) && amount > 0)) {
        throw new SondageError(
          `-c ${OPS_CONTEXT.monthlyBudgetUsd}=${String(budgetRaw)}: expected a positive amount of USD per month, e.g. -c ${OPS_CONTEXT.monthlyBudgetUsd}=200`,
        );
      }
      out.monthlyBudgetUsd = amount;
    }
    return out;
  }

  constructor(scope: Construct, id: string, props: OperationsProps) {
    super(scope, id);
    const stack = Stack.of(this);
    // Confused-deputy guards: only this account's alarms (by this stack's name prefix) and budgets.
    // (EventBridge's KMS requests carry no source keys, so its grant, added by the rule target, has none.)
    const from = {
      cloudwatch: { StringEquals: { 'aws:SourceAccount': stack.account }, ArnLike: { 'aws:SourceArn': `arn:${stack.partition}:cloudwatch:${stack.region}:${stack.account}:alarm:${stack.stackName}-*` } },
      budgets: { StringEquals: { 'aws:SourceAccount': stack.account }, ArnLike: { 'aws:SourceArn': `arn:${stack.partition}:budgets::${stack.account}:*` } },
    };

    // A customer managed key: CloudWatch, EventBridge and AWS Budgets cannot use the AWS managed
    // SNS key, and a topic without encryption fails AwsSolutions-SNS2.
    this.key = new kms.Key(this, 'TopicKey', { description: `sondage ${stack.stackName}: encrypts the alarm topic`, enableKeyRotation: true });
    this.topic = new sns.Topic(this, 'AlarmTopic', { displayName: `sondage ${stack.stackName} alarms`, masterKey: this.key, enforceSSL: true });
    for (const service of ['cloudwatch', 'budgets'] as const) {
      this.key.addToResourcePolicy(
        new iam.PolicyStatement({
          sid: `${service === 'cloudwatch' ? 'CloudWatch' : 'Budgets'}PublishToAlarmTopic`,
          principals: [new iam.ServicePrincipal(`${service}.amazonaws.com`)],
          // What SNS documents for a service publishing to an encrypted topic; a key policy's "*" is this key.
          actions: ['kms:Decrypt', 'kms:GenerateDataKey*'],
          resources: ['*'],
          conditions: from[service],
        }),
      );
    }
    // CloudWatch alarms of this account publish under the default topic policy; AWS Budgets needs its own statement.
    this.topic.addToResourcePolicy(
      new iam.PolicyStatement({
        sid: 'BudgetsPublish',
        principals: [new iam.ServicePrincipal('budgets.amazonaws.com')],
        actions: ['sns:Publish'],
        resources: [this.topic.topicArn],
        conditions: from.budgets,
      }),
    );
    for (const email of props.alarmEmails ?? []) this.topic.addSubscription(new subscriptions.EmailSubscription(email));
    new CfnOutput(stack, ALARM_TOPIC_OUTPUT, { value: this.topic.topicArn, description: 'sondage alarm topic (subscribe more endpoints to it)' });

    const alarms: cloudwatch.Alarm[] = [];
    const alarm = (alarmId: string, name: string, description: string, metric: cloudwatch.IMetric, options: { threshold?: number; periods?: number } = {}): void => {
      const a = new cloudwatch.Alarm(this, alarmId, {
        alarmName: `${stack.stackName}-${name}`,
        alarmDescription: `sondage ${stack.stackName}: ${description}`,
        metric,
        threshold: options.threshold ?? 1,
        comparisonOperator: cloudwatch.ComparisonOperator.GREATER_THAN_OR_EQUAL_TO_THRESHOLD,
        evaluationPeriods: options.periods ?? 1,
        datapointsToAlarm: options.periods ?? 1,
        // No executions, no invocations, no spend published: nothing is wrong.
        treatMissingData: cloudwatch.TreatMissingData.NOT_BREACHING,
      });
      a.addAlarmAction(new cwActions.SnsAction(this.topic));
      alarms.push(a);
    };

    // Executions.
    const sm = props.stateMachine;
    const executions = {
      failed: sm.metricFailed({ period: FIVE_MINUTES, statistic: 'Sum' }),
      timedOut: sm.metricTimedOut({ period: FIVE_MINUTES, statistic: 'Sum' }),
      aborted: sm.metricAborted({ period: FIVE_MINUTES, statistic: 'Sum' }),
    };
    alarm('ExecutionsFailed', 'executions-failed', 'a campaign execution failed; `sondage status <campaign> --aws` shows the recorded failure', executions.failed);
    alarm('ExecutionsTimedOut', 'executions-timed-out', 'a campaign execution ran past the state machine timeout; start it again to resume', executions.timedOut);
    alarm('ExecutionsAborted', 'executions-aborted', 'a campaign execution was aborted (`sondage stop` does this too)', executions.aborted);

    // Every Lambda function of the stack.
    const handlers = stack.node.findAll().filter((c): c is Handler => c instanceof Handler);
    for (const h of handlers) {
      const fid = pathId(h);
      const name = h.node.id.replace(/([a-z])([A-Z])/g, '$1-$2').toLowerCase();
      alarm(`${fid}Errors`, `${name}-errors`, `the ${name} Lambda function threw (an invocation error, not a failed model call)`, h.fn.metricErrors({ period: FIVE_MINUTES, statistic: 'Sum' }));
      // Isolated throttles are retried by the state machine; a quarter of an hour of them is not.
      alarm(
        `${fid}Throttles`,
        `${name}-throttles`,
        `the ${name} Lambda function was throttled in each of 3 consecutive 5-minute periods (reserved or account concurrency exhausted)`,
        h.fn.metricThrottles({ period: FIVE_MINUTES, statistic: 'Sum' }),
        { periods: 3 },
      );
    }

    // DynamoDB throttling: the SDK retries an isolated throttle and the state machine a batch that
    // outlasts it; a quarter of an hour of them is a hot key or the account's table limits.
    for (const { id, table } of props.tables ?? []) {
      const events = (metricName: string) => table.metric(metricName, { period: FIVE_MINUTES, statistic: 'Sum' });
      alarm(
        `${id}Throttled`,
        `${id.replace(/([a-z])([A-Z])/g, '$1-$2').toLowerCase()}-throttled`,
        `the ${id} DynamoDB table throttled reads or writes in each of ${DYNAMO_THROTTLE_PERIODS} consecutive 5-minute periods (workers slow down, then batches fail and are retried)`,
        new cloudwatch.MathExpression({
          expression: 'FILL(r, 0) + FILL(w, 0)',
          usingMetrics: { r: events('ReadThrottleEvents'), w: events('WriteThrottleEvents') },
          label: 'read + write throttle events',
          period: FIVE_MINUTES,
        }),
        { periods: DYNAMO_THROTTLE_PERIODS },
      );
    }

    // Stalled progress: every worker invocation for half an hour settled nothing with no provider
    // batch open and no cap reached (a key rejected, a provider refusing or hanging, a retry-after
    // of hours). MIN over every campaign's invocations: one progressing campaign keeps it quiet.
    alarm(
      'ProgressStalled',
      'progress-stalled',
      `workers ran for ${STALL_PERIODS * 5} minutes without settling an item (no provider batch open, cap not reached); \`sondage status <campaign> --aws\` shows the recorded failures`,
      new cloudwatch.MathExpression({
        expression: `SELECT MIN(${STALL_METRIC}) FROM SCHEMA("${METRICS_NAMESPACE}", campaign, service) WHERE service = '${WORKER_SERVICE}'`,
        label: 'worker invocations without progress (1: all of them)',
        period: FIVE_MINUTES,
      }),
      { periods: STALL_PERIODS },
    );

    // Spend: the largest share of its cap any campaign has spent (CloudWatch Metrics Insights, so
    // one alarm covers every campaign, including those started after the deploy).
    const spendShare = new cloudwatch.MathExpression({
      // Every service that publishes it: the worker, and the GPU job with its instance time.
      expression: `SELECT MAX(${SPEND_METRICS.share}) FROM SCHEMA("${METRICS_NAMESPACE}", campaign, service)`,
      label: 'largest share of its cap spent by a campaign',
      period: FIVE_MINUTES,
    });
    alarm(
      'SpendNearCap',
      'spend-near-cap',
      `a campaign has spent ${SPEND_ALARM_SHARE * 100} % or more of its budget_usd; the workers stop at the cap (\`sondage status <campaign> --aws\`)`,
      spendShare,
      { threshold: SPEND_ALARM_SHARE },
    );

    // AWS Batch (the GPU route): one message per failed job, with its reason.
    const queues = stack.node.findAll().filter((c): c is batch.JobQueue => c instanceof batch.JobQueue);
    if (queues.length > 0) {
      const field = (p: string): string => events.EventField.fromPath(p);
      this.batchFailures = new events.Rule(this, 'BatchJobFailed', {
        description: `sondage ${stack.stackName}: an AWS Batch job of the GPU route failed`,
        eventPattern: {
          source: ['aws.batch'],
          detailType: ['Batch Job State Change'],
          detail: {
            status: ['FAILED'],
            jobQueue: queues.map((q) => q.jobQueueArn),
            // An array job's children fail with their parent: one message per job, not per shard.
            arrayProperties: { index: [{ exists: false }] },
          },
        },
      });
      this.batchFailures.addTarget(
        new targets.SnsTopic(this.topic, {
          message: events.RuleTargetInput.fromText(
            `sondage ${stack.stackName}: AWS Batch job ${field('$.detail.jobName')} (${field('$.detail.jobId')}) FAILED: ${field('$.detail.statusReason')}`,
          ),
        }),
      );
    }

    // AWS Budgets on the cost tag.
    if (props.monthlyBudgetUsd !== undefined) {
      const notify = (type: 'ACTUAL' | 'FORECASTED', threshold: number): budgets.CfnBudget.NotificationWithSubscribersProperty => ({
        notification: { notificationType: type, comparisonOperator: 'GREATER_THAN', threshold, thresholdType: 'PERCENTAGE' },
        subscribers: [{ subscriptionType: 'SNS', address: this.topic.topicArn }],
      });
      this.budget = new budgets.CfnBudget(this, 'MonthlyBudget', {
        budget: {
          budgetName: `${stack.stackName}-monthly`,
          budgetType: 'COST',
          timeUnit: 'MONTHLY',
          budgetLimit: { amount: props.monthlyBudgetUsd, unit: 'USD' },
          filterExpression: { tags: { key: COST_TAG, values: [stack.stackName], matchOptions: ['EQUALS'] } },
        },
        notificationsWithSubscribers: [notify('ACTUAL', SPEND_ALARM_SHARE * 100), notify('ACTUAL', 100), notify('FORECASTED', 100)],
      });
      // Budgets checks that it may publish when the budget is created.
      this.budget.node.addDependency(this.topic, this.key);
    }
    this.alarms = alarms;

    this.dashboard = this.buildDashboard(props, executions, handlers, alarms);
  }

  private buildDashboard(
    props: OperationsProps,
    executions: Record<'failed' | 'timedOut' | 'aborted', cloudwatch.Metric>,
    handlers: readonly Handler[],
    alarms: readonly cloudwatch.Alarm[],
  ): cloudwatch.Dashboard {
    const stack = Stack.of(this);
    const sm = props.stateMachine;
    const search = (schema: string, metric: string, stat: string, label: string, period = FIVE_MINUTES): cloudwatch.MathExpression =>
      new cloudwatch.MathExpression({ expression: `SEARCH('${schema} MetricName="${metric}"', '${stat}', ${period.toSeconds()})`, label, period });
    const campaignSchema = `{${METRICS_NAMESPACE},campaign,service}`;
    const perFunction = (title: string, metric: (h: Handler) => cloudwatch.IMetric): cloudwatch.GraphWidget =>
      new cloudwatch.GraphWidget({ title, width: 8, left: handlers.map(metric) });
    const fnLabel = (h: Handler): string => h.node.id;

    const dashboard = new cloudwatch.Dashboard(this, 'Dashboard', { dashboardName: `sondage-${stack.stackName}`, defaultInterval: Duration.days(1) });
    dashboard.addWidgets(
      new cloudwatch.GraphWidget({
        title: 'Executions (per 5 minutes)',
        width: 12,
        left: [
          sm.metricStarted({ period: FIVE_MINUTES, statistic: 'Sum', label: 'started' }),
          sm.metricSucceeded({ period: FIVE_MINUTES, statistic: 'Sum', label: 'succeeded' }),
          executions.failed.with({ label: 'failed' }),
          executions.timedOut.with({ label: 'timed out' }),
          executions.aborted.with({ label: 'aborted' }),
        ],
      }),
      new cloudwatch.AlarmStatusWidget({ title: 'Alarms', width: 12, alarms: [...alarms] }),
    );
    dashboard.addWidgets(
      new cloudwatch.GraphWidget({
        title: 'Shard throughput: items per 5 minutes, by campaign',
        width: 12,
        left: [search(campaignSchema, 'ItemsDone', 'Sum', 'answered'), search(campaignSchema, 'ItemsFailed', 'Sum', 'failed')],
      }),
      new cloudwatch.GraphWidget({
        title: 'Shards planned per wave, by campaign',
        width: 12,
        left: [search(campaignSchema, 'PlannedShards', 'Sum', 'shards')],
      }),
    );
    dashboard.addWidgets(
      perFunction('Lambda errors', (h) => h.fn.metricErrors({ period: FIVE_MINUTES, statistic: 'Sum', label: fnLabel(h) })),
      perFunction('Lambda duration (p95, ms)', (h) => h.fn.metricDuration({ period: FIVE_MINUTES, statistic: 'p95', label: fnLabel(h) })),
      perFunction('Lambda throttles', (h) => h.fn.metricThrottles({ period: FIVE_MINUTES, statistic: 'Sum', label: fnLabel(h) })),
    );
    dashboard.addWidgets(
      new cloudwatch.GraphWidget({
        title: 'Spend vs cap (USD), by campaign',
        width: 12,
        left: [search(campaignSchema, SPEND_METRICS.spent, 'Maximum', 'spent'), search(campaignSchema, SPEND_METRICS.cap, 'Maximum', 'cap')],
      }),
      new cloudwatch.GraphWidget({
        title: 'Share of the cap spent, by campaign',
        width: 12,
        left: [search(campaignSchema, SPEND_METRICS.share, 'Maximum', 'share')],
        leftYAxis: { min: 0, max: 1.1 },
        leftAnnotations: [{ value: SPEND_ALARM_SHARE, label: 'alarm', color: cloudwatch.Color.RED }],
      }),
    );
    const hour = Duration.hours(1);
    const bottom: cloudwatch.IWidget[] = [
      new cloudwatch.GraphWidget({
        title: 'Athena bytes scanned (per hour)',
        width: 12,
        left: [search(`{AWS/Athena,QueryState,QueryType,WorkGroup} WorkGroup="${props.athenaWorkgroup}"`, 'ProcessedBytes', 'Sum', 'bytes', hour)],
      }),
    ];
    if (this.batchFailures) {
      bottom.push(
        new cloudwatch.GraphWidget({
          title: 'AWS Batch jobs failed',
          width: 12,
          left: [
            new cloudwatch.Metric({
              namespace: 'AWS/Events',
              metricName: 'TriggeredRules',
              dimensionsMap: { RuleName: this.batchFailures.ruleName },
              statistic: 'Sum',
              period: FIVE_MINUTES,
              label: 'failed jobs',
            }),
          ],
        }),
      );
    }
    dashboard.addWidgets(...bottom);
    return dashboard;
  }
}
