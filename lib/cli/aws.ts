/**
 * What the CLI's `--aws` commands share: the deployed stack's resource names, the AWS
 * clients, and the campaign's executions. Loaded only by those commands, so the local CLI never
 * loads the AWS SDK.
 *
 * Endpoints are the SDK's own: AWS_ENDPOINT_URL_S3, AWS_ENDPOINT_URL_DYNAMODB, AWS_ENDPOINT_URL_SFN,
 * AWS_ENDPOINT_URL_ATHENA (or AWS_ENDPOINT_URL for all), read by the SDK itself, so LocalStack users
 * and the tests need no flag.
 */
import { createHash } from 'node:crypto';
import { readFile } from 'node:fs/promises';
import { S3Client } from '@aws-sdk/client-s3';
import { DescribeExecutionCommand, ListExecutionsCommand, SFNClient } from '@aws-sdk/client-sfn';
import type { DescribeExecutionCommandOutput, ExecutionListItem, ExecutionStatus } from '@aws-sdk/client-sfn';
import { DEFAULT_OUTPUTS_FILE, ENV, GPU_STACK_OUTPUTS, STACK_OUTPUTS } from '../config/index.js';
import { EXECUTION_NAME_MAX, executionToken } from '../config/pipeline.js';
import type { ExecutionInput } from '../config/pipeline.js';
import { CampaignFileError, formatIssues, SondageError } from '../errors.js';
import { DynamoLedger } from '../store/DynamoLedger.js';
import { S3BlobStore } from '../store/S3BlobStore.js';

/** The stack's resources the CLI uses. */
export interface StackNames {
  readonly bucket: string;
  readonly stateMachineArn: string;
  readonly ledgerTable: string;
  readonly budgetTable: string;
  readonly athenaWorkgroup: string;
  readonly glueDatabase: string;
}

/** What start, status and stop need; `results` asks for the analytics names instead. */
export const PIPELINE_NAMES = ['bucket', 'stateMachineArn', 'ledgerTable', 'budgetTable'] as const;
export const ANALYTICS_NAMES = ['bucket', 'athenaWorkgroup', 'glueDatabase'] as const;

/**
 * The state machine's ARN in the environment. Not in lib/config ENV because no function reads it:
 * only the CLI starts executions.
 */
export const STATE_MACHINE_ENV = 'SONDAGE_STATE_MACHINE_ARN';

/** Per name: its `--flag`, its environment variable, its key in the outputs file. */
const SOURCES: Record<keyof StackNames, { readonly flag: string; readonly env: string; readonly output: string }> = {
  bucket: { flag: 'bucket', env: ENV.bucket, output: STACK_OUTPUTS.bucket },
  stateMachineArn: { flag: 'state-machine', env: STATE_MACHINE_ENV, output: STACK_OUTPUTS.stateMachineArn },
  ledgerTable: { flag: 'ledger-table', env: ENV.ledgerTable, output: STACK_OUTPUTS.ledgerTable },
  budgetTable: { flag: 'budget-table', env: ENV.budgetTable, output: STACK_OUTPUTS.budgetTable },
  athenaWorkgroup: { flag: 'workgroup', env: ENV.athenaWorkgroup, output: STACK_OUTPUTS.athenaWorkgroup },
  glueDatabase: { flag: 'database', env: ENV.glueDatabase, output: STACK_OUTPUTS.glueDatabase },
};

/** What `resolveStack` reads: the parsed flags (CliArgs.values) and the environment. */
export interface StackSources {
  readonly values: Readonly<Record<string, string | boolean | string[] | undefined>>;
  readonly env?: NodeJS.ProcessEnv;
}

/**
 * The stack's names, each from its flag, else its SONDAGE_* variable, else the outputs file
 * (`--outputs FILE`, default DEFAULT_OUTPUTS_FILE: what `cdk deploy --outputs-file` writes,
 * `{"Sondage": {"BucketName": …}}`). The file is read only when a name is still missing; a missing
 * or unusable file is an error naming it and the flags that would do instead.
 * @example const { bucket } = await resolveStack({ values: args.values });
 */
