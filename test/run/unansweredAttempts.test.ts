import path from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { itemMaxCost } from '../../lib/run/planCampaign.js';
import { runCampaign } from '../../lib/run/runCampaign.js';
import { loadContext, rootItems, tempDir, writeCampaign, type CampaignDoc } from '../helpers/campaigns.js';
import { ledgerSnapshot } from '../helpers/runData.js';
import { startWireServer, type WireServer } from '../providers/helpers/wireServer.js';

// An attempt that was sent and never answered (it timed out) may have been billed: its
// reservation stays charged, as possibly billed, against the cap — never released as $0. A retry
// of it is a new call that reserves again. The attempt timeout is the model's own `timeout_s`.

const ENV = 'SONDAGE_UNANSWERED_KEY';
const PRICE = { input_per_mtok: 1, output_per_mtok: 2 };

const servers: WireServer[] = [];
let cleanup: (() => Promise<void>) | undefined;
afterEach(async () => {
  for (const s of servers.splice(0)) await s.close();
  await cleanup?.();
  delete process.env[ENV];
});

describe('attempts sent and never answered', () => {
  it('a server that never answers: each timed-out attempt (models[].timeout_s) is possibly billed at its reservation, within the cap', async () => {
    const server = await startWireServer([{ hang: true }]);
    servers.push(server);
    const tmp = await tempDir('unanswered');
    cleanup = tmp.cleanup;
    process.env[ENV] = 'sk-test-local-0000000000000000';
    const file = await writeCampaign(tmp.dir, 'small.yaml', (doc: CampaignDoc) => {
      doc.design['languages'] = ['en'];
      doc.design['forms'] = ['plain'];
      doc.design['constraints'] = ['yesno'];
      doc.design['story_limit'] = 2;
      doc.design['repeats'] = { count: 1, fraction: 0 };
      doc.models = [{ id: 'silent', provider: 'openai-compatible', model: 'qwen3-8b', base_url: `${server.url}/v1`, api_key_env: ENV, rpm: 100_000, price: PRICE, timeout_s: 0.3 }];
    });
    const ctx = await loadContext(file);
    const items = rootItems(ctx, ctx.campaign.models[0]!, 'en');
    const dataDir = path.join(tmp.dir, 'data');

    // The run's own attempt timeout is 2 minutes: only the model's timeout_s can end these attempts in time.
    const summary = await runCampaign(ctx, { dataDir, allowPartial: true, skipAnalysis: true, retry: { maxAttempts: 2, baseDelayMs: 1, maxDelayMs: 1, timeoutMs: 120_000 } });

    expect(server.requests.length).toBe(2 * items.length);
    const { budget, generate } = await ledgerSnapshot(dataDir, ctx.campaign.name);
    expect(generate.failed).toBe(items.length);
    expect(budget.spent_usd).toBe(0);
    expect(budget.reserved_usd).toBe(0);
    // Two attempts an item, each sent and unanswered: each keeps one reservation charged.
    const perItem = items.map((i) => itemMaxCost(i, PRICE));
    expect(budget.possibly_billed_usd).toBeCloseTo(2 * perItem.reduce((s, x) => s + x, 0), 12);
    expect(summary.possiblyBilledUsd).toBeCloseTo(budget.possibly_billed_usd, 12);
  }, 30_000);

  it('calls in flight when the run is aborted (as the Lambda deadline aborts them) are possibly billed at their reservations', async () => {
    const server = await startWireServer([{ hang: true }]);
    servers.push(server);
    const tmp = await tempDir('unanswered-abort');
    cleanup = tmp.cleanup;
    process.env[ENV] = 'sk-test-local-0000000000000000';
    const file = await writeCampaign(tmp.dir, 'small.yaml', (doc: CampaignDoc) => {
      doc.design['languages'] = ['en'];
      doc.design['forms'] = ['plain'];
      doc.design['constraints'] = ['yesno'];
      doc.design['story_limit'] = 2;
      doc.design['repeats'] = { count: 1, fraction: 0 };
      doc.models = [{ id: 'silent', provider: 'openai-compatible', model: 'qwen3-8b', base_url: `${server.url}/v1`, api_key_env: ENV, rpm: 100_000, price: PRICE }];
    });
    const ctx = await loadContext(file);
    const items = rootItems(ctx, ctx.campaign.models[0]!, 'en');
    const dataDir = path.join(tmp.dir, 'data');
    const controller = new AbortController();
    // Aborted once every call is on the wire.
    const sent = setInterval(() => {
      if (server.requests.length === items.length) controller.abort();
    }, 10);

    const summary = await runCampaign(ctx, { dataDir, allowPartial: true, skipAnalysis: true, signal: controller.signal });
    clearInterval(sent);

    expect(summary.stopped).toBe('aborted');
    expect(server.requests.length).toBe(items.length);
    const { budget } = await ledgerSnapshot(dataDir, ctx.campaign.name);
    expect(budget.spent_usd).toBe(0);
    expect(budget.reserved_usd).toBe(0);
    expect(budget.possibly_billed_usd).toBeCloseTo(items.reduce((s, i) => s + itemMaxCost(i, PRICE), 0), 12);
  }, 30_000);
});
