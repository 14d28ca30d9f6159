/**
 * Names shared by the CDK app (`infra/`), the Lambda handlers (`functions/`) and the CLI: environment
 * variables, S3 prefixes, CDK context keys. One place, so a renamed variable cannot leave a handler
 * reading a name the stack no longer sets (DESIGN.md "On AWS").
 */

/** Environment variables the stack sets on every function. */
export const ENV = {
  /** Name of the campaign data bucket. */
  bucket: 'SONDAGE_BUCKET',
  /** DynamoDB table of item, part and campaign states. */
  ledgerTable: 'SONDAGE_LEDGER_TABLE',
  /** DynamoDB table of budgets and reservations. */
  budgetTable: 'SONDAGE_BUDGET_TABLE',
  /** Glue database holding the prompts/replies/readings tables. */
  glueDatabase: 'SONDAGE_GLUE_DATABASE',
  /** Athena workgroup the analysis runs in. */
  athenaWorkgroup: 'SONDAGE_ATHENA_WORKGROUP',
  /** ARN of the Secrets Manager secret with the provider keys (JSON: env-var name → key). */
  providerSecretArn: 'SONDAGE_PROVIDER_SECRET_ARN',
  /** Overrides the S3 endpoint (tests against a local server). */
  s3Endpoint: 'SONDAGE_S3_ENDPOINT',
  /** Overrides the DynamoDB endpoint (tests against a local server). */
  dynamoEndpoint: 'SONDAGE_DYNAMODB_ENDPOINT',
  /**
   * The plan function's map of GPU queues, JSON `{"<instance type>/<spot|on-demand>": "<queue ARN>"}`
   * (GPU_QUEUE_KEY); absent on a stack without GPU queues.
   */
  gpuQueues: 'SONDAGE_GPU_QUEUES',
  /**
   * The plan function's Bedrock batch settings, JSON `{"role_arn": "<service role ARN>", "s3_uri":
   * "s3://<bucket>/bedrock-batch"}` (BedrockBatchSettings); absent on a stack deployed without
   * CONTEXT.bedrockBatch, which then refuses `mode: batch` on a Bedrock model.
   */
  bedrockBatch: 'SONDAGE_BEDROCK_BATCH',
  /** The plan function's ceiling on worker copies (the worker's reserved concurrency as deployed, CONTEXT.workerConcurrency). */
  workerCopies: 'SONDAGE_WORKER_COPIES',
} as const;

/**
 * Environment of a GPU job (batch-images/probe, functions/gpu): the job definition sets the
 * stack's names (ENV.bucket, tables, secret) and GPU_ENV.deadlineSeconds; each submission (the
 * plan's GpuJob.environment) sets the rest. AWS_BATCH_* names are Batch's own and reserved.
 */
export const GPU_ENV = {
  campaign: 'SONDAGE_CAMPAIGN',
  execution: 'SONDAGE_EXECUTION',
  /** Key of the job's shard manifest (a JSON array of Shard) in the data bucket. */
  manifestKey: 'SONDAGE_MANIFEST_KEY',
  /** The campaign id of the model entry the job serves. */
  model: 'SONDAGE_GPU_MODEL',
  retryFailed: 'SONDAGE_RETRY_FAILED',
  /** The shard of a job that is not an array job (AWS Batch arrays start at 2 children). */
  shardIndex: 'SONDAGE_SHARD_INDEX',
  /** Seconds the worker may run before it stops, commits and exits to be retried (before the attempt's timeout). */
  deadlineSeconds: 'SONDAGE_GPU_DEADLINE_SECONDS',
  /** The vLLM executable (default `vllm`; the tests point it at a fake server). */
  vllmCommand: 'SONDAGE_VLLM_COMMAND',
  /** The loopback port vLLM listens on (default 8000). */
  vllmPort: 'SONDAGE_VLLM_PORT',
  /**
   * The folder every GPU job's container mounts from its instance (the job definition sets it): where
   * each attempt records up to when the instance was charged (lib/gpu/instanceClock.ts).
   */
  instanceDir: 'SONDAGE_INSTANCE_DIR',
} as const;

/** Key of a GPU queue in ENV.gpuQueues: instance type and capacity. */
export function gpuQueueKey(instanceType: string, capacity: 'spot' | 'on-demand'): string {
  return `${instanceType}/${capacity}`;
}

/** Key prefixes in the data bucket. `campaigns/` is the same layout as `data/` locally (lib/store/layout.ts). */
export const PREFIX = {
  campaigns: 'campaigns/',
  /** Shard manifests and Map result files: rebuilt by every execution, expired by lifecycle. */
  scratch: 'scratch/',
  /** Athena query results: re-creatable from the Parquet, expired by lifecycle. */
  athenaResults: 'athena-results/',
  /** Open-weight model files for runs_on: gpu models (`gpu.weights_prefix`); GPU jobs read them. */
  weights: 'weights/',
  /** Bedrock batch inference jobs' input and output JSONL (CONTEXT.bedrockBatch); expired by lifecycle. */
  bedrockBatch: 'bedrock-batch/',
} as const;

/** Days before lifecycle deletes temporary objects. */
export const SCRATCH_EXPIRY_DAYS = 7;
export const ATHENA_RESULTS_EXPIRY_DAYS = 30;
/** Longer than a Bedrock batch job may run (up to 7 days) and the worker's reading of its output after. */
export const BEDROCK_BATCH_EXPIRY_DAYS = 30;

