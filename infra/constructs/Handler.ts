import { existsSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { Duration, Stack, Validations } from 'aws-cdk-lib';
import * as iam from 'aws-cdk-lib/aws-iam';
import * as lambda from 'aws-cdk-lib/aws-lambda';
import * as logs from 'aws-cdk-lib/aws-logs';
import * as nodejs from 'aws-cdk-lib/aws-lambda-nodejs';
import { Construct } from 'constructs';
import type { FunctionSizing, LambdaArchitecture } from '../../lib/config/sizing.js';
import { SondageError } from '../../lib/errors.js';

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

/** The packages DuckDB needs at run time, by Lambda architecture (the native one must match it). */
export function duckdbPackages(architecture: LambdaArchitecture): readonly string[] {
  const native = architecture === 'arm64' ? '@duckdb/node-bindings-linux-arm64' : '@duckdb/node-bindings-linux-x64';
  return ['@duckdb/node-api', '@duckdb/node-bindings', native, 'detect-libc'];
}

function shellQuote(s: string): string {
  return `'${s.replaceAll("'", `'\\''`)}'`;
}

/**
 * Shell commands that put DuckDB beside a bundle in `outputDir`: its packages, copied from the
 * local node_modules into `outputDir/node_modules` (where the bundle's ESM `import` resolves them:
 * ESM ignores NODE_PATH, so a layer under /opt would not be found), and the analysis SQL files into
 * `outputDir/sql`: every SQL library (lib/query/sql.ts) reads its files next to the module that
 * declares it, which in a bundle is the bundle itself; the core's and every battery's queries
 * share that one folder (their names are unique, lib/batteries checks it).
 */
export function duckdbBundlingCommands(repoRoot: string, outputDir: string, architecture: LambdaArchitecture): string[] {
  const modules = path.join(outputDir, 'node_modules');
  const commands = duckdbPackages(architecture).map((pkg) => {
    const target = path.join(modules, pkg);
    return `mkdir -p ${shellQuote(path.dirname(target))} && cp -R ${shellQuote(path.join(repoRoot, 'node_modules', pkg))} ${shellQuote(target)}`;
  });
  const sqlOut = shellQuote(path.join(outputDir, 'sql'));
  commands.push(`mkdir -p ${sqlOut}`, `cp ${shellQuote(path.join(repoRoot, 'lib'))}/query/sql/*.sql ${shellQuote(path.join(repoRoot, 'lib'))}/batteries/*/sql/*.sql ${sqlOut}/`);
  return commands;
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
      timeout: Duration.seconds(sizing.timeoutSeconds),
      environment: { ...props.environment, NODE_OPTIONS: '--enable-source-maps' },
      logGroup,
      tracing: lambda.Tracing.ACTIVE,
      ...(sizing.reservedConcurrency === undefined ? {} : { reservedConcurrentExecutions: sizing.reservedConcurrency }),
      depsLockFilePath: path.join(repoRoot, 'package-lock.json'),
      projectRoot: repoRoot,
      bundling: {
        format: nodejs.OutputFormat.ESM,
        target: 'node24',
        sourceMap: true,
        forceDockerBundling: false,
        // The runtime's AWS SDK v3; DuckDB's native binding comes beside the bundle (see above).
        externalModules: ['@aws-sdk/*', ...(sizing.duckdb ? ['@duckdb/*'] : [])],
        // Some CommonJS dependencies call require(); give the ESM bundle one.
        banner: "import { createRequire } from 'node:module'; const require = createRequire(import.meta.url);",
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