export async function resolveStack(sources: StackSources): Promise<Pick<StackNames, (typeof PIPELINE_NAMES)[number]>>;
export async function resolveStack<K extends keyof StackNames>(sources: StackSources, names: readonly K[]): Promise<Pick<StackNames, K>>;
export async function resolveStack(sources: StackSources, names: readonly (keyof StackNames)[] = PIPELINE_NAMES): Promise<Partial<StackNames>> {
  const env = sources.env ?? process.env;
  const found: Partial<Record<keyof StackNames, string>> = {};
  for (const name of names) {
    const s = SOURCES[name];
    const flag = sources.values[s.flag];
    const value = typeof flag === 'string' && flag !== '' ? flag : env[s.env];
    if (value) found[name] = value;
  }
  const missing = names.filter((n) => found[n] === undefined);
  if (missing.length === 0) return found;

  const outputsFlag = sources.values.outputs;
  const file = typeof outputsFlag === 'string' && outputsFlag !== '' ? outputsFlag : DEFAULT_OUTPUTS_FILE;
  const alternatives = missing.map((n) => `--${SOURCES[n].flag} (or ${SOURCES[n].env})`).join(', ');
  const fail = (path: string, message: string, cause?: unknown): never => {
    const issue = { file, path, message };
    throw new CampaignFileError(formatIssues([issue]), [issue], cause === undefined ? undefined : { cause });
  };
  let text: string;
  try {
    text = await readFile(file, 'utf8');
  } catch (err) {
    const code = (err as NodeJS.ErrnoException).code;
    return fail(
      '',
      `${code === 'ENOENT' ? 'no such stack outputs file' : `cannot read the stack outputs file (${code ?? String(err)})`}; ` +
        `write it with \`npx cdk deploy --outputs-file ${file}\`, point --outputs at it, or give ${alternatives}`,
      err,
    );
  }
  let raw: unknown;
  try {
    raw = JSON.parse(text);
  } catch (err) {
    return fail('', `not valid JSON (${(err as Error).message}); expected what \`cdk deploy --outputs-file\` writes: {"Sondage": {"${STACK_OUTPUTS.bucket}": …}}`, err);
  }
  if (typeof raw !== 'object' || raw === null || Array.isArray(raw)) {
    return fail('', 'expected an object of stacks, {"Sondage": {…outputs…}}');
  }
  // The file holds every stack of the app that was deployed; ours is the one with the outputs asked
  // for (the bucket name alone is too common an output name to pick a stack by).
  const marker = SOURCES[names.find((n) => n !== 'bucket') ?? names[0]!].output;
  const stacks = Object.entries(raw as Record<string, unknown>).filter(
    (e): e is [string, Record<string, unknown>] => typeof e[1] === 'object' && e[1] !== null && marker in e[1],
  );
  if (stacks.length !== 1) {
    return fail(
      '',
      stacks.length === 0
        ? `no stack has a ${marker} output (stacks: ${Object.keys(raw).join(', ') || 'none'}); deploy the sondage stack with --outputs-file, or give ${alternatives}`
        : `several stacks have a ${marker} output (${stacks.map(([n]) => n).join(', ')}); keep one stack per outputs file, or give ${alternatives}`,
    );
  }
  const [stackName, outputs] = stacks[0]!;
  for (const name of missing) {
    const value = outputs[SOURCES[name].output];
    if (typeof value !== 'string' || value === '') {
      fail(`${stackName}.${SOURCES[name].output}`, `missing; expected the ${name} output of the stack (or give --${SOURCES[name].flag})`);
    }
    found[name] = value as string;
  }
  return found;
}

/** The stack's GPU job queues in the environment (comma-separated ARNs), over the outputs file's. */
export const GPU_QUEUES_ENV = 'SONDAGE_GPU_JOB_QUEUES';

