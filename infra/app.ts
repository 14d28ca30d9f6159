/**
 * The CDK app (`npx cdk synth`; cdk.json runs it with tsx). Synthesizes with no AWS credentials and
 * no Docker: account and region stay unresolved unless CDK_DEFAULT_* are set; with
 * `-c sondage:gpu=true` the GPU queues name a probe image in the stack's ECR repository, which
 * batch-images/probe/build.sh builds and pushes apart from synth and deploy. The sondage:* keys
 * given with -c are kept in sondage.deploy.json and used when not given (infra/deployContext.ts).
 */
import { join } from 'node:path';
import { App, Validations } from 'aws-cdk-lib';
import { STEPFUNCTIONS_USE_DISTRIBUTED_MAP_RESULT_WRITER_V2, VALIDATE_AGAINST_DEFAULT_RULES } from 'aws-cdk-lib/cx-api';
import { AwsSolutionsChecks } from 'cdk-nag';
import { batterySourceOf, describeSource, loadedBattery, loadExternalBattery } from '../lib/batteries/external.js';
import type { BatterySource } from '../lib/batteries/external.js';
import type { Battery } from '../lib/battery/types.js';
import { CONTEXT } from '../lib/config/index.js';
import { SondageError } from '../lib/errors.js';
import { DEPLOY_CONTEXT_FILE, keepDeployContext, keptContextNotice } from './deployContext.js';
import { SondageStack } from './stacks/SondageStack.js';
import type { SondageStackProps } from './stacks/SondageStack.js';

export interface BuildOptions {
  /** Register cdk-nag as a synth-time validation plugin (default true; tests run it once themselves). */
  readonly nag?: boolean;
  /**
   * Where the deployment's sondage:* context is kept (infra/deployContext.ts): the keys given are
   * recorded there, the others taken from it. The CLI entry passes `sondage.deploy.json` in the
   * folder cdk runs from; without it nothing is kept (tests).
   */
  readonly contextFile?: string;
  /** Where the notice of kept keys goes (default stderr). */
  readonly notice?: (line: string) => void;
}

/** Merges the kept deployment context into `app` (infra/deployContext.ts) and says which keys came from it. */
export function keepContext(app: App, options: Pick<BuildOptions, 'contextFile' | 'notice'>): void {
  if (options.contextFile === undefined) return;
  const kept = keepDeployContext(app, options.contextFile);
  const line = keptContextNotice(options.contextFile, kept);
  if (line) (options.notice ?? ((l: string) => process.stderr.write(`${l}\n`)))(line);
}

/** Builds the app; tests call this with their own context. */
export function buildApp(app: App = new App(), options: BuildOptions = {}): { app: App; stack: SondageStack } {
  // Without it DistributedMap silently drops resultWriterV2 and the Map's results would have to fit
  // in the 256 KB state payload.
  app.node.setContext(STEPFUNCTIONS_USE_DISTRIBUTED_MAP_RESULT_WRITER_V2, true);
  // CDK's built-in CloudFormation rules fail the synth instead of printing warnings.
  app.node.setContext(VALIDATE_AGAINST_DEFAULT_RULES, true);
  if (options.contextFile !== undefined) keepContext(app, options);
  // The stack's own batteries must be loaded by now (loadStackBatteries): the functions bundle and
  // Athena deploys every battery this process knows, and a named one missing would deploy without it.
  for (const source of stackBatterySources(app)) {
    if (!loadedBattery(source)) throw new SondageError(`-c ${CONTEXT.batteries}: ${describeSource(source)} is not loaded; call await loadStackBatteries(app) before buildApp(app)`);
  }
  const gpu = String(app.node.tryGetContext(CONTEXT.gpu) ?? 'false') === 'true';
  const env = process.env.CDK_DEFAULT_ACCOUNT ? { account: process.env.CDK_DEFAULT_ACCOUNT, region: process.env.CDK_DEFAULT_REGION } : undefined;
  const stack = new SondageStack(app, 'Sondage', {
    ...(env ? { env } : {}),
    ...(gpu ? { gpu: gpuContext(app) } : {}),
    ...(String(app.node.tryGetContext(CONTEXT.bedrockBatch) ?? 'false') === 'true' ? { bedrockBatch: true } : {}),
    ...workerContext(app),
    ...athenaContext(app),
  });
  if (options.nag ?? true) Validations.of(app).addPlugins(new AwsSolutionsChecks(app));
  return { app, stack };
}

/**
 * `-c sondage:batteries=…`: the batteries of the user's own that the stack carries, as a campaign's
 * `battery:` names them (a path, `{ module }`), relative to `cwd` (the folder cdk runs in). In
 * cdk.json an array; on the command line, paths separated by commas, or a JSON array.
 */
