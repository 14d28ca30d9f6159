/**
 * A worker that reaches its deadline with calls in flight, through the synthesized state machine
 * (the definition `cdk synth` writes, run by the test ASL interpreter, every Lambda task answered
 * by the real handler over the S3, DynamoDB, Secrets Manager and Athena stand-ins, as in
 * pipelineRun.test.ts). The model under test is an OpenAI-compatible server on 127.0.0.1 that holds
 * two requests without an answer while the worker's clock (the fleet's fake one) runs out: the
 * deadline aborts them, each is counted possibly billed at its reservation, the worker commits
 * what it has and asks to be invoked again, and the next invocation asks those items again under
 * reservations of their own. At the end spend stays within the cap, each item has exactly one
 * reply, and the report's tables are the local run's against the same server.
 */
import { createHash } from 'node:crypto';
import { createServer } from 'node:http';
import type { IncomingMessage, ServerResponse } from 'node:http';
import { mkdir } from 'node:fs/promises';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { DEFAULT_AWS_MIN_CALL_SECONDS } from '../../lib/design/campaign.js';
import { itemMaxCost } from '../../lib/run/planCampaign.js';
import { readParquet, tableGlob } from '../../lib/store/index.js';
import { runCampaign } from '../../lib/run/runCampaign.js';
import type { RunSummary } from '../../lib/run/runCampaign.js';
import { loadContext, rootItems, tempDir } from '../helpers/campaigns.js';
import type { CampaignDoc } from '../helpers/campaigns.js';
import { asRemote } from '../helpers/localSource.js';
import { closeServer, listenLocal } from '../helpers/localServer.js';
import { readResults } from '../helpers/runData.js';
import { far6Campaign, oneStoryFar6 } from '../helpers/pipeline/campaignFiles.js';
import { startPipeline } from '../helpers/pipeline/pipelineHarness.js';
import type { FakeClock, Pipeline } from '../helpers/pipeline/pipelineHarness.js';

const CAMPAIGN = 'pipe-deadline';
const PRICE = { input_per_mtok: 1, output_per_mtok: 2 };
/** The worker's synthesized timeout and the handler's safety margin (functions/worker/handler.ts). */
const WORKER_TIMEOUT_MS = 900_000;
const SAFETY_MS = 60_000;

/** A request as the server saw it: which prompt, and what became of it. */
interface Seen {
  readonly key: string;
  outcome: 'answered' | 'held' | 'aborted';
}

/**
 * An OpenAI-compatible server whose replies depend only on the prompt (so the local run and the
 * pipeline store the same). Armed with a clock, it plays the deadline: the first request moves the
 * clock on to 140 s before the worker's deadline (calls must still start: the default attempt
 * timeout is 660 s, the call window 120 s), the 3rd and 4th are held without an answer, and the 5th
 * moves the clock past the deadline before it is answered, so that the worker's check after that
 * reply aborts the two held ones.
 */
class SlowModel {
  readonly seen: Seen[] = [];
  private readonly server = createServer((req, res) => this.serve(req, res));
  private clock: FakeClock | undefined;
  private invocationStart = 0;
  url = '';

  async start(): Promise<void> {
    this.url = (await listenLocal(this.server)).url;
  }

  /** Plays the deadline against `clock` from the next request on. */
  arm(clock: FakeClock): void {
    this.clock = clock;
    this.seen.length = 0;
  }

  /** A worker invocation starts now: its deadline is the worker's timeout less the safety margin from here. */
  invoked(): void {
    if (this.clock) this.invocationStart = this.clock.now();
  }

