import { readFile, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { parse, stringify } from 'yaml';
import { parseCampaign } from '../../lib/design/campaign.js';
import { CampaignFileError } from '../../lib/errors.js';
import { loadRunContext } from '../../lib/run/context.js';
import { REPO_ROOT, useTempDir, writeCampaign } from '../helpers/campaigns.js';
import { campaignFileError } from '../helpers/fileErrors.js';

const MODEL = 'anthropic.claude-3-5-haiku-20241022-v1:0';
const PRICE = { input_per_mtok: 0.8, output_per_mtok: 4, batch_discount: 0.5 };
const BATCH = { s3_uri: 's3://sondage-batch/jobs', role_arn: 'arn:aws:iam::123456789012:role/sondage-bedrock-batch' };

function doc(model: Record<string, unknown>): Record<string, unknown> {
  return {
    name: 'bedrock-check',
    seed: 1,
    budget_usd: 1,
    battery: 'far6',
    design: { stories: path.join(REPO_ROOT, 'examples/far6/stories.yaml'), concept_pairs: path.join(REPO_ROOT, 'examples/far6/concept-pairs.yaml'), languages: ['en'] },
    models: [{ id: 'haiku', provider: 'bedrock', model: MODEL, ...model }],
    judge: { id: 'judge', provider: 'simulated', model: 'judge' },
  };
}

const lines = (raw: Record<string, unknown>): string[] => campaignFileError(() => parseCampaign(raw, 'c.yaml', { cwd: '/w' })).message.split('\n');

describe('provider bedrock in the campaign file', () => {
  it('parses a sync and a batch entry, carrying region and bedrock_batch to the providers', () => {
    const sync = parseCampaign(doc({ region: 'eu-central-1', price: PRICE }), 'c.yaml', { cwd: '/w' }).models[0]!;
    expect(sync).toMatchObject({ provider: 'bedrock', model: MODEL, region: 'eu-central-1', mode: 'sync', price_source: 'campaign' });
    expect(sync.api_key_env).toBeUndefined();
    const batch = parseCampaign(doc({ mode: 'batch', price: PRICE, bedrock_batch: BATCH }), 'c.yaml', { cwd: '/w' }).models[0]!;
    expect(batch).toMatchObject({ mode: 'batch', bedrock_batch: BATCH });
  });

  it('needs a price (the table has none for Bedrock), as for any model without a built-in price', () => {
    expect(lines(doc({})).join('\n')).toMatch(/models\[0\]\.price: no list price is known for bedrock\/anthropic\.claude-3-5-haiku-20241022-v1:0 \(price table [^)]+\); add price/);
  });

  it('refuses, naming the field: an API key variable, batch without its bucket and role, bedrock fields on another provider, a malformed role ARN', () => {
    const all = [
      ...lines(doc({ price: PRICE, api_key_env: 'AWS_SECRET_ACCESS_KEY' })),
      ...lines(doc({ price: PRICE, mode: 'batch' })),
      ...lines({ ...doc({}), models: [{ id: 'o', provider: 'openai', model: 'gpt-4.1-mini', region: 'us-east-1' }] }),
      ...lines(doc({ price: PRICE, mode: 'batch', bedrock_batch: { ...BATCH, role_arn: 'sondage-role' } })),
    ].join('\n');
    expect(all).toMatch(/models\[0\]\.api_key_env: provider bedrock uses AWS credentials/);
    expect(all).toMatch(/models\[0\]\.bedrock_batch: is required for mode: batch on bedrock/);
    expect(all).toMatch(/models\[0\]\.region: only provider bedrock takes region; remove it \(provider is openai\)/);
    expect(all).toMatch(/models\[0\]\.bedrock_batch\.role_arn: expected an IAM role ARN/);
    // The value of a variable named by mistake is never read, let alone shown.
    expect(all).not.toMatch(/AKIA/);
  });

  it('refuses logprobs in a Bedrock model\'s settings: Converse returns none', () => {
    expect(lines(doc({ price: PRICE, settings: { logprobs: true, top_logprobs: 5 } })).join('\n')).toMatch(
      /models\[0\]\.settings: asks for logprobs, but Bedrock Converse returns no token log-probabilities/,
    );
  });
});

describe('the plan refuses a phase read from logprobs on a Bedrock model', () => {
  const tmp = useTempDir('bedrock-plan');

  it('P(True)\'s verify phase on a Bedrock model is refused before anything runs, with the reason', async () => {
    // Prepare: the P(True) demo with its first model on Bedrock.
    const source = path.join(REPO_ROOT, 'examples/ptrue/demo.yaml');
    const raw = parse(await readFile(source, 'utf8')) as Record<string, unknown> & { design: Record<string, unknown>; models: Record<string, unknown>[] };
    raw.design['items'] = path.join(REPO_ROOT, 'examples/ptrue', raw.design['items'] as string);
    raw['data_dir'] = 'data';
    raw.models = [{ id: 'haiku', provider: 'bedrock', model: MODEL, region: 'us-east-1', price: PRICE }];
    const file = path.join(tmp.dir, 'ptrue.yaml');
    await writeFile(file, stringify(raw));

    // Act
    const err = await loadRunContext(file).then(
      () => undefined,
      (e: unknown) => e,
    );

    // Assess
    expect(err).toBeInstanceOf(CampaignFileError);
    expect((err as Error).message).toContain('models[0].provider: phase "verify" is read from token logprobs, but Bedrock Converse returns no token log-probabilities');
  });

  it('a FAR-6 campaign, read from text alone, loads with a Bedrock model', async () => {
    const file = await writeCampaign(tmp.dir, 'small.yaml', (d) => {
      d.models = [{ id: 'haiku', provider: 'bedrock', model: MODEL, region: 'us-east-1', price: PRICE }];
    });
    const ctx = await loadRunContext(file);
    expect(ctx.campaign.models[0]).toMatchObject({ provider: 'bedrock', region: 'us-east-1' });
  });
});
