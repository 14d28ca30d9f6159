import path from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { itemMaxCost } from '../../lib/run/planCampaign.js';
import { runCampaign } from '../../lib/run/runCampaign.js';
import type { PromptItem } from '../../lib/core/types.js';
import type { RunContext } from '../../lib/run/context.js';
import { loadContext, rootItems, smallestDesign, type CampaignDoc } from '../helpers/campaigns.js';
import { wireCampaign, type WireCampaign } from '../helpers/wireCampaign.js';
import { ledgerSnapshot } from '../helpers/runData.js';
import type { WireReply, WireServer } from '../providers/helpers/wireServer.js';

// An attempt that was sent and never answered (it timed out) may have been billed: its
// reservation stays charged, as possibly billed, against the cap — never released as $0. A retry
// of it is a new call that reserves again. The attempt timeout is the model's own `timeout_s`.

const PRICE = { input_per_mtok: 1, output_per_mtok: 2 };

let wire: WireCampaign | undefined;
afterEach(async () => wire?.close());

/**
 * One story in English, plain yes/no, one generation each: a few calls to a server that never
 * answers. `onRequest` hears each request as it arrives (with the count so far).
 */
async function silentCampaign(
  model: Record<string, unknown> = {},
  onRequest: (n: number) => void = () => {},
): Promise<{ server: WireServer; ctx: RunContext; items: readonly PromptItem[]; dataDir: string }> {
  let n = 0;
  const silent: WireReply = {
    from: () => {
      onRequest(++n);
      return { hang: true };
    },
  };
  wire = await wireCampaign([silent], { rpm: 100_000, price: PRICE, ...model }, (doc: CampaignDoc) => {
    smallestDesign(doc);
  });
  const ctx = await loadContext(wire.file);
  return { server: wire.server, ctx, items: rootItems(ctx, ctx.campaign.models[0]!, 'en'), dataDir: path.join(wire.dir, 'data') };
}

describe('attempts sent and never answered', () => {
  it('a server that never answers: each timed-out attempt (models[].timeout_s) is possibly billed at its reservation, within the cap', async () => {
    const { server, ctx, items, dataDir } = await silentCampaign({ timeout_s: 0.3 });

    // The run's own attempt timeout is 2 minutes: only the model's timeout_s can end these attempts in time.
    const summary = await runCampaign(ctx, { dataDir, allowPartial: true, skipAnalysis: true, retry: { maxAttempts: 2, baseDelayMs: 1, maxDelayMs: 1, timeoutMs: 120_000 } });

    // Two attempts an item went out. The server runs in the test's process: on a loaded machine
    // the client may give up (timeout_s) before the server has read a request, which a real
    // provider may still have received; so the server's count is a bound, and the ledger below,
    // two reservations an item kept charged, is the exact count of attempts.
    expect(server.requests.length).toBeGreaterThan(0);
    expect(server.requests.length).toBeLessThanOrEqual(2 * items.length);
    const { budget, generate } = await ledgerSnapshot(dataDir, ctx.campaign.name);
    expect(generate.failed).toBe(items.length);
    expect(budget.spent_usd).toBe(0);
    expect(budget.reserved_usd).toBe(0);
    // Two attempts an item, each sent and unanswered: each keeps one reservation charged.
    const perItem = items.map((i) => itemMaxCost(i, PRICE));
    expect(budget.possibly_billed_usd).toBeCloseTo(2 * perItem.reduce((s, x) => s + x, 0), 12);
    expect(summary.possiblyBilledUsd).toBeCloseTo(budget.possibly_billed_usd, 12);
  });

  it('calls in flight when the run is aborted (as the Lambda deadline aborts them) are possibly billed at their reservations', async () => {
    const controller = new AbortController();
    let expected = Number.POSITIVE_INFINITY;
    // Aborted when the last call arrives: every call is on the wire, none answered.
    const { server, ctx, items, dataDir } = await silentCampaign({}, (n) => {
      if (n === expected) controller.abort();
    });
    expected = items.length;

    const summary = await runCampaign(ctx, { dataDir, allowPartial: true, skipAnalysis: true, signal: controller.signal });

    expect(summary.stopped).toBe('aborted');
    expect(server.requests.length).toBe(items.length);
    const { budget } = await ledgerSnapshot(dataDir, ctx.campaign.name);
    expect(budget.spent_usd).toBe(0);
    expect(budget.reserved_usd).toBe(0);
    expect(budget.possibly_billed_usd).toBeCloseTo(items.reduce((s, i) => s + itemMaxCost(i, PRICE), 0), 12);
  });
});
