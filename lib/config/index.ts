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
} as const;

/** Key prefixes in the data bucket. `campaigns/` is the same layout as `data/` locally (lib/store/layout.ts). */
export const PREFIX = {
  campaigns: 'campaigns/',
  /** Shard manifests and Map result files: rebuilt by every execution, expired by lifecycle. */
  scratch: 'scratch/',
  /** Athena query results: re-creatable from the Parquet, expired by lifecycle. */
  athenaResults: 'athena-results/',
} as const;

/** Days before lifecycle deletes temporary objects. */
export const SCRATCH_EXPIRY_DAYS = 7;
export const ATHENA_RESULTS_EXPIRY_DAYS = 30;

/** TTL attribute (epoch seconds) of temporary ledger entries (provider batch ids). */
export const TTL_ATTRIBUTE = 'expires_at';

/** Athena stops a query past this many bytes scanned (the FAR-6 demo at full size reads < 1 GB). */
export const DEFAULT_BYTES_SCANNED_CUTOFF = 10 * 1024 ** 3;

/** CDK context keys (`npx cdk synth -c sondage:gpu=true`). */
export const CONTEXT = {
  /** Adds the AWS Batch GPU compute environment, queue and job definition (needs Docker at deploy). */
  gpu: 'sondage:gpu',
  /** Folder of the GPU worker image, relative to the repository root. */
  gpuImageDir: 'sondage:gpuImageDir',
} as const;

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

/** Default path of the outputs file the CLI reads (`cdk deploy --outputs-file`). */
export const DEFAULT_OUTPUTS_FILE = 'sondage.aws.json';

/** Alarms, dashboard and AWS Budgets (infra/constructs/Operations.ts). */
export * from './operations.js';
