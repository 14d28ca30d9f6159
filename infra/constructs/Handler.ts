import type { Duration } from 'aws-cdk-lib';
import { Validations } from 'aws-cdk-lib';
import * as iam from 'aws-cdk-lib/aws-iam';
import * as lambda from 'aws-cdk-lib/aws-lambda';
import * as logs from 'aws-cdk-lib/aws-logs';
import * as nodejs from 'aws-cdk-lib/aws-lambda-nodejs';
import { Construct } from 'constructs';

export interface HandlerProps {
  /** Folder name under functions/ (`plan`, `worker`, `report`, `record-failure`). */
  readonly name: string;
  readonly description: string;
  readonly memorySize: number;
  readonly timeout: Duration;
  readonly environment: Readonly<Record<string, string>>;
  /**
   * The handler file (functions/<name>/handler.ts) when it exists: bundled by NodejsFunction with
   * the local esbuild (no Docker). Without it the function is a placeholder that fails loudly.
   */
  readonly entry?: string;
  /** Caps how many copies run at once (the worker: provider rate limits and the budget's race window). */
  readonly reservedConcurrentExecutions?: number;
}

/**
 * One Lambda function of the pipeline. A handler written in functions/ is bundled by NodejsFunction
 * with the local esbuild (ESM, AWS SDK v3 left to the runtime); a handler not yet written (issue 4,
 * "Lambda handlers") deploys as an inline placeholder that fails loudly when invoked, so the stack,
 * its IAM and the state machine are real and synthesize without Docker either way.
 */
export class Handler extends Construct {
  public readonly fn: lambda.Function;

  constructor(scope: Construct, id: string, props: HandlerProps) {
    super(scope, id);
    const logGroup = new logs.LogGroup(this, 'Logs', { retention: logs.RetentionDays.ONE_MONTH });
    // An own role instead of AWSLambdaBasicExecutionRole: logs to this function's group only.
    const role = new iam.Role(this, 'Role', { assumedBy: new iam.ServicePrincipal('lambda.amazonaws.com') });
    role.addToPolicy(new iam.PolicyStatement({ actions: ['logs:CreateLogStream', 'logs:PutLogEvents'], resources: [logGroup.logGroupArn] }));
    const common = {
      description: props.description,
      runtime: lambda.Runtime.NODEJS_24_X,
      role,
      architecture: lambda.Architecture.ARM_64,
      memorySize: props.memorySize,
      timeout: props.timeout,
      environment: { ...props.environment, NODE_OPTIONS: '--enable-source-maps' },
      logGroup,
      tracing: lambda.Tracing.ACTIVE,
      ...(props.reservedConcurrentExecutions === undefined ? {} : { reservedConcurrentExecutions: props.reservedConcurrentExecutions }),
    };
    this.fn = props.entry
      ? new nodejs.NodejsFunction(this, 'Function', {
          ...common,
          entry: props.entry,
          handler: 'handler',
          bundling: {
            format: nodejs.OutputFormat.ESM,
            target: 'node24',
            sourceMap: true,
            forceDockerBundling: false,
            // Some CommonJS dependencies call require(); give the ESM bundle one.
            banner: "import { createRequire } from 'node:module'; const require = createRequire(import.meta.url);",
          },
        })
      : new lambda.Function(this, 'Function', {
          ...common,
          handler: 'index.handler',
          code: lambda.Code.fromInline(
            `exports.handler = async () => { throw new Error('sondage: the ${props.name} handler is not deployed yet (functions/${props.name} is a later step of issue 4)'); };`,
          ),
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
