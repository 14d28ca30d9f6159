/**
 * The plan and worker handlers against S3-, DynamoDB- and Secrets Manager-speaking servers on
 * 127.0.0.1: a campaign uploaded to `campaigns/<c>/input/` as
 * `sondage start --aws` does, handlers built over real S3BlobStore / DynamoLedger / Secrets Manager
 * clients, and Powertools output collected instead of printed. Free of vitest, so that a bench
 * script can import it (harness.ts adds the per-file hooks).
 */
import { SecretsManagerClient } from '@aws-sdk/client-secrets-manager';
// eslint-disable-next-line no-restricted-imports -- the handler's own Context type; lib/ still may not import it
import type { Context } from 'aws-lambda';
import { readFile } from 'node:fs/promises';
import path from 'node:path';
import { parse, stringify } from 'yaml';
import { providerKeyLoader } from '../../functions/shared/secrets.js';
import { ENV } from '../../lib/config/index.js';
import type { HandlerDeps } from '../../functions/shared/types.js';
import type { Shard } from '../../lib/config/pipeline.js';
import type { BlobStore } from '../../lib/store/types.js';
import { DynamoLedger } from '../../lib/store/DynamoLedger.js';
import { S3BlobStore } from '../../lib/store/S3BlobStore.js';
import { REPO_ROOT, RUN_FIXTURES, tempDir, type CampaignDoc } from '../helpers/campaignFiles.js';
import { startDynamoServer, type DynamoServer } from '../store/dynamoServer.js';
import { startS3Server, type S3Server } from '../store/s3Server.js';
import { startSecretsServer, type SecretsServer } from './secretsServer.js';
import { collectingPowertools } from '../helpers/powertools.js';

const CREDENTIALS = { accessKeyId: 'test', secretAccessKey: 'test' };
export const SECRET_ARN = 'arn:aws:secretsmanager:us-east-1:123456789012:secret:sondage-provider-keys-AbCdEf';

export interface Harness {
  readonly s3: S3Server;
  readonly dynamo: DynamoServer;
  readonly secrets: SecretsServer;
  readonly store: S3BlobStore;
  /** A ledger for assertions (its own client). */
  readonly ledger: DynamoLedger;
  /** Dependencies for createHandler, with log lines collected in `logs`. */
  deps(): HandlerDeps & { readonly logs: string[] };
  close(): Promise<void>;
}

/**
 * The environment the stack sets on its functions (bucket, tables, database, key secret), with
 * the AWS endpoints pointed at the harness's local servers and test credentials.
 */
export function stackEnv(h: Harness): Record<string, string> {
  return {
    [ENV.bucket]: 'data',
    [ENV.ledgerTable]: 'ledger',
    [ENV.budgetTable]: 'budget',
    [ENV.glueDatabase]: 'sondage_db',
    [ENV.providerSecretArn]: SECRET_ARN,
    [ENV.s3Endpoint]: h.s3.url,
    [ENV.dynamoEndpoint]: h.dynamo.url,
    AWS_ENDPOINT_URL_SECRETS_MANAGER: h.secrets.url,
    AWS_REGION: 'us-east-1',
    AWS_ACCESS_KEY_ID: 'test',
    AWS_SECRET_ACCESS_KEY: 'test',
  };
}

export async function startHarness(): Promise<Harness> {
  const [s3, dynamo, secrets, tmp] = await Promise.all([startS3Server(), startDynamoServer(), startSecretsServer(), tempDir('functions')]);
  const region = 'us-east-1';
  const store = new S3BlobStore({ bucket: 'data', clientConfig: { endpoint: s3.url, region, credentials: CREDENTIALS, forcePathStyle: true } });
  const dynamoConfig = { endpoint: dynamo.url, region, credentials: CREDENTIALS, maxAttempts: 1 };
  const ledger = new DynamoLedger({ ledgerTable: 'ledger', budgetTable: 'budget', clientConfig: dynamoConfig });
  const ledgers: DynamoLedger[] = [ledger];
  const secretsClient = new SecretsManagerClient({ endpoint: secrets.url, region, credentials: CREDENTIALS, maxAttempts: 1 });
  return {
    s3,
    dynamo,
    secrets,
    store,
    ledger,
    deps() {
      const { logger, metrics, logs } = collectingPowertools({ logLevel: 'DEBUG', keepDebug: true });
      const keys = providerKeyLoader({ client: secretsClient, secretArn: SECRET_ARN });
      return {
        store,
        ledgerFor: (runId: string) => {
          const l = new DynamoLedger({ ledgerTable: 'ledger', budgetTable: 'budget', clientConfig: dynamoConfig, runId });
          ledgers.push(l);
          return l;
        },
        logger,
        metrics,
        tmpDir: tmp.dir,
        loadKeys: keys,
        forgetKeys: () => keys.forget(),
        recordFailure: (failure) => ledger.recordFailure(failure),
        logs,
      };
    },
    async close() {
      for (const l of ledgers) await l.close();
      secretsClient.destroy();
      await Promise.all([s3.close(), dynamo.close(), secrets.close()]);
      await tmp.cleanup();
    },
  };
}

/**
 * Uploads test/fixtures/run/small.yaml, edited, as campaign `name` with the FAR-6 data files beside
 * it (relative paths, as `sondage start --aws` uploads them).
 */
export async function uploadCampaign(store: S3BlobStore, name: string, edit: (doc: CampaignDoc) => void = () => {}): Promise<void> {
  const doc = parse(await readFile(path.join(RUN_FIXTURES, 'small.yaml'), 'utf8')) as CampaignDoc;
  doc['name'] = name;
  doc.design['stories'] = 'stories.yaml';
  doc.design['concept_pairs'] = 'concept-pairs.yaml';
  delete doc['data_dir'];
  edit(doc);
  const prefix = `campaigns/${name}/input/`;
  await store.put(`${prefix}campaign.yaml`, stringify(doc));
  for (const file of ['stories.yaml', 'concept-pairs.yaml']) {
    await store.put(`${prefix}${file}`, await readFile(path.join(REPO_ROOT, 'examples/far6', file)));
  }
}

/** The shards a plan wrote to a manifest (the JSON the state machine's Distributed Map reads). */
export async function readShards(store: BlobStore, key: string): Promise<Shard[]> {
  const body = await store.get(key);
  if (body === undefined) throw new Error(`no manifest at ${key}`);
  return JSON.parse(Buffer.from(body).toString('utf8')) as Shard[];
}

/**
 * A Lambda context whose clock the test drives: each `getRemainingTimeInMillis` call takes
 * `tickMs` off the time left (0: time stands still), so "the time runs short" is a count of
 * replies, not a race with the machine's speed.
 */
export function lambdaContext(remainingMs = 15 * 60_000, tickMs = 0, requestId = 'req-1'): Context {
  let left = remainingMs;
  return {
    functionName: 'worker',
    awsRequestId: requestId,
    invokedFunctionArn: 'arn:aws:lambda:us-east-1:123456789012:function:worker',
    getRemainingTimeInMillis: () => {
      const now = left;
      left -= tickMs;
      return now;
    },
  } as unknown as Context;
}
