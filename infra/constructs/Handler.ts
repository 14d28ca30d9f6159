import type { Duration } from 'aws-cdk-lib';
import { Validations } from 'aws-cdk-lib';
import * as iam from 'aws-cdk-lib/aws-iam';
import * as lambda from 'aws-cdk-lib/aws-lambda';
import * as logs from 'aws-cdk-lib/aws-logs';
import { Construct } from 'constructs';

export interface HandlerProps {
  /** Folder name under functions/ (`plan`, `worker`, `report`, `record-failure`). */
  readonly name: string;
  readonly description: string;
  readonly memorySize: number;
  readonly timeout: Duration;
  readonly environment: Readonly<Record<string, string>>;
  /** Caps how many copies run at once (the worker: provider rate limits and the budget's race window). */
  readonly reservedConcurrentExecutions?: number;
}

/**
 * One Lambda function of the pipeline. The handlers in functions/ are not written yet (issue 4,
 * "Lambda handlers"), so the code is an inline placeholder that fails loudly when invoked: the stack,
 * its IAM and the state machine are real and synthesize without Docker or esbuild; swapping in
 * `NodejsFunction` (local esbuild bundling) is the step that remains.
 */
export class Handler extends Construct {
  public readonly fn: lambda.Function;

  constructor(scope: Construct, id: string, props: HandlerProps) {
    super(scope, id);
    const logGroup = new logs.LogGroup(this, 'Logs', { retention: logs.RetentionDays.ONE_MONTH });
    // An own role instead of AWSLambdaBasicExecutionRole: logs to this function's group only.
    const role = new iam.Role(this, 'Role', { assumedBy: new iam.ServicePrincipal('lambda.amazonaws.com') });
    role.addToPolicy(new iam.PolicyStatement({ actions: ['logs:CreateLogStream', 'logs:PutLogEvents'], resources: [logGroup.logGroupArn] }));
    this.fn = new lambda.Function(this, 'Function', {
      description: props.description,
      runtime: lambda.Runtime.NODEJS_24_X,
      role,
      architecture: lambda.Architecture.ARM_64,
      handler: 'index.handler',
      code: lambda.Code.fromInline(
        `exports.handler = async () => { throw new Error('sondage: the ${props.name} handler is not deployed yet (functions/${props.name} is a later step of issue 4)'); };`,
      ),
      memorySize: props.memorySize,
      timeout: props.timeout,
      environment: { ...props.environment, NODE_OPTIONS: '--enable-source-maps' },
      logGroup,
      tracing: lambda.Tracing.ACTIVE,
      ...(props.reservedConcurrentExecutions === undefined ? {} : { reservedConcurrentExecutions: props.reservedConcurrentExecutions }),
    });
    Validations.of(role).acknowledge(
      {
        id: 'AwsSolutions-IAM5[Resource::*]',
        reason: 'Only xray:PutTraceSegments and xray:PutTelemetryRecords (added by tracing) are on "*": X-Ray has no resource-level permissions for them.',
      },
      {
        id: 'AwsSolutions-IAM5[Resource::<LogGroupArn>:*]',
        reason: 'The log-group ARN ends in ":*" as CloudWatch Logs defines it; it names this function\'s own group and its streams only.',
      },
    );
  }
}
