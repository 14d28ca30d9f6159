import { CampaignFileError, formatIssues } from '../../errors.js';
import { entryPath } from '../apiKey.js';
import type { ProviderContext, ProviderEntry } from '../entry.js';
import type { BatchClient } from '../batchTypes.js';
import type { ModelProvider } from '../types.js';
import { BedrockBatchClient } from './BedrockBatchClient.js';
import { BedrockConverseProvider } from './BedrockConverseProvider.js';
import type { BedrockConnection } from './BedrockConverseProvider.js';

function refuse(entry: ProviderEntry, ctx: ProviderContext, field: string, message: string): never {
  const issues = [{ file: ctx.file ?? '(campaign)', path: `${entryPath(entry)}.${field}`, message }];
  throw new CampaignFileError(formatIssues(issues), issues);
}

/**
 * What a Bedrock entry connects with: its model id, the region (the entry's `region`, else
 * AWS_REGION or AWS_DEFAULT_REGION, as the AWS CLI reads them), `base_url` as the endpoint of every
 * call (a stand-in), and the SDK's default credential chain: on Lambda the worker's role, locally
 * the profile or environment. No key is read here, so none can be printed.
 * @throws CampaignFileError when no region is given anywhere.
 */
export function bedrockConnection(entry: ProviderEntry, ctx: ProviderContext): BedrockConnection {
  const env = ctx.env ?? process.env;
  const region = entry.region ?? env['AWS_REGION'] ?? env['AWS_DEFAULT_REGION'];
  if (region === undefined || region.trim() === '') {
    refuse(entry, ctx, 'region', 'provider bedrock needs an AWS region; set region: us-east-1 (the region where the model is enabled), or export AWS_REGION');
  }
  return {
    model: entry.model,
    region: region.trim(),
    ...(entry.base_url !== undefined ? { endpoint: entry.base_url } : {}),
    ...(ctx.timeoutMs !== undefined ? { timeoutMs: ctx.timeoutMs } : {}),
  };
}

/** Registry factory for `provider: bedrock`: Converse. */
export function createBedrockProvider(entry: ProviderEntry, ctx: ProviderContext): ModelProvider {
  return new BedrockConverseProvider(bedrockConnection(entry, ctx));
}

/**
 * Registry factory for `provider: bedrock` with `mode: batch`: batch inference jobs.
 * @throws CampaignFileError when the entry has no `bedrock_batch` (the bucket and the service role).
 */
export function createBedrockBatchClient(entry: ProviderEntry, ctx: ProviderContext): BatchClient {
  const batch = entry.bedrock_batch;
  if (batch === undefined) {
    refuse(entry, ctx, 'bedrock_batch', 'mode: batch on bedrock needs bedrock_batch: { s3_uri: s3://bucket/prefix, role_arn: arn:aws:iam::…:role/… }, where the jobs keep their files and the role Bedrock reads and writes them with');
  }
  return new BedrockBatchClient({ ...bedrockConnection(entry, ctx), s3Uri: batch.s3_uri, roleArn: batch.role_arn });
}
