import { existsSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { Duration, Size, Stack, Validations } from 'aws-cdk-lib';
import * as iam from 'aws-cdk-lib/aws-iam';
import * as lambda from 'aws-cdk-lib/aws-lambda';
import * as logs from 'aws-cdk-lib/aws-logs';
import * as nodejs from 'aws-cdk-lib/aws-lambda-nodejs';
import { Construct } from 'constructs';
import type { FunctionSizing } from '../../lib/config/sizing.js';
import { SondageError } from '../../lib/errors.js';
import { BUNDLE_BANNER, BUNDLE_SHAPE, BUNDLE_TARGET, duckdbBundlingCommands, duckdbPackages, externalModules } from './bundling.js';

export { BUNDLE_SHAPE, duckdbBundlingCommands, duckdbPackages } from './bundling.js';

const REPO_ROOT = fileURLToPath(new URL('../../', import.meta.url));

export interface HandlerProps {
  /** Folder name under functions/ (`plan`, `worker`, `report`, `record-failure`): the entry is functions/<name>/handler.ts. */
  readonly name: string;
  readonly description: string;
  /** Memory, timeout, architecture, reserved concurrency, native DuckDB: lib/config/sizing.ts. */
  readonly sizing: FunctionSizing;
  readonly environment: Readonly<Record<string, string>>;
  /** The repository the entry and node_modules are taken from (default: this one; tests point elsewhere). */
  readonly repoRoot?: string;
}


/**
 * One Lambda function of the pipeline: functions/<name>/handler.ts bundled by NodejsFunction with
 * the local esbuild (ESM; no Docker).
 *
 * DuckDB is a native module, so esbuild leaves it external and an afterBundling hook copies it from
 * the local node_modules beside the bundle — no `npm install` at synth (NodejsFunction's
 * `nodeModules` would run one, needing the network and installing the *host's* binding). The
 * binding copied is the Linux one of the function's architecture; a host without it (macOS, or
 * arm64 for an x86_64 function) gets a clear error naming the `npm install` that adds it. The tests
 * skip asset bundling (`aws:cdk:bundling-stacks` = []), so they neither run esbuild nor copy 70 MB;
 * test/infra/bundling.test.ts runs these same commands and loads DuckDB from the result.
 */
export class Handler extends Construct {
  public readonly fn: lambda.Function;

  constructor(scope: Construct, id: string, props: HandlerProps) {
    super(scope, id);
    const { sizing } = props;
    const repoRoot = props.repoRoot ?? REPO_ROOT;
    const entry = path.join(repoRoot, 'functions', props.name, 'handler.ts');
    if (sizing.duckdb && Stack.of(this).bundlingRequired) {
      const missing = duckdbPackages(sizing.architecture).filter((pkg) => !existsSync(path.join(repoRoot, 'node_modules', pkg, 'package.json')));
      if (missing.length > 0) {
        throw new SondageError(
          `Handler ${props.name}: the ${sizing.architecture} Lambda needs ${missing.join(', ')} in node_modules to bundle DuckDB; ` +
            `install the Linux binding with \`npm install --no-save --force ${missing.join(' ')}\` (same version as @duckdb/node-bindings)`,
        );
      }
    }
    const logGroup = new logs.LogGroup(this, 'Logs', { retention: logs.RetentionDays.ONE_MONTH });
    // An own role instead of AWSLambdaBasicExecutionRole: logs to this function's group only.
    const role = new iam.Role(this, 'Role', { assumedBy: new iam.ServicePrincipal('lambda.amazonaws.com') });
    role.addToPolicy(new iam.PolicyStatement({ actions: ['logs:CreateLogStream', 'logs:PutLogEvents'], resources: [logGroup.logGroupArn] }));
    this.fn = new nodejs.NodejsFunction(this, 'Function', {
      description: props.description,
      entry,
      handler: 'handler',
      runtime: lambda.Runtime.NODEJS_24_X,
      role,
      architecture: sizing.architecture === 'arm64' ? lambda.Architecture.ARM_64 : lambda.Architecture.X86_64,
      memorySize: sizing.memoryMb,
      ...(sizing.ephemeralStorageMb === undefined ? {} : { ephemeralStorageSize: Size.mebibytes(sizing.ephemeralStorageMb) }),
      timeout: Duration.seconds(sizing.timeoutSeconds),
      // No source map ships (below), so no --enable-source-maps: Node would parse ~10 MB of maps at
      // every cold start for nothing.
      environment: props.environment,
      logGroup,
      tracing: lambda.Tracing.ACTIVE,
      ...(sizing.reservedConcurrency === undefined ? {} : { reservedConcurrentExecutions: sizing.reservedConcurrency }),
      depsLockFilePath: path.join(repoRoot, 'package-lock.json'),
      projectRoot: repoRoot,
      bundling: {
        format: nodejs.OutputFormat.ESM,
        target: BUNDLE_TARGET,
        ...BUNDLE_SHAPE,
        forceDockerBundling: false,
        externalModules: [...externalModules(sizing)],
        banner: BUNDLE_BANNER,
        ...(sizing.duckdb
          ? {
              commandHooks: {
                beforeBundling: () => [],
                beforeInstall: () => [],
                afterBundling: (_inputDir: string, outputDir: string) => duckdbBundlingCommands(repoRoot, outputDir, sizing.architecture),
              },
            }
          : {}),
      },
    });
    // The log group's ARN is a GetAtt (no literal "*"): cdk-nag finds nothing there to acknowledge.
    Validations.of(role).acknowledge({
      id: 'AwsSolutions-IAM5[Resource::*]',
      reason: 'Only xray:PutTraceSegments and xray:PutTelemetryRecords (added by tracing) are on "*": X-Ray has no resource-level permissions for them.',
    });
  }
}