/**
 * The GPU job queues of the deployed stack: SONDAGE_GPU_JOB_QUEUES, else the GpuJobQueues output
 * of the stack in the outputs file (`--outputs`, default DEFAULT_OUTPUTS_FILE). A stack deployed
 * without GPU queues, or no outputs file, gives none: `status` and `stop` then skip GPU jobs.
 */
export async function resolveGpuQueues(sources: StackSources): Promise<string[]> {
  const env = sources.env ?? process.env;
  const split = (v: string): string[] => v.split(',').map((q) => q.trim()).filter(Boolean);
  const given = env[GPU_QUEUES_ENV];
  if (given) return split(given);
  const flag = sources.values.outputs;
  const file = typeof flag === 'string' && flag !== '' ? flag : DEFAULT_OUTPUTS_FILE;
  let raw: unknown;
  try {
    raw = JSON.parse(await readFile(file, 'utf8'));
  } catch {
    return [];
  }
  if (typeof raw !== 'object' || raw === null) return [];
  for (const outputs of Object.values(raw as Record<string, unknown>)) {
    const o = outputs as Record<string, unknown> | null;
    if (o && typeof o === 'object' && STACK_OUTPUTS.stateMachineArn in o && typeof o[GPU_STACK_OUTPUTS.gpuJobQueues] === 'string') return split(o[GPU_STACK_OUTPUTS.gpuJobQueues] as string);
  }
  return [];
}

/** An endpoint set through the SDK's own variables, for the S3 addressing below. */
function s3EndpointOverride(env: NodeJS.ProcessEnv): string | undefined {
  return env.AWS_ENDPOINT_URL_S3 || env.AWS_ENDPOINT_URL || undefined;
}

/** The clients the AWS commands use; `close` frees their sockets. */
export interface AwsClients {
  readonly stack: Pick<StackNames, (typeof PIPELINE_NAMES)[number]>;
  readonly s3: S3Client;
  readonly blobs: S3BlobStore;
  readonly sfn: SFNClient;
  readonly ledger: DynamoLedger;
  close(): Promise<void>;
}

/**
 * Clients for the resolved stack. Region and credentials come from the SDK's usual chain.
 * With an endpoint override, S3 is addressed path-style, which LocalStack and S3 look-alikes
 * understand without wildcard DNS for `<bucket>.<host>`.
 */
export function awsClients(stack: Pick<StackNames, (typeof PIPELINE_NAMES)[number]>, env: NodeJS.ProcessEnv = process.env): AwsClients {
  const s3 = new S3Client(s3EndpointOverride(env) ? { forcePathStyle: true } : {});
  const sfn = new SFNClient({});
  const ledger = new DynamoLedger({ ledgerTable: stack.ledgerTable, budgetTable: stack.budgetTable });
  return {
    stack,
    s3,
    blobs: new S3BlobStore({ bucket: stack.bucket, client: s3 }),
    sfn,
    ledger,
    async close() {
      await ledger.close();
      s3.destroy();
      sfn.destroy();
    },
  };
}

const STAMP = /^\d{8}T\d{9}Z$/;
/** `-20261130T070500123Z` */
const SUFFIX_LENGTH = 20;
/** `-` and 8 hex characters of the campaign name's SHA-256. */
const HASH_LENGTH = 9;

/**
 * `20261130T070500123Z`: sortable, only characters an execution name may hold, and to the
 * millisecond, because a stop and a new start can fall in the same second and names must be unique.
 */
function stamp(at: Date): string {
  return at.toISOString().replace(/[-:.]/g, '');
}

/**
 * What a campaign's execution names start with. A campaign name of letters, digits, `-` and `_`
 * is its own prefix (cut to fit). Any other name the CLI accepts (a `.`: `demo.v2`) has those
 * characters mapped to `_` and 8 hex characters of its SHA-256 added, so `demo.v2` and `demo_v2`
 * never share a prefix: execution names hold only what every Step Functions name may hold
 * (the handlers' tmp folders, part names and GPU job names are built from them).
 */
