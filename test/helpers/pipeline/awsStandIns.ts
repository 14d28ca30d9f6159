/**
 * The AWS services the pipeline talks to, stood in on 127.0.0.1: S3 (the data bucket), DynamoDB
 * (ledger and budget tables), Secrets Manager (the provider keys) and Athena (DuckDB over the
 * bucket's Parquet, copied into a local folder before each query, as Athena reads S3 at query
 * time). The process environment is what the stack gives the functions, with the SDK's endpoint
 * variables pointed at the stand-ins and dummy credentials, so the handlers build their clients
 * with their own code (functions/shared/env.ts) and the SDK's default retries.
 */
import { mkdir, rm, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { vi } from 'vitest';
import { ENV, PREFIX } from '../../../lib/config/index.js';
import { startDynamoServer } from '../../store/dynamoServer.js';
import type { DynamoServer } from '../../store/dynamoServer.js';
import { startS3Server } from '../../store/s3Server.js';
import type { S3Server } from '../../store/s3Server.js';
import { startSecretsServer } from '../../functions/secretsServer.js';
import type { SecretsServer } from '../../functions/secretsServer.js';
import { startAthenaServer } from '../athenaServer.js';
import type { AthenaServer } from '../athenaServer.js';
import type { SynthesizedPipeline } from './synthesizedPipeline.js';

export const REGION = 'us-east-1';
export const CREDENTIALS = { accessKeyId: 'test', secretAccessKey: 'test' } as const;

export interface AwsStandIns {
  readonly s3: S3Server;
  readonly dynamo: DynamoServer;
  readonly secrets: SecretsServer;
  readonly athena: AthenaServer;
  /** The stack's names the functions read (bucket, tables, database, workgroup, secret ARN). */
  readonly names: { bucket: string; ledgerTable: string; budgetTable: string; glueDatabase: string; athenaWorkgroup: string; providerSecretArn: string };
  close(): Promise<void>;
}

/**
 * Starts the stand-ins for a synthesized pipeline; `scratch` holds the Athena stand-in's copy of the
 * Parquet; `now` is the Athena stand-in's clock (default the real one).
 */
export async function startAwsStandIns(pipeline: SynthesizedPipeline, scratch: string, now?: () => number): Promise<AwsStandIns> {
  const env = { ...pipeline.functions.report.environment, ...pipeline.functions.worker.environment };
  const need = (name: string): string => {
    const v = env[name];
    if (!v) throw new Error(`the synthesized functions have no ${name}`);
    return v;
  };
  const names = {
    bucket: need(ENV.bucket),
    ledgerTable: need(ENV.ledgerTable),
    budgetTable: need(ENV.budgetTable),
    glueDatabase: need(ENV.glueDatabase),
    athenaWorkgroup: need(ENV.athenaWorkgroup),
    providerSecretArn: need(ENV.providerSecretArn),
  };
  const dataDir = path.join(scratch, 'athena-data');
  const [s3, dynamo, secrets] = await Promise.all([startS3Server(), startDynamoServer(), startSecretsServer()]);
  const athena = await startAthenaServer({
    dataDir,
    database: names.glueDatabase,
    workgroups: [names.athenaWorkgroup],
    pollsBeforeDone: 1,
    ...(now ? { now } : {}),
    // The workgroup's result location (infra/constructs/Analytics.ts): athena-results/ in the data bucket.
    results: {
      location: `s3://${names.bucket}/${PREFIX.athenaResults}`,
      write: async (location, body) => {
        s3.objects.set(location.slice('s3://'.length), body);
      },
    },
    beforeQuery: async () => {
      await rm(path.join(dataDir, 'campaigns'), { recursive: true, force: true });
      for (const [id, body] of s3.objects) {
        if (!id.startsWith(`${names.bucket}/campaigns/`) || !id.endsWith('.parquet')) continue;
        const file = path.join(dataDir, id.slice(names.bucket.length + 1));
        await mkdir(path.dirname(file), { recursive: true });
        await writeFile(file, body);
      }
    },
  });
  secrets.secrets.set(names.providerSecretArn, JSON.stringify({}));

  for (const [k, v] of Object.entries(env)) vi.stubEnv(k, v);
  vi.stubEnv(ENV.s3Endpoint, s3.url);
  vi.stubEnv(ENV.dynamoEndpoint, dynamo.url);
  vi.stubEnv('AWS_ENDPOINT_URL_SECRETS_MANAGER', secrets.url);
  vi.stubEnv('AWS_ENDPOINT_URL_ATHENA', athena.url);
  vi.stubEnv('AWS_REGION', REGION);
  vi.stubEnv('AWS_ACCESS_KEY_ID', CREDENTIALS.accessKeyId);
  vi.stubEnv('AWS_SECRET_ACCESS_KEY', CREDENTIALS.secretAccessKey);
  vi.stubEnv('AWS_SDK_JS_NODE_VERSION_SUPPORT_WARNING_DISABLED', 'true');
  vi.stubEnv('AWS_PROFILE', undefined);
  vi.stubEnv('AWS_MAX_ATTEMPTS', undefined);
  vi.stubEnv('AWS_ENDPOINT_URL', undefined);
  vi.stubEnv('AWS_CONFIG_FILE', path.join(scratch, 'no-aws-config'));
  vi.stubEnv('AWS_SHARED_CREDENTIALS_FILE', path.join(scratch, 'no-aws-credentials'));

  return {
    s3,
    dynamo,
    secrets,
    athena,
    names,
    async close() {
      vi.unstubAllEnvs();
      await athena.close();
      await Promise.all([s3.close(), dynamo.close(), secrets.close()]);
    },
  };
}
