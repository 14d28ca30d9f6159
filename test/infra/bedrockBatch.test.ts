/**
 * Bedrock batch inference on AWS: what `-c sondage:bedrockBatch=true` deploys (the service role,
 * the worker's grants, the plan's settings, the outputs), what a stack without it lacks, and the
 * plan's check that a campaign's `bedrock_batch` names what the stack granted.
 */
import { writeFile } from 'node:fs/promises';
import path from 'node:path';
import { beforeAll, describe, expect, it } from 'vitest';
import { stringify } from 'yaml';
import { BEDROCK_BATCH_STACK_OUTPUTS, ENV, PREFIX } from '../../lib/config/index.js';
import { checkBedrockBatch, parseBedrockBatchEnv } from '../../lib/run/bedrockBatchChecks.js';
import { loadRunContext } from '../../lib/run/context.js';
import { REPO_ROOT, useTempDir } from '../helpers/campaigns.js';
import { iamStatements, synthesize, tokenText } from './synth.js';
import type { Synthesized } from './synth.js';

let on: Synthesized;
let off: Synthesized;
beforeAll(() => {
  on = synthesize({ 'sondage:bedrockBatch': 'true' });
  off = synthesize();
}, 120_000);

/** The one role Bedrock may assume, as the template has it. */
function serviceRole(s: Synthesized): [string, { Properties: { AssumeRolePolicyDocument: { Statement: { Principal: unknown; Condition?: unknown }[] } } }][] {
  return Object.entries(s.template.findResources('AWS::IAM::Role')).filter(([, r]) =>
    JSON.stringify((r as { Properties: { AssumeRolePolicyDocument: unknown } }).Properties.AssumeRolePolicyDocument).includes('bedrock.amazonaws.com'),
  ) as never;
}

const statementsOf = (s: Synthesized, policyPrefix: string) => iamStatements(s.template).filter((st) => st.policy.startsWith(policyPrefix));

describe('-c sondage:bedrockBatch=true', () => {
  it('adds a service role that only Bedrock may assume, for this account\'s batch jobs in this region', () => {
    const roles = serviceRole(on);
    expect(roles).toHaveLength(1);
    const trust = roles[0]![1].Properties.AssumeRolePolicyDocument.Statement;
    expect(trust).toHaveLength(1);
    expect(trust[0]!.Principal).toEqual({ Service: 'bedrock.amazonaws.com' });
    const condition = trust[0]!.Condition as { StringEquals: Record<string, unknown>; ArnLike: Record<string, unknown> };
    expect(Object.keys(condition).sort()).toEqual(['ArnLike', 'StringEquals']);
    expect(tokenText(condition.StringEquals['aws:SourceAccount'])).toBe('123456789012');
    expect(tokenText(condition.ArnLike['aws:SourceArn'])).toBe('arn:aws:bedrock:us-east-1:123456789012:model-invocation-job/*');
  });

  it('lets the role read and write the bedrock-batch/ prefix of the data bucket and nothing else of it, and invoke models', () => {
    const st = statementsOf(on, 'BedrockBatchServiceRole');
    expect(st.map((x) => x.actions)).toEqual([['s3:GetObject', 's3:PutObject'], ['s3:ListBucket'], ['bedrock:InvokeModel']]);
    expect(tokenText(st[0]!.resources[0])).toMatch(new RegExp(`/${PREFIX.bedrockBatch}\\*"?\\]?$`));
    expect(JSON.stringify(on.template.toJSON())).toContain(`"s3:prefix":["${PREFIX.bedrockBatch}*"]`);
  });

  it('lets the worker create, find, watch and stop jobs, and pass that role to Bedrock only; no other function gets any of it', () => {
    const batchActions = ['bedrock:CreateModelInvocationJob', 'bedrock:GetModelInvocationJob', 'bedrock:StopModelInvocationJob', 'bedrock:ListModelInvocationJobs', 'iam:PassRole'];
    const holders = iamStatements(on.template).filter((st) => st.actions.some((a) => batchActions.includes(a)));
    expect(new Set(holders.map((st) => st.policy.replace(/RoleDefaultPolicy.*$/, '')))).toEqual(new Set(['PipelineWorker']));
    expect(holders.flatMap((st) => st.actions).sort()).toEqual([...batchActions].sort());
    const pass = holders.find((st) => st.actions.includes('iam:PassRole'))!;
    const [roleId] = serviceRole(on)[0]!;
    expect(pass.resources).toEqual([{ 'Fn::GetAtt': [roleId, 'Arn'] }]);
    const passJson = JSON.stringify(on.template.findResources('AWS::IAM::Policy'));
    expect(passJson).toContain('"iam:PassedToService":"bedrock.amazonaws.com"');
  });

  it('tells the plan function the role and prefix, and outputs them for the campaign file', () => {
    const plans = Object.values(on.template.findResources('AWS::Lambda::Function')).filter((f) =>
      JSON.stringify(f).includes(ENV.bedrockBatch),
    ) as { Properties: { Description: string; Environment: { Variables: Record<string, unknown> } } }[];
    expect(plans.map((f) => f.Properties.Description)).toEqual([expect.stringMatching(/registers items in the ledger/)]);
    const value = tokenText(plans[0]!.Properties.Environment.Variables[ENV.bedrockBatch]);
    expect(value).toMatch(/"role_arn":/);
    expect(value).toMatch(new RegExp(`"s3_uri":"s3://.*/${PREFIX.bedrockBatch.replace(/\/$/, '')}"`));
    const outputs = on.template.toJSON().Outputs as Record<string, unknown>;
    expect(Object.keys(outputs)).toEqual(expect.arrayContaining(Object.values(BEDROCK_BATCH_STACK_OUTPUTS)));
  });

  it('expires the jobs\' files by lifecycle, and passes cdk-nag with every wildcard explained', () => {
    expect(JSON.stringify(on.template.findResources('AWS::S3::Bucket'))).toMatch(new RegExp(`"Id":"expire-bedrock-batch","NoncurrentVersionExpiration":\\{"NoncurrentDays":1\\},"Prefix":"${PREFIX.bedrockBatch}"`));
    expect(on.nagFindings).toEqual([]);
  });
});

