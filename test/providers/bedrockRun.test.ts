import { afterEach, describe, expect, it } from 'vitest';
import { syncRemainderNotices } from '../../lib/cli/syncRemainderNotices.js';
import { formatPlan } from '../../lib/run/planCampaign.js';
import { runCampaign } from '../../lib/run/runCampaign.js';
import { readParquet, tableGlob } from '../../lib/store/index.js';
import { loadContext, useTempDir, writeCampaign } from '../helpers/campaigns.js';
import { costOf, expectOneOkEach, ledgerSnapshot, storedReplies } from '../helpers/runData.js';
import { converseReply, useBedrockServer } from '../helpers/bedrockServer.js';
import type { BedrockAnswer } from '../helpers/bedrockServer.js';

const MODEL = 'anthropic.claude-3-5-haiku-20241022-v1:0';
// Fake static credentials for the SDK's default chain (its environment provider): signed with, never stored.
const ACCESS_KEY = 'STANDINTESTKEY00003';
const SECRET = 'fake-run-secret-never-stored-00000000';
const PRICE = { input_per_mtok: 0.8, output_per_mtok: 4, batch_discount: 0.5 };
const USAGE = { inputTokens: 120, outputTokens: 12 };
const BATCH = { s3_uri: 's3://sondage-batch/jobs', role_arn: 'arn:aws:iam::123456789012:role/sondage-bedrock-batch' };

/** Answers letter items with a letter and the others yes-first, as FAR-6's reading map expects. */
function reply(text: string): Record<string, unknown> {
  return converseReply(/A:|B:/.test(text) ? 'A' : 'Yes. I think so, because it hurt someone.', USAGE);
}
const promptOf = (modelInput: unknown): string => (modelInput as { messages: { content: { text: string }[] }[] }).messages.at(-1)?.content[0]?.text ?? '';
/** What one reply of USAGE costs at the on-demand (list) price. */
const LIST_PRICE_PER_REPLY = (USAGE.inputTokens * PRICE.input_per_mtok + USAGE.outputTokens * PRICE.output_per_mtok) / 1e6;

const bedrock = useBedrockServer();
const tmp = useTempDir('bedrock-run');
afterEach(() => {
  delete process.env['AWS_ACCESS_KEY_ID'];
  delete process.env['AWS_SECRET_ACCESS_KEY'];
});

/** The small FAR-6 campaign in English with one Bedrock respondent on the stand-in. */
async function setup(stories: number, model: Record<string, unknown>) {
  const server = await bedrock.start();
  process.env['AWS_ACCESS_KEY_ID'] = ACCESS_KEY;
  process.env['AWS_SECRET_ACCESS_KEY'] = SECRET;
  const file = await writeCampaign(tmp.dir, 'small.yaml', (doc) => {
    doc.design['languages'] = ['en'];
    doc.design['story_limit'] = stories;
    doc.models = [{ id: 'haiku', provider: 'bedrock', model: MODEL, region: 'us-east-1', base_url: server.url, rpm: 100_000, price: PRICE, ...model }];
  });
  return loadContext(file);
}
type Context = Awaited<ReturnType<typeof setup>>;

/** Runs the campaign without analysis, batches polled at once; returns the summary and its generate phase. */
async function runBatchMode(ctx: Context) {
  const summary = await runCampaign(ctx, { skipAnalysis: true, batch: { pollMs: 1 } });
  return { summary, generate: summary.phases.find((p) => p.phase === 'generate')! };
}

const converseCalls = () => bedrock.current.requests.filter((r) => r.path.endsWith('/converse')).length;
const judgeReplies = (ctx: Context) => storedReplies(ctx.dataDir, ctx.campaign.name, 'judge');

/** The ledger spent `spentUsd` to the cent, holds nothing reserved, and has every one of `items` generate items done. */
async function expectLedgerSettled(ctx: Context, spentUsd: number, items: number): Promise<void> {
  const ledger = await ledgerSnapshot(ctx.dataDir, ctx.campaign.name);
  expect(ledger.budget.spent_usd).toBeCloseTo(spentUsd, 12);
  expect(ledger.budget.reserved_usd).toBe(0);
  expect(ledger.generate).toEqual({ pending: 0, done: items, failed: 0 });
}