export function stackBatterySources(app: App, cwd: string = process.cwd()): BatterySource[] {
  const raw = app.node.tryGetContext(CONTEXT.batteries) as unknown;
  if (raw === undefined || raw === null || raw === '') return [];
  const where = `-c ${CONTEXT.batteries}`;
  let entries: unknown[];
  if (Array.isArray(raw)) entries = raw;
  else if (typeof raw === 'string' && raw.trim().startsWith('[')) {
    try {
      entries = JSON.parse(raw) as unknown[];
    } catch (err) {
      throw new SondageError(`${where}: not a JSON array (${(err as Error).message}); expected e.g. ["./studies/likert/", {"module": "@lab/sondage-likert"}]`, { cause: err });
    }
    if (!Array.isArray(entries)) throw new SondageError(`${where}: expected a JSON array of paths and { "module": … } objects`);
  } else if (typeof raw === 'string') entries = raw.split(',').map((s) => s.trim()).filter(Boolean);
  else throw new SondageError(`${where}: expected paths separated by commas or a JSON array, got ${typeof raw}`);
  return entries.map((entry, i) => {
    let source: BatterySource | undefined;
    try {
      source = batterySourceOf(entry, cwd);
    } catch (err) {
      throw new SondageError(`${where}[${i}]: ${(err as Error).message}`, { cause: err });
    }
    if (!source) {
      throw new SondageError(`${where}[${i}]: ${JSON.stringify(entry)} is a battery name; the built-in batteries are always deployed, name a battery of your own by its folder (./${String(entry)}/) or { "module": "<package>" }`);
    }
    return source;
  });
}

/** Loads (and registers) the batteries `-c sondage:batteries` names; buildApp then deploys them with the built-in ones. */
export async function loadStackBatteries(app: App, cwd: string = process.cwd()): Promise<Battery[]> {
  const out: Battery[] = [];
  for (const source of stackBatterySources(app, cwd)) out.push(await loadExternalBattery(source));
  return out;
}

/** `-c sondage:workerConcurrency=N`: the worker's reserved concurrency (0: none), checked before anything is synthesized. */
function workerContext(app: App): Pick<SondageStackProps, 'workerConcurrency'> {
  const raw = app.node.tryGetContext(CONTEXT.workerConcurrency) as unknown;
  if (raw === undefined || raw === null || raw === '') return {};
  const n = Number(raw);
  if (!Number.isInteger(n) || n < 0) {
    throw new SondageError(`-c ${CONTEXT.workerConcurrency}=${String(raw)}: expected a whole number ≥ 0 (the worker's reserved concurrency; 0 reserves none)`);
  }
  return { workerConcurrency: n };
}

/** Athena's floor for BytesScannedCutoffPerQuery: 10 MB. */
const ATHENA_MIN_CUTOFF_BYTES = 10_000_000;

/** `-c sondage:athenaCutoffGiB=N`: the workgroup's per-query bytes-scanned cutoff, checked before anything is synthesized. */
function athenaContext(app: App): Pick<SondageStackProps, 'bytesScannedCutoff'> {
  const raw = app.node.tryGetContext(CONTEXT.athenaCutoffGiB) as unknown;
  if (raw === undefined || raw === null || raw === '') return {};
  const gib = typeof raw === 'number' ? raw : /^\s*\d+(\.\d+)?\s*$/.test(String(raw)) ? Number(raw) : NaN;
  const bytes = Math.round(gib * 1024 ** 3);
  if (!(Number.isFinite(bytes) && bytes >= ATHENA_MIN_CUTOFF_BYTES)) {
    throw new SondageError(
      `-c ${CONTEXT.athenaCutoffGiB}=${String(raw)}: expected the bytes one Athena query may scan, in GiB (a number ≥ 0.01; Athena's floor is 10 MB), e.g. -c ${CONTEXT.athenaCutoffGiB}=50`,
    );
  }
  return { bytesScannedCutoff: bytes };
}

/** The GPU queues' settings from context (`-c sondage:gpuInstanceTypes=g6e.xlarge,g5.xlarge`, …); absent keys take the defaults. */
function gpuContext(app: App): NonNullable<SondageStackProps['gpu']> {
  const get = (key: string): string | undefined => {
    const v = app.node.tryGetContext(key) as unknown;
    return v === undefined || v === null || v === '' ? undefined : String(v);
  };
  const types = get(CONTEXT.gpuInstanceTypes);
  const image = get(CONTEXT.gpuImage);
  const max = get(CONTEXT.gpuMaxInstances);
  return {
    ...(types ? { instanceTypes: types.split(',').map((t) => t.trim()).filter(Boolean) } : {}),
    ...(image ? { image } : {}),
    ...(max ? { maxInstances: Number(max) } : {}),
  };
}

if (process.argv[1] && import.meta.url === new URL(`file://${process.argv[1]}`).href) {
  const app = new App();
  // The kept context first: the batteries it names are loaded like the ones given with -c.
  keepContext(app, { contextFile: join(process.cwd(), DEPLOY_CONTEXT_FILE) });
  await loadStackBatteries(app);
  buildApp(app).app.synth();
}