  private serve(req: IncomingMessage, res: ServerResponse): void {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      const body = JSON.parse(Buffer.concat(chunks).toString('utf8')) as { messages: unknown };
      const key = promptKey(body.messages);
      const n = this.seen.push({ key, outcome: 'answered' });
      const seen = this.seen[n - 1]!;
      const clock = this.clock;
      if (clock && n === 1) clock.advance(WORKER_TIMEOUT_MS - SAFETY_MS - (DEFAULT_AWS_MIN_CALL_SECONDS + 20) * 1000 - (clock.now() - this.invocationStart));
      if (clock && (n === 3 || n === 4)) {
        seen.outcome = 'held';
        res.on('close', () => (seen.outcome = 'aborted'));
        return;
      }
      if (clock && n === 5) clock.advance(WORKER_TIMEOUT_MS - SAFETY_MS + 30_000 - (clock.now() - this.invocationStart));
      setTimeout(() => answer(res, key), 10);
    });
  }

  close(): Promise<void> {
    this.server.closeAllConnections();
    return closeServer(this.server);
  }
}

/** A prompt's key: the hash of its messages. */
function promptKey(messages: unknown): string {
  return createHash('sha256').update(JSON.stringify(messages)).digest('hex').slice(0, 16);
}

/** How many times each key occurs. */
function tally(keys: readonly string[]): Map<string, number> {
  const m = new Map<string, number>();
  for (const k of keys) m.set(k, (m.get(k) ?? 0) + 1);
  return m;
}

/** A chat completion whose text and usage depend only on the prompt. */
function answer(res: ServerResponse, key: string): void {
  const yes = parseInt(key.slice(0, 2), 16) % 2 === 0;
  const body = {
    id: `chatcmpl-${key}`,
    object: 'chat.completion',
    created: 1_751_328_000,
    model: 'qwen3-8b',
    choices: [{ index: 0, message: { role: 'assistant', content: yes ? 'Yes, it was wrong.' : 'No, it was not wrong.' }, logprobs: null, finish_reason: 'stop' }],
    usage: { prompt_tokens: 40 + (parseInt(key.slice(2, 4), 16) % 20), completion_tokens: yes ? 5 : 6, total_tokens: 0 },
  };
  res.writeHead(200, { 'content-type': 'application/json' });
  res.end(JSON.stringify(body));
}

let root: string;
let cleanup: () => Promise<void>;
let file: string;
let local: RunSummary;
let localResults: Map<string, string>;
/** The prompts the local run sent, one entry per request. */
let localAsked: string[];
const model = new SlowModel();
let p: Pipeline | undefined;

beforeAll(async () => {
  ({ dir: root, cleanup } = await tempDir('pipeline-deadline'));
  await model.start();
  const dir = path.join(root, 'campaign');
  await mkdir(dir, { recursive: true });
  file = await far6Campaign(dir, CAMPAIGN, (doc: CampaignDoc) => {
    oneStoryFar6(doc);
    // The model under test is the slow server, with the default attempt timeout; the judge stays simulated.
    doc.models.splice(0, doc.models.length, { id: 'wire', provider: 'openai-compatible', model: 'qwen3-8b', base_url: `${model.url}/v1`, rpm: 100_000, price: PRICE });
    doc.judge['sample_rate'] = 0.5;
    // Three calls at a time: the held two and the one that brings the deadline; every call after
    // the first starts with less than the attempt timeout left before the deadline.
    doc['concurrency'] = 3;
  });
  const ctx = await loadContext(file);
  // The local run against the same server, nothing held: the tables the pipeline must reproduce.
  local = await runCampaign(ctx, { dataDir: ctx.dataDir });
  expect(local.stopped).toBeUndefined();
  localResults = await readResults(ctx.dataDir, CAMPAIGN);
  localAsked = model.seen.map((s) => s.key);
}, 120_000);

afterAll(async () => {
  await p?.close();
  await model.close();
  await cleanup();
});