describe('a stack without it', () => {
  it('has no role for Bedrock, grants no batch action or PassRole, and sets no plan setting or output', () => {
    expect(serviceRole(off)).toEqual([]);
    const actions = iamStatements(off.template).flatMap((st) => st.actions);
    expect(actions.filter((a) => /ModelInvocationJob|PassRole/.test(a))).toEqual([]);
    expect(JSON.stringify(off.template.toJSON())).not.toContain(ENV.bedrockBatch);
    expect(Object.keys(off.template.toJSON().Outputs as object)).not.toContain(BEDROCK_BATCH_STACK_OUTPUTS.roleArn);
  });
});

describe('the plan\'s check of a campaign\'s bedrock_batch against the stack', () => {
  const tmp = useTempDir('bedrock-batch-check');
  const STACK = { role_arn: 'arn:aws:iam::123456789012:role/Sondage-BedrockBatchServiceRole-ABC', s3_uri: 's3://sondage-bucket-xyz/bedrock-batch' };

  async function campaignWith(batch: { s3_uri: string; role_arn: string }, mode = 'batch'): Promise<string> {
    const file = path.join(tmp.dir, 'c.yaml');
    const model = { id: 'haiku', provider: 'bedrock', model: 'anthropic.claude-3-5-haiku-20241022-v1:0', mode, price: { input_per_mtok: 0.8, output_per_mtok: 4, batch_discount: 0.5 } };
    await writeFile(
      file,
      stringify({
        name: 'bedrock-batch-check',
        seed: 1,
        budget_usd: 1,
        battery: 'far6',
        data_dir: 'data',
        design: { stories: path.join(REPO_ROOT, 'examples/far6/stories.yaml'), concept_pairs: path.join(REPO_ROOT, 'examples/far6/concept-pairs.yaml'), languages: ['en'] },
        models: [mode === 'batch' ? { ...model, bedrock_batch: batch } : model],
        judge: { id: 'judge', provider: 'simulated', model: 'judge' },
      }),
    );
    return file;
  }

  it('lets through the stack\'s role and its prefix or a folder below it, and any sync model on any stack', async () => {
    for (const s3_uri of [STACK.s3_uri, `${STACK.s3_uri}/`, `${STACK.s3_uri}/far6-run`]) {
      const ctx = await loadRunContext(await campaignWith({ ...STACK, s3_uri }));
      expect(() => checkBedrockBatch(ctx, STACK)).not.toThrow();
    }
    const sync = await loadRunContext(await campaignWith(STACK, 'sync'));
    expect(() => checkBedrockBatch(sync, undefined)).not.toThrow();
  });

  it('refuses on a stack without it, naming the field and the deploy flag', async () => {
    const file = await campaignWith(STACK);
    const ctx = await loadRunContext(file);
    expect(() => checkBedrockBatch(ctx, undefined)).toThrow(
      `${file}: models[0].bedrock_batch: the deployed stack has no Bedrock batch role; deploy it with \`npx cdk deploy -c sondage:bedrockBatch=true\`, or set mode: sync for this model`,
    );
  });

  it('refuses another role or another bucket or prefix, naming the values the stack has', async () => {
    const file = await campaignWith({ role_arn: 'arn:aws:iam::123456789012:role/admin', s3_uri: 's3://sondage-bucket-xyz/bedrock-batchx' });
    const ctx = await loadRunContext(file);
    let message = '';
    try {
      checkBedrockBatch(ctx, STACK);
    } catch (err) {
      message = (err as Error).message;
    }
    expect(message).toContain(`models[0].bedrock_batch.role_arn: the worker may pass only the stack's Bedrock batch role, ${STACK.role_arn}`);
    expect(message).toContain(`models[0].bedrock_batch.s3_uri: expected ${STACK.s3_uri} or a folder below it`);
    const other = await loadRunContext(await campaignWith({ ...STACK, s3_uri: 's3://another-bucket/bedrock-batch' }));
    expect(() => checkBedrockBatch(other, STACK)).toThrow(/bedrock_batch\.s3_uri: expected/);
  });

  it('reads the plan function\'s setting as the stack writes it, and refuses a malformed one', () => {
    expect(parseBedrockBatchEnv(JSON.stringify({ ...STACK, s3_uri: `${STACK.s3_uri}/` }))).toEqual(STACK);
    expect(parseBedrockBatchEnv(undefined)).toBeUndefined();
    expect(() => parseBedrockBatchEnv('{')).toThrow(`plan: ${ENV.bedrockBatch} is not JSON`);
    expect(() => parseBedrockBatchEnv('{"role_arn":"x"}')).toThrow(/must be \{"role_arn"/);
  });
});
