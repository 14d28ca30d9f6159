/**
 * Names shared by the operations layer (infra/constructs/Operations.ts: alarms, dashboard, AWS
 * Budgets) and the handlers that publish what it watches (functions/worker's spend metrics).
 */

/** CDK context keys of the operations layer (`npx cdk deploy -c sondage:alarmEmail=ops@example.com`). */
export const OPS_CONTEXT = {
  /** One email address, or several separated by commas, subscribed to the alarm topic (each must confirm). */
  alarmEmail: 'sondage:alarmEmail',
  /** Monthly AWS Budgets limit in USD on the stack's cost tag; no budget without it. */
  monthlyBudgetUsd: 'sondage:monthlyBudgetUsd',
} as const;

/**
 * Cost allocation tag the stack puts on every resource (value: the stack name); the AWS Budgets
 * budget filters on it. It must be activated once per account in the Billing console before
 * AWS Budgets can see costs by it.
 */
export const COST_TAG = 'sondage:stack';

/** CloudWatch namespace of the handlers' Powertools metrics (`new Metrics({ namespace })` in functions/). */
export const METRICS_NAMESPACE = 'sondage';

/** Service name (the Powertools `service` dimension) of the worker, which publishes the spend metrics. */
export const WORKER_SERVICE = 'sondage-worker';

/** Service name of the GPU job, which publishes the spend metrics too, and its instance time. */
export const GPU_SERVICE = 'sondage-gpu';

/**
 * Spend metrics the worker (after every invocation) and the GPU job (after every attempt) publish
 * per campaign (dimensions `service`, `campaign`), read from the budget table: what the campaign
 * has spent, API calls and GPU instance time together, its cap, and their ratio.
 */
export const SPEND_METRICS = {
  spent: 'SpentUsd',
  cap: 'CapUsd',
  share: 'SpentShareOfCap',
} as const;

/**
 * Published by the worker after every invocation (dimensions `service`, `campaign`): 1 when it
 * settled no item (none done, none failed), has no provider batch open and was not stopped by the
 * cap, else 0. The stalled-progress alarm fires when every worker invocation of STALL_PERIODS
 * five-minute periods in a row published 1.
 */
export const STALL_METRIC = 'InvocationStalled';
/** Five-minute periods of workers making no progress before the stalled-progress alarm fires (30 minutes). */
export const STALL_PERIODS = 6;
/** Five-minute periods with DynamoDB throttle events, in a row, before a table's throttling alarm fires. */
export const DYNAMO_THROTTLE_PERIODS = 3;

/** What the GPU job adds per attempt (dimensions `service`, `campaign`): the instance time it settled. */
export const GPU_METRICS = {
  seconds: 'GpuInstanceSeconds',
  usd: 'GpuInstanceUsd',
} as const;

/** The spend alarm fires when a campaign's spend reaches this share of its cap. */
export const SPEND_ALARM_SHARE = 0.8;

/** CloudFormation output with the alarm topic's ARN (subscribe more endpoints to it). */
export const ALARM_TOPIC_OUTPUT = 'AlarmTopicArn';
