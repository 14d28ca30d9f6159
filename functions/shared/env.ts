/**
 * The handlers' dependencies from the environment the stack sets (lib/config ENV): the data bucket
 * on S3, the ledger on DynamoDB, the provider keys from Secrets Manager. Endpoints are overridable
 * (ENV.s3Endpoint, ENV.dynamoEndpoint) so that handlers run against local servers in tests.
 */
import { DynamoDBClient } from '@aws-sdk/client-dynamodb';
import { SecretsManagerClient } from '@aws-sdk/client-secrets-manager';
import { tmpdir } from 'node:os';
import { ENV } from '../../lib/config/index.js';
import { DynamoLedger } from '../../lib/store/DynamoLedger.js';
import type { ExecutionFailure } from '../../lib/store/DynamoLedger.js';
import { S3BlobStore } from '../../lib/store/S3BlobStore.js';
import type { BlobStore, Ledger } from '../../lib/store/types.js';
import { requiredEnv } from './requiredEnv.js';
import { providerKeyLoader } from './secrets.js';


export interface EnvStores {
  readonly store: BlobStore;
  ledgerFor(runId: string): Ledger;
  loadKeys(execution?: string): Promise<void>;
  forgetKeys(): void;
  recordFailure(failure: ExecutionFailure): Promise<void>;
  readonly tmpDir: string;
}

/**
 * Stores and key loader from the environment, built once per container. One DynamoDB client for
 * every ledger: a ledger per invocation only carries that invocation's run id on its reservations.
 */
export function storesFromEnv(handler: string, options: { readonly withKeys: boolean; readonly dynamoClient?: DynamoDBClient }): EnvStores {
  const s3Endpoint = process.env[ENV.s3Endpoint];
  const dynamoEndpoint = process.env[ENV.dynamoEndpoint];
  const store = new S3BlobStore({
    bucket: requiredEnv(ENV.bucket, handler),
    clientConfig: s3Endpoint ? { endpoint: s3Endpoint, forcePathStyle: true } : {},
  });
  // A test's fleet passes its own (one that can be killed mid-commit).
  const client = options.dynamoClient ?? new DynamoDBClient(dynamoEndpoint ? { endpoint: dynamoEndpoint } : {});
  const ledgerTable = requiredEnv(ENV.ledgerTable, handler);
  const budgetTable = requiredEnv(ENV.budgetTable, handler);
  const secretArn = options.withKeys ? requiredEnv(ENV.providerSecretArn, handler) : undefined;
  const failures = new DynamoLedger({ ledgerTable, budgetTable, client });
  const keys = secretArn ? providerKeyLoader({ client: new SecretsManagerClient({}), secretArn }) : undefined;
  return {
    store,
    ledgerFor: (runId) => new DynamoLedger({ ledgerTable, budgetTable, client, runId }),
    recordFailure: (failure) => failures.recordFailure(failure),
    loadKeys: keys ?? (async () => {}),
    forgetKeys: () => keys?.forget(),
    tmpDir: tmpdir(),
  };
}