/** TTL attribute (epoch seconds) of temporary ledger entries (provider batch ids). */
export const TTL_ATTRIBUTE = 'expires_at';

/** Athena stops a query past this many bytes scanned (the FAR-6 demo at full size reads < 1 GB). */
export const DEFAULT_BYTES_SCANNED_CUTOFF = 10 * 1024 ** 3;

/** CDK context keys (`npx cdk synth -c sondage:gpu=true`). */
export const CONTEXT = {
  /** Adds the AWS Batch GPU queues, job definition and probe image repository (no Docker at synth or deploy). */
  gpu: 'sondage:gpu',
  /** GPU instance types to deploy queues for, comma-separated (default DEFAULT_GPU_INSTANCE_TYPES). */
  gpuInstanceTypes: 'sondage:gpuInstanceTypes',
  /** Tag or `sha256:` digest of the probe image in the stack's ECR repository (default DEFAULT_GPU_IMAGE_TAG). */
  gpuImage: 'sondage:gpuImage',
  /** Most instances of one type and capacity at once (default DEFAULT_GPU_MAX_INSTANCES). */
  gpuMaxInstances: 'sondage:gpuMaxInstances',
  /**
   * The worker's reserved concurrency (default FUNCTION_SIZING.worker's 100), the ceiling on worker
   * copies the plan fans out. A new account's concurrency quota is often 10, and Lambda keeps 10
   * unreserved: there, 100 fails the deploy; `-c sondage:workerConcurrency=0` reserves none.
   */
  workerConcurrency: 'sondage:workerConcurrency',
  /**
   * Batteries of the user's own the stack carries besides the built-in ones: what a campaign's
   * `battery:` takes (a path, `{ module }`), relative to the folder cdk runs in; on the command
   * line, paths separated by commas or a JSON array (infra/app.ts, docs/aws.md).
   */
  batteries: 'sondage:batteries',
  /**
   * Athena's per-query bytes-scanned cutoff of the stack's workgroup, in GiB (default
   * DEFAULT_BYTES_SCANNED_CUTOFF, 10 GiB; Athena's floor is 10 MB). A query that would scan more is
   * cancelled, and billed for what it scanned.
   */
  athenaCutoffGiB: 'sondage:athenaCutoffGiB',
  /**
   * `true`: the stack gets a Bedrock batch inference service role and the worker may submit jobs
   * that run as it, on the data bucket's PREFIX.bedrockBatch (infra/constructs/BedrockBatch.ts).
   */
  bedrockBatch: 'sondage:bedrockBatch',
} as const;

/**
 * Where the CDK app keeps the deployment's sondage:* context (infra/deployContext.ts), in the
 * folder `cdk` runs from; `sondage plan --aws` reads the worker's reserved concurrency from it.
 */
export const DEPLOY_CONTEXT_FILE = 'sondage.deploy.json';

/** GPU queues a stack gets without `-c sondage:gpuInstanceTypes`: one 24 GB and one 48 GB single-GPU type. */
export const DEFAULT_GPU_INSTANCE_TYPES: readonly string[] = ['g6e.xlarge', 'g5.xlarge'];
/** The tag `batch-images/probe/build.sh` pushes when given none; pin a digest for a reproducible run. */
export const DEFAULT_GPU_IMAGE_TAG = 'probe';
export const DEFAULT_GPU_MAX_INSTANCES = 4;

/** Glue table partition keys, in path order: campaign and phase are injected by every query. */
export const GLUE_PARTITION_KEYS = ['campaign_key', 'phase_key', 'model', 'language'] as const;

/**
 * CloudFormation outputs of the stack, by name: `npx cdk deploy --outputs-file sondage.aws.json`
 * writes them, and the CLI's AWS commands read that file (or the matching flags / ENV variables).
 */
export const STACK_OUTPUTS = {
  bucket: 'BucketName',
  stateMachineArn: 'StateMachineArn',
  ledgerTable: 'LedgerTableName',
  budgetTable: 'BudgetTableName',
  athenaWorkgroup: 'AthenaWorkgroup',
  glueDatabase: 'GlueDatabase',
} as const;

/**
 * Outputs only a stack with GPU queues has (`-c sondage:gpu=true`): the queue ARNs, comma-separated
 * (`status --aws` and `stop --aws` list and terminate the campaign's GPU jobs there), and the ECR
 * repository `batch-images/probe/build.sh` pushes the probe image to.
 */
export const GPU_STACK_OUTPUTS = {
  gpuJobQueues: 'GpuJobQueues',
  probeRepository: 'ProbeImageRepository',
} as const;

/**
 * Outputs only a stack with Bedrock batch has (`-c sondage:bedrockBatch=true`): what a campaign's
 * `bedrock_batch` names on AWS (`role_arn`, and `s3_uri` at or below the prefix).
 */
export const BEDROCK_BATCH_STACK_OUTPUTS = {
  roleArn: 'BedrockBatchRoleArn',
  s3Uri: 'BedrockBatchS3Uri',
} as const;

/** A stack's Bedrock batch settings, as ENV.bedrockBatch carries them to the plan function. */
export interface BedrockBatchSettings {
  readonly role_arn: string;
  readonly s3_uri: string;
}

/** Default path of the outputs file the CLI reads (`cdk deploy --outputs-file`). */
export const DEFAULT_OUTPUTS_FILE = 'sondage.aws.json';

/** Alarms, dashboard and AWS Budgets (infra/constructs/Operations.ts). */
export * from './operations.js';
