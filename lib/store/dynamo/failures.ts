/**
 * Failed steps of campaign executions, `FAILURE#<c>` / `<at>#<execution>`: written by the state
 * machine's "Record failure" state (functions/record-failure) and read by `sondage status --aws`
 * after Step Functions has forgotten the execution. Only the AWS ledger has them: a local run's
 * failures are the process's own exceptions.
 */
import { UpdateCommand } from '@aws-sdk/lib-dynamodb';
import { queryAll } from './context.js';
import type { DynamoContext } from './context.js';

/** One failed step of a campaign execution. */
export interface ExecutionFailure {
  readonly campaign: string;
  /** Step Functions execution ARN. */
  readonly execution: string;
  /** ISO time the failure was recorded. */
  readonly at: string;
  /** Step Functions error name (`States.TaskFailed`, `Lambda.Unknown`, …). */
  readonly error: string;
  /** The cause text Step Functions gives (often JSON of the failed task's error). */
  readonly cause: string;
}

/**
 * Records a failed step of a campaign execution (the state machine's "Record failure" state), so
 * `sondage status` can show it after the execution's history has expired.
 */
export async function recordFailure(ctx: DynamoContext, failure: ExecutionFailure): Promise<void> {
  await ctx.db.send(
    new UpdateCommand({
      TableName: ctx.ledgerTable,
      Key: { pk: `FAILURE#${failure.campaign}`, sk: `${failure.at}#${failure.execution}` },
      UpdateExpression: 'SET execution_id = :e, #err = :err, #cause = :cause',
      ExpressionAttributeNames: { '#err': 'error', '#cause': 'cause' },
      ExpressionAttributeValues: { ':e': failure.execution, ':err': failure.error, ':cause': failure.cause },
    }),
  );
}

/** Recorded failures of a campaign, oldest first. */
export async function failures(ctx: DynamoContext, campaign: string): Promise<ExecutionFailure[]> {
  const rows = await queryAll(ctx, { TableName: ctx.ledgerTable, KeyConditionExpression: 'pk = :p', ExpressionAttributeValues: { ':p': `FAILURE#${campaign}` }, ConsistentRead: true });
  return rows.map((r) => ({
    campaign,
    execution: r.execution_id as string,
    at: (r.sk as string).split('#')[0]!,
    error: r.error as string,
    cause: r.cause as string,
  }));
}