describe('a campaign on Bedrock, against the wire-format stand-in', () => {
  it('sync (Converse): one ok reply per item through throttling and a model not ready, cost counted once, no credential stored', async () => {
    // Prepare: every 4th call throttled, every 7th a model still loading.
    const ctx = await setup(1, {});
    let n = 0;
    bedrock.current.converse = (req): BedrockAnswer => {
      n++;
      if (n % 4 === 0) return { error: 'ThrottlingException', status: 429, message: 'Too many requests, please wait before trying again.' };
      if (n % 7 === 0) return { error: 'ModelNotReadyException', status: 429, message: 'Model is not ready for inference.' };
      return { json: reply(promptOf(req.body)) };
    };

    // Act
    const summary = await runCampaign(ctx, { retry: { maxAttempts: 12, baseDelayMs: 1, maxDelayMs: 5, timeoutMs: 10_000 }, skipAnalysis: true });

    // Assess: every item once, the failures stored as errors beside them.
    const generate = summary.phases.find((p) => p.phase === 'generate')!;
    expect(generate.failed).toBe(0);
    expect(generate.done).toBe(generate.items);
    const rows = await storedReplies(ctx.dataDir, ctx.campaign.name, 'generate');
    const ok = expectOneOkEach(rows, generate.items);
    expect(rows.filter((r) => r.status === 'error').length).toBeGreaterThan(0);
    // Settlement: Converse's usage at the list price, once per ok reply; nothing left reserved.
    expect(generate.costUsd).toBeCloseTo(ok.size * LIST_PRICE_PER_REPLY, 9);
    const ledger = await ledgerSnapshot(ctx.dataDir, ctx.campaign.name);
    expect(ledger.budget.spent_usd).toBeCloseTo(summary.phases.reduce((s, p) => s + p.costUsd, 0), 9);
    expect(ledger.budget.reserved_usd).toBe(0);
    const stored = await readParquet<{ provider: string; settings_json: string; status: string }>(tableGlob(ctx.dataDir, ctx.campaign.name, 'generate', 'replies'));
    expect(stored.every((r) => r.provider === `bedrock/${MODEL}`)).toBe(true);
    expect(JSON.parse(stored.find((r) => r.status === 'ok')!.settings_json)).toEqual({ inferenceConfig: { maxTokens: 120, temperature: 1 } });
    // The calls were signed with the environment's key; neither key nor secret was stored.
    expect(bedrock.current.requests.every((r) => String(r.headers.authorization).includes(`Credential=${ACCESS_KEY}/`))).toBe(true);
    expect(JSON.stringify(stored)).not.toContain(SECRET);
    expect(JSON.stringify(stored)).not.toContain(ACCESS_KEY);
  });

  it('credentials AWS refuses stop the model\'s calls with a sentence about AWS credentials, not an API key variable; the items stay pending', async () => {
    const ctx = await setup(1, {});
    bedrock.current.converse = () => ({ error: 'AccessDeniedException', status: 403, message: 'You don\'t have access to the model with the specified model ID.' });

    const summary = await runCampaign(ctx, { retry: { maxAttempts: 3, baseDelayMs: 1, maxDelayMs: 5, timeoutMs: 10_000 }, skipAnalysis: true });

    expect(summary.keyFailures).toHaveLength(1);
    expect(summary.keyFailures![0]).toMatch(/^bedrock\/anthropic\.claude-3-5-haiku-20241022-v1:0: AWS refused the call \(permission: AccessDeniedException/);
    expect(summary.keyFailures![0]).toContain('may call bedrock:InvokeModel on this model');
    expect(summary.keyFailures![0]).not.toMatch(/api_key_env|API key/);
    const ledger = await ledgerSnapshot(ctx.dataDir, ctx.campaign.name);
    expect(ledger.generate.done).toBe(0);
    expect(ledger.generate.pending).toBeGreaterThan(0);
  });

  it('mode: batch: one job for the partition, every item answered exactly once at the batch price, the ledger agrees to the cent', async () => {
    // Prepare: 2 stories in English make 128 items, above Bedrock's 100-record minimum for one job.
    const ctx = await setup(2, { mode: 'batch', bedrock_batch: BATCH });
    bedrock.current.autoRun = (r) => ({ modelOutput: reply(promptOf(r.modelInput)) });

    // Act
    const { summary, generate } = await runBatchMode(ctx);

    // Assess
    expect(generate.items).toBeGreaterThanOrEqual(100);
    expect(generate.done).toBe(generate.items);
    expect(bedrock.current.jobs.size).toBe(1);
    const job = [...bedrock.current.jobs.values()][0]!;
    expect(job).toMatchObject({ modelId: MODEL, modelInvocationType: 'Converse', status: 'Completed' });
    const rows = await storedReplies(ctx.dataDir, ctx.campaign.name, 'generate');
    expectOneOkEach(rows, generate.items);
    const okCost = costOf(rows.filter((r) => r.status === 'ok'));
    expect(okCost).toBeCloseTo(generate.items * LIST_PRICE_PER_REPLY * PRICE.batch_discount, 12);
    const judgeCost = costOf((await judgeReplies(ctx)).filter((r) => r.status === 'ok'));
    await expectLedgerSettled(ctx, okCost + judgeCost, generate.items);
    // No Converse call was made: the batch route carried every item.
    expect(converseCalls()).toBe(0);
    expect(generate.syncRemainder).toBeUndefined();
    // The plan priced the whole partition at the batch price.
    const line = summary.plan.lines.find((l) => l.phase === 'generate' && l.model === 'haiku')!;
    expect(line.syncItems).toBeUndefined();
    expect(line.batchCostUsd).toBeCloseTo(line.costUsd * PRICE.batch_discount, 12);
  });

  it('mode: batch with fewer items than Bedrock\'s 100-record minimum: every item asked once through Converse at the sync price, the run finishes, the ledger agrees to the cent', async () => {
    // Prepare: 1 story in English makes 64 items, below the minimum of one job.
    const ctx = await setup(1, { mode: 'batch', bedrock_batch: BATCH });
    bedrock.current.converse = (req): BedrockAnswer => ({ json: reply(promptOf(req.body)) });

    // Act
    const { summary, generate } = await runBatchMode(ctx);

    // Assess: no job, one Converse call per item, each answered once at the on-demand price.
    expect(generate.items).toBeLessThan(100);
    expect(generate.done).toBe(generate.items);
    expect(bedrock.current.jobs.size).toBe(0);
    expect(converseCalls()).toBe(generate.items);
    const rows = await storedReplies(ctx.dataDir, ctx.campaign.name, 'generate');
    expectOneOkEach(rows, generate.items);
    const cost = costOf(rows);
    expect(cost).toBeCloseTo(generate.items * LIST_PRICE_PER_REPLY, 12);
    await expectLedgerSettled(ctx, cost + costOf(await judgeReplies(ctx)), generate.items);
    // The run says how many went through Converse, and why.
    expect(generate.syncRemainder).toEqual({ items: generate.items, minRequests: 100 });
    expect(syncRemainderNotices(summary.phases)).toEqual([
      `generate: ${generate.items} item(s) of a batch model asked through its synchronous API (Bedrock: Converse) at the on-demand price, not the batch price: fewer than the 100 records a batch job must hold`,
    ]);
    // The plan priced them as the run charged them: at the on-demand price, not half of it.
    const line = summary.plan.lines.find((l) => l.phase === 'generate' && l.model === 'haiku')!;
    expect(line.syncItems).toBe(generate.items);
    expect(line.batchCostUsd).toBeCloseTo(line.costUsd, 12);
    expect(summary.plan.totals.costUsd).toBeCloseTo(summary.plan.lines.reduce((s, l) => s + (l.model === 'haiku' ? l.batchCostUsd! : l.costUsd), 0), 12);
    // Reserved as asked: at the on-demand price (the judge is no batch model).
    expect(summary.plan.totals.maxCostUsd).toBeCloseTo(summary.plan.lines.reduce((s, l) => s + l.maxCostUsd, 0), 12);
    expect(formatPlan(summary.plan)).toContain(`haiku generate: ${generate.items} item(s) fewer than a batch must hold (Bedrock: 100 records per job) go through the synchronous API at list price`);
  });

  it('mode: batch: the few records a job failed transiently are asked through Converse, not a job below the minimum, and the run finishes', async () => {
    // Prepare: 128 items; the job answers all but 5, which come back as server errors (re-queued).
    const ctx = await setup(2, { mode: 'batch', bedrock_batch: BATCH });
    bedrock.current.autoRun = (r, i) => (i < 5 ? { error: { errorCode: 500, errorMessage: 'Internal server error' } } : { modelOutput: reply(promptOf(r.modelInput)) });
    bedrock.current.converse = (req): BedrockAnswer => ({ json: reply(promptOf(req.body)) });

    // Act
    const { generate } = await runBatchMode(ctx);

    // Assess: one job, then 5 Converse calls; every item has exactly one ok reply.
    expect(generate.items).toBeGreaterThanOrEqual(100);
    expect(generate.done).toBe(generate.items);
    expect(bedrock.current.jobs.size).toBe(1);
    expect(converseCalls()).toBe(5);
    expect(generate.syncRemainder).toEqual({ items: 5, minRequests: 100 });
    const rows = await storedReplies(ctx.dataDir, ctx.campaign.name, 'generate');
    expectOneOkEach(rows, generate.items);
    const okCost = costOf(rows.filter((r) => r.status === 'ok'));
    expect(okCost).toBeCloseTo((generate.items - 5) * LIST_PRICE_PER_REPLY * PRICE.batch_discount + 5 * LIST_PRICE_PER_REPLY, 12);
    await expectLedgerSettled(ctx, costOf(rows) + costOf(await judgeReplies(ctx)), generate.items);
  });
});
