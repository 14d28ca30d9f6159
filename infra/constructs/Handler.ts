import { existsSync, mkdirSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { Duration, Size, Stack, Stage, Validations } from 'aws-cdk-lib';
import * as iam from 'aws-cdk-lib/aws-iam';
import * as lambda from 'aws-cdk-lib/aws-lambda';
import * as logs from 'aws-cdk-lib/aws-logs';
import * as nodejs from 'aws-cdk-lib/aws-lambda-nodejs';
import { Construct } from 'constructs';
import type { FunctionSizing } from '../../lib/config/sizing.js';
import { SondageError } from '../../lib/errors.js';
import { externalBatteries } from '../../lib/batteries/external.js';
import {
  BUNDLE_BANNER,
  BUNDLE_SHAPE,
  BUNDLE_TARGET,
  batterySqlCommands,
  CAMPAIGN_FUNCTIONS,
  batteryInjectSource,
  duckdbBundlingCommands,
  duckdbPackages,
  externalModules,
  installedPackageDir,
  publicEntryAliases,
} from './bundling.js';
import type { BundledBattery } from './bundling.js';

export { BUNDLE_SHAPE, duckdbBundlingCommands, duckdbPackages } from './bundling.js';
export type { BundledBattery } from './bundling.js';

/**
 * The root of the code the functions are bundled from: the repository in a clone (TypeScript), or
 * the installed package's dist/ (compiled JavaScript, scripts/build.mjs), whichever this file is in.
 */
const REPO_ROOT = fileURLToPath(new URL('../../', import.meta.url));
/** `.ts` when the CDK app runs from the sources, `.js` compiled. */
const SOURCE_EXT = path.extname(fileURLToPath(import.meta.url)) || '.js';

/**
 * The batteries of the user's own that this process loaded (infra/app.ts loads those
 * `-c sondage:batteries` names before it builds the stack), as every function bundles them.
 */
export function loadedBatteriesToBundle(): BundledBattery[] {
  return externalBatteries().map(({ battery, file }) => ({
    name: battery.name,
    file,
    sqlFiles: battery.analysis.sql.sourceFiles().map((u) => fileURLToPath(u)),
  }));
}

export interface HandlerProps {
  /** Folder name under functions/ (`plan`, `worker`, `report`, `record-failure`): the entry is functions/<name>/handler.ts. */
  readonly name: string;
  readonly description: string;
  /** Memory, timeout, architecture, reserved concurrency, native DuckDB: lib/config/sizing.ts. */
  readonly sizing: FunctionSizing;
  readonly environment: Readonly<Record<string, string>>;
  /** The repository the entry and node_modules are taken from (default: this one; tests point elsewhere). */
  readonly repoRoot?: string;
  /**
   * Batteries of the user's own compiled into the bundle besides the built-in ones (default: for
   * the functions that load a campaign, CAMPAIGN_FUNCTIONS, every one this process loaded).
   */
  readonly batteries?: readonly BundledBattery[];
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
    const ext = props.repoRoot ? '.ts' : SOURCE_EXT;
    const handlerFile = path.join(repoRoot, 'functions', props.name, `handler${ext}`);
    const batteries = props.batteries ?? (CAMPAIGN_FUNCTIONS.includes(props.name) ? loadedBatteriesToBundle() : []);
    // The package's own folder (the repository, or the installed package above its dist/).
    const packageDir = existsSync(path.join(repoRoot, 'package.json')) ? repoRoot : path.dirname(path.resolve(repoRoot));
    const lockFile = ['package-lock.json', 'package.json'].map((f) => path.join(packageDir, f)).find((f) => existsSync(f)) ?? path.join(packageDir, 'package-lock.json');
    // esbuild runs in the project root, where `npx --no-install esbuild` must find it: an installed
    // sondage's is the user's project, whose node_modules holds sondage and esbuild side by side.
    const projectRoot = installedIn(packageDir) ?? packageDir;
    const entry = handlerFile;
    let inject: string | undefined;
    if (batteries.length > 0) {
      // A generated module in the cloud assembly's folder, injected ahead of the handler.
      const folder = path.join(Stage.of(this)?.outdir ?? repoRoot, 'sondage-batteries');
      mkdirSync(folder, { recursive: true });
      inject = path.join(folder, `${props.name}-${this.node.addr.slice(0, 10)}.mjs`);
      const labelled = batteries.map((b) => ({ ...b, label: path.relative(process.cwd(), b.file).split(path.sep).join('/') }));
      writeFileSync(inject, batteryInjectSource(path.join(repoRoot, 'lib', 'batteries', `external${ext}`), labelled));
    }
    const publicEntry = path.join(repoRoot, 'lib', 'api', `battery${ext}`);
    if (sizing.duckdb && Stack.of(this).bundlingRequired) {
      const missing = duckdbPackages(sizing.architecture).filter((pkg) => !installedPackageDir(repoRoot, pkg));
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
      depsLockFilePath: lockFile,
      projectRoot,
      bundling: {
        ...(inject ? { inject: [inject], esbuildArgs: { '--alias': publicEntryAliases(publicEntry) } } : {}),
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
                afterBundling: (_inputDir: string, outputDir: string) => [...duckdbBundlingCommands(repoRoot, outputDir, sizing.architecture), ...batterySqlCommands(outputDir, batteries)],
              },
            }
          : {}),
      },
    });
    // An installed sondage resolves the newest aws-cdk-lib 2.x, which may know a Node.js runtime
    // newer than 24: cdk-nag then flags the pinned one (acknowledged only then, so never for nothing).
    if (newerNodeRuntimeKnown()) {
      Validations.of(this.fn).acknowledge({
        id: 'AwsSolutions-L1',
        reason: 'The runtime is pinned to Node.js 24, the one the bundles target (BUNDLE_TARGET) and the code is tested on; a newer one is a deliberate change.',
      });
    }
    // The log group's ARN is a GetAtt (no literal "*"): cdk-nag finds nothing there to acknowledge.
    Validations.of(role).acknowledge({
      id: 'AwsSolutions-IAM5[Resource::*]',
      reason: 'Only xray:PutTraceSegments and xray:PutTelemetryRecords (added by tracing) are on "*": X-Ray has no resource-level permissions for them.',
    });
  }
}

/** The project folder an installed package sits in (`<project>/node_modules/sondage`), or undefined in a clone. */
function installedIn(packageDir: string): string | undefined {
  let dir = path.dirname(path.resolve(packageDir));
  if (path.basename(dir).startsWith('@')) dir = path.dirname(dir);
  return path.basename(dir) === 'node_modules' ? path.dirname(dir) : undefined;
}

/** Whether this aws-cdk-lib knows a Node.js runtime newer than the pinned 24 (what cdk-nag's AwsSolutions-L1 compares with). */
function newerNodeRuntimeKnown(): boolean {
  return lambda.Runtime.ALL.some((r) => Number(/^nodejs(\d+)/.exec(r.name)?.[1] ?? 0) > 24);
}
