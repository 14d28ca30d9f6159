/**
 * What a campaign's Bedrock batch models need of the deployed stack, checked by the plan before
 * anything is registered or spent: the stack was deployed with `-c sondage:bedrockBatch=true`, and
 * each `bedrock_batch` names the stack's service role and a location under its prefix. The worker's
 * IAM grants cover exactly those (infra/constructs/BedrockBatch.ts), so any other role or bucket
 * would fail at the first submission with AccessDenied, after the plan had reserved the batch.
 */
import type { BedrockBatchSettings } from '../config/index.js';
import { ENV } from '../config/index.js';
import { stackEnvJson } from '../config/stackEnv.js';
import { CampaignFileError, formatIssues, SondageError } from '../errors.js';
import type { FileIssue } from '../errors.js';
import { answeringEntries } from './context.js';
import type { RunContext } from './context.js';

/**
 * Refuses a campaign whose `mode: batch` Bedrock models cannot run on this stack (`stack`: the plan
 * function's ENV.bedrockBatch; undefined when the stack has no Bedrock batch role).
 * @throws CampaignFileError naming each model's `bedrock_batch` field and the values the stack has
 */
export function checkBedrockBatch(ctx: Pick<RunContext, 'campaign' | 'graph'>, stack: BedrockBatchSettings | undefined): void {
  const issues: FileIssue[] = [];
  for (const { entry, path } of answeringEntries(ctx)) {
    if (entry.provider !== 'bedrock' || entry.mode !== 'batch' || entry.bedrock_batch === undefined) continue;
    const i = ctx.campaign.models.indexOf(entry);
    const at = `${i >= 0 ? `models[${i}]` : (path ?? entry.id)}.bedrock_batch`;
    if (stack === undefined) {
      issues.push({
        file: ctx.campaign.file,
        path: at,
        message: 'the deployed stack has no Bedrock batch role; deploy it with `npx cdk deploy -c sondage:bedrockBatch=true`, or set mode: sync for this model',
      });
      continue;
    }
    if (entry.bedrock_batch.role_arn !== stack.role_arn) {
      issues.push({ file: ctx.campaign.file, path: `${at}.role_arn`, message: `the worker may pass only the stack's Bedrock batch role, ${stack.role_arn} (stack output BedrockBatchRoleArn)` });
    }
    if (!underPrefix(entry.bedrock_batch.s3_uri, stack.s3_uri)) {
      issues.push({ file: ctx.campaign.file, path: `${at}.s3_uri`, message: `expected ${stack.s3_uri} or a folder below it (stack output BedrockBatchS3Uri): the worker and the role may read and write only there` });
    }
  }
  if (issues.length > 0) throw new CampaignFileError(formatIssues(issues), issues);
}

/** `uri` is `prefix` or a folder below it (s3://b/bedrock-batch/x, not s3://b/bedrock-batchx). */
function underPrefix(uri: string, prefix: string): boolean {
  const trimmed = uri.replace(/\/+$/, '');
  return trimmed === prefix || trimmed.startsWith(`${prefix}/`);
}

/** ENV.bedrockBatch as the stack sets it: JSON `{ role_arn, s3_uri }`; undefined when unset. */
export function parseBedrockBatchEnv(value: string | undefined): BedrockBatchSettings | undefined {
  const parsed = stackEnvJson('plan', ENV.bedrockBatch, value);
  if (parsed === undefined) return undefined;
  const o = parsed as Partial<BedrockBatchSettings> | null;
  if (typeof o !== 'object' || o === null || typeof o.role_arn !== 'string' || typeof o.s3_uri !== 'string' || !o.s3_uri.startsWith('s3://')) {
    throw new SondageError(`plan: ${ENV.bedrockBatch} must be {"role_arn": "<role ARN>", "s3_uri": "s3://<bucket>/<prefix>"} (the stack sets it)`);
  }
  return { role_arn: o.role_arn, s3_uri: o.s3_uri.replace(/\/+$/, '') };
}