describe('a worker reaching its deadline with calls in flight, through the synthesized state machine', () => {
  it('counts the cut calls possibly billed, asks their items again within the cap, and stores each item once', async () => {
    // prepare: a deployment on a fake clock, the slow server playing the deadline
    p = await startPipeline();
    const ctx = await p.upload(file);
    const clock = p.useFakeClock(1_000);
    model.arm(clock);
    p.fleet.onInvoke = (fn) => {
      if (fn === 'worker') model.invoked();
    };

    // act
    const run = await p.execute({ campaign: CAMPAIGN });

    // assess: the execution ends, the first generate invocation having stopped at its deadline
    expect(run.result.status, JSON.stringify(run.result).slice(0, 2000)).toBe('SUCCEEDED');
    const held = model.seen.slice(0, 5).filter((s) => s.outcome !== 'answered');
    expect(held.map((s) => s.outcome)).toEqual(['aborted', 'aborted']);
    const workers = p.fleet.of('worker').filter((i) => JSON.stringify(i.payload).includes('"generate"'));
    expect(workers[0]!.output).toMatchObject({ again: true });
    expect(workers.length).toBeGreaterThanOrEqual(2);

    // The calls the deadline cut: stored as attempts without a reply (the two held, and every call
    // still on the wire when the worker's check after the 5th reply aborted them).
    const items = rootItems(ctx, ctx.campaign.models[0]!, 'en');
    const byId = new Map(items.map((i) => [i.item_id, i]));
    const rows = await readParquet<{ item_id: string; status: string; error_class: string | null }>(
      tableGlob(await p.localCopy(CAMPAIGN), CAMPAIGN, 'generate', 'replies'),
      'SELECT item_id, status, error_class FROM parts',
    );
    const cut = rows.filter((r) => r.status !== 'ok');
    expect(cut.length).toBeGreaterThanOrEqual(2);
    for (const r of cut) expect(r.error_class).toBe('aborted');
    // Each prompt was asked as often as the local run asked it (repeats and the audit's retest share
    // prompts), and once more per cut call: no item was asked a third time, nor asked twice unpaid.
    expect(tally(model.seen.map((s) => s.key))).toEqual(tally([...localAsked, ...cut.map((r) => promptKey(byId.get(r.item_id)!.messages))]));

    // Money: every cut call possibly billed at its reservation; spend the stored replies' cost; within the cap.
    const acc = await p.accounting(CAMPAIGN, local.phases.map((s) => s.phase));
    expect(acc.budget.possibly_billed_usd).toBeCloseTo(cut.reduce((s, r) => s + itemMaxCost(byId.get(r.item_id)!, PRICE), 0), 12);
    expect(acc.budget.reserved_usd).toBeCloseTo(0, 12);
    expect(acc.budget.spent_usd).toBeCloseTo(acc.storedCostUsd, 12);
    expect(acc.budget.spent_usd).toBeCloseTo(local.spentUsd, 12);
    expect(acc.budget.spent_usd + acc.budget.possibly_billed_usd).toBeLessThanOrEqual(acc.budget.cap_usd);

    // Each item exactly once in the stored replies and the ledger; the report's tables are the local run's.
    for (const summary of local.phases) {
      const phase = acc.phases[summary.phase]!;
      expect([...phase.okPerItem].filter(([, n]) => n !== 1), `${summary.phase}: items answered more than once`).toEqual([]);
      expect(phase.okPerItem.size, `${summary.phase}: items answered`).toBe(summary.done);
      expect(phase.ledger, `${summary.phase}: ledger`).toEqual({ pending: 0, done: summary.done, failed: 0 });
    }
    const results = await p.results(CAMPAIGN);
    const source = `s3://${p.standIns.names.bucket}/campaigns/${CAMPAIGN}/`;
    expect([...results.keys()].sort()).toEqual([...localResults.keys()].sort());
    // The cut attempts are stored replies too (nothing that may have cost money is thrown away): the
    // attempts count is the only figure that differs from the local run's.
    const withCut = (name: string, text: string): string =>
      name === 'reply_totals.csv' ? text.replace(/^wire,en,(\d+),/m, (_m, n: string) => `wire,en,${Number(n) + cut.length},`) : text;
    // The report pages state the run's possibly billed spend too, which the local run did not have: its tables are compared.
    const tables = [...results].filter(([name]) => name.endsWith('.csv'));
    expect(tables.length).toBeGreaterThan(3);
    for (const [name, text] of tables) expect(text === withCut(name, asRemote(localResults.get(name)!, CAMPAIGN, source)), `${name} differs from the local run's`).toBe(true);
  }, 240_000);
});