function executionPrefix(campaign: string): string {
  const safe = executionToken(campaign);
  if (safe === campaign) return campaign.slice(0, EXECUTION_NAME_MAX - SUFFIX_LENGTH);
  const hash = createHash('sha256').update(campaign).digest('hex').slice(0, HASH_LENGTH - 1);
  return `${safe.slice(0, EXECUTION_NAME_MAX - SUFFIX_LENGTH - HASH_LENGTH)}-${hash}`;
}

/**
 * `<campaign>-<UTC timestamp>` (see executionPrefix for a campaign name with other characters),
 * at most 80 characters of letters, digits, `-` and `_`: one name per start, and
 * `campaignExecutions` can tell a campaign's executions from others' by it.
 */
export function executionName(campaign: string, at: Date = new Date()): string {
  return `${executionPrefix(campaign)}-${stamp(at)}`;
}

/**
 * True when an execution's name is one `executionName` gives for this campaign, or one an older
 * CLI gave it (the raw name cut to 60: such an execution of a campaign with a `.` failed at its
 * plan, and `status --aws` still shows it).
 */
function namedFor(name: string, campaign: string): boolean {
  const cut = name.lastIndexOf('-');
  if (cut <= 0 || !STAMP.test(name.slice(cut + 1))) return false;
  const head = name.slice(0, cut);
  return head === executionPrefix(campaign) || head === campaign.slice(0, EXECUTION_NAME_MAX - SUFFIX_LENGTH);
}

/** An execution of the campaign, with its input read back (names can be cut; the input is exact). */
export type CampaignExecution = ExecutionListItem & { readonly detail: DescribeExecutionCommandOutput };

/**
 * The campaign's executions, newest first, optionally only those with `status`. Names select the
 * candidates and DescribeExecution's input confirms them, so campaign `demo` never matches
 * `demo-2`'s executions even where a long name was cut. `limit` stops after that many.
 */
export async function campaignExecutions(
  sfn: SFNClient,
  stateMachineArn: string,
  campaign: string,
  options: { readonly status?: ExecutionStatus; readonly limit?: number } = {},
): Promise<CampaignExecution[]> {
  const out: CampaignExecution[] = [];
  let nextToken: string | undefined;
  do {
    const page = await sfn.send(
      new ListExecutionsCommand({ stateMachineArn, ...(options.status ? { statusFilter: options.status } : {}), ...(nextToken ? { nextToken } : {}) }),
    );
    for (const e of page.executions ?? []) {
      if (!e.name || !e.executionArn || !namedFor(e.name, campaign)) continue;
      const detail = await sfn.send(new DescribeExecutionCommand({ executionArn: e.executionArn }));
      if (inputCampaign(detail.input) !== campaign) continue;
      out.push({ ...e, detail });
      if (options.limit !== undefined && out.length >= options.limit) return out;
    }
    nextToken = page.nextToken;
  } while (nextToken);
  return out;
}

function inputCampaign(input: string | undefined): string | undefined {
  try {
    return (JSON.parse(input ?? '') as Partial<ExecutionInput>).campaign;
  } catch {
    return undefined;
  }
}

/** The console page of an execution, for "watch it at". */
export function executionConsoleUrl(executionArn: string): string {
  const region = executionArn.split(':')[3] ?? 'us-east-1';
  return `https://${region}.console.aws.amazon.com/states/home?region=${region}#/v2/executions/details/${executionArn}`;
}

/** Throws when the commands were not asked to go to AWS, naming the flag that would. */
export function assertAws(command: string, aws: boolean): void {
  if (!aws) throw new SondageError(`sondage ${command} runs the campaign on the deployed stack: add --aws (\`sondage run\` runs it here)`);
}
