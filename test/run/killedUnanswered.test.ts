import path from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { afterEach, describe, expect, it } from 'vitest';
import { POSSIBLY_BILLED_FIELD, readJournal } from '../../lib/run/Journal.js';
import { itemMaxCost } from '../../lib/run/planCampaign.js';
import { runCampaign } from '../../lib/run/runCampaign.js';
import type { ReplyRow } from '../../lib/store/types.js';
import { loadContext, rootItems, smallestDesign, type CampaignDoc } from '../helpers/campaigns.js';
import { exited, spawnCli } from '../helpers/cli.js';
import { costOf, filesUnder, ledgerSnapshot, storedReplies } from '../helpers/runData.js';
import { wireCampaign, type WireCampaign } from '../helpers/wireCampaign.js';
import { chatCompletion, type WireReply } from '../providers/helpers/wireServer.js';

// A run killed (SIGKILL) while attempts it sent were unanswered: the journal says which attempts
// were sent and never answered, and the next run, adopting it, counts each at what it reserved,
// and each retry that was on the wire at the kill at its own reservation. Spend + possibly billed
// stays within the cap across the kill, as it does within one run (unansweredDelivered.test.ts).

const PRICE = { input_per_mtok: 1, output_per_mtok: 2 };
const FAST = { maxAttempts: 3, baseDelayMs: 1, maxDelayMs: 2, timeoutMs: 20_000 };
const USAGE = { prompt_tokens: 40, completion_tokens: 2 };

let wire: WireCampaign | undefined;
afterEach(async () => wire?.close());

type JournalLine = ReplyRow & { [POSSIBLY_BILLED_FIELD]?: number };

describe('a run killed with attempts sent and unanswered', () => {
  it('the next run counts each unanswered attempt in its journal, and each retry in flight at the kill, as possibly billed at its reservation', async () => {
    // Each prompt: the connection dropped after the request was read (delivered, possibly billed);
    // its retry hangs, except the first prompt's, which is answered. Once the killed run is gone,
    // everything is answered.
    let killedRunOver = false;
    const seen = new Map<string, number>();
    let answeredKey: string | undefined;
    const reply: WireReply = {
      from: (req) => {
        if (killedRunOver) return chatCompletion(req, 'Yes.', USAGE);
        const key = JSON.stringify((req.body as { messages?: unknown }).messages);
        const n = (seen.get(key) ?? 0) + 1;
        seen.set(key, n);
        if (n === 1) return { drop: true };
        answeredKey ??= key;
        return key === answeredKey ? chatCompletion(req, 'Yes.', USAGE) : { hang: true };
      },
    };
    wire = await wireCampaign([reply], { rpm: 100_000, price: PRICE }, (doc: CampaignDoc) => {
      smallestDesign(doc);
    });
    const ctx = await loadContext(wire.file);
    const items = rootItems(ctx, ctx.campaign.models[0]!, 'en');
    expect(items.length).toBeGreaterThan(1);
    const maxCost = new Map(items.map((i) => [i.item_id, itemMaxCost(i, PRICE)]));
    const dataDir = path.join(wire.dir, 'data');
    const journals = path.join(dataDir, 'campaigns', ctx.campaign.name, 'generate', '_journal');
    const journalLines = async (): Promise<JournalLine[]> => {
      const out: JournalLine[] = [];
      for (const f of await filesUnder(journals, (n) => n.endsWith('.ndjson'))) out.push(...(await readJournal<JournalLine>(f)));
      return out;
    };

    // Prepare: a real `sondage run`, killed once every item's first attempt is journaled unanswered
    // and one retry is answered (the others hang, so no part is committed).
    const child = spawnCli(['run', wire.file, '--data-dir', dataDir, '--quiet']);
    const exit = exited(child);
    let killed = false;
    while (child.exitCode === null) {
      if (wire.server.requests.length >= 2 * items.length && (await journalLines()).length >= items.length + 1) {
        killed = child.kill('SIGKILL');
        break;
      }
      await sleep(20);
    }
    expect(killed, `the run ended before it could be killed:\n${child.output().stderr}`).toBe(true);
    expect(await exit).toBe('SIGKILL');
    killedRunOver = true;

    const lines = await journalLines();
    const flagged = lines.filter((r) => r.status === 'error');
    const answered = lines.filter((r) => r.status === 'ok');
    expect(flagged.map((r) => r.item_id).sort()).toEqual(items.map((i) => i.item_id).sort());
    // The journal says what each unanswered attempt reserved.
    for (const r of flagged) expect(r[POSSIBLY_BILLED_FIELD]).toBeCloseTo(maxCost.get(r.item_id)!, 15);
    expect(answered).toHaveLength(1);
    expect(answered[0]![POSSIBLY_BILLED_FIELD]).toBeUndefined();
    const before = await ledgerSnapshot(dataDir, ctx.campaign.name);
    const all = [...maxCost.values()].reduce((s, c) => s + c, 0);
    // Held by the dead run: the chunk's reservation, and one per retry.
    expect(before.budget.reserved_usd).toBeCloseTo(2 * all, 12);
    expect(before.budget.possibly_billed_usd).toBe(0);

    // Act: the next run adopts the journal.
    const summary = await runCampaign(await loadContext(wire.file), { dataDir, allowPartial: true, skipAnalysis: true, retry: FAST });

    // Assess: each first attempt at its reservation, and each retry the kill left on the wire at its own.
    const hung = items.filter((i) => i.item_id !== answered[0]!.item_id);
    const expected = all + hung.reduce((s, i) => s + maxCost.get(i.item_id)!, 0);
    const after = await ledgerSnapshot(dataDir, ctx.campaign.name);
    expect(summary.phases[0]!.adopted).toBe(1);
    expect(after.budget.possibly_billed_usd).toBeCloseTo(expected, 12);
    expect(after.budget.reserved_usd).toBe(0);
    expect(after.budget.orphaned_usd).toBe(0);
    expect(after.generate.done).toBe(items.length);
    const rows = await storedReplies(dataDir, ctx.campaign.name, 'generate');
    const judged = await storedReplies(dataDir, ctx.campaign.name, 'judge');
    expect(after.budget.spent_usd).toBeCloseTo(costOf([...rows, ...judged]), 12);
    expect(after.budget.spent_usd + after.budget.possibly_billed_usd).toBeLessThanOrEqual(after.budget.cap_usd);
    // The flag is the journal's: the stored replies have no such column.
    expect(rows.every((r) => !(POSSIBLY_BILLED_FIELD in r))).toBe(true);
  }, 60_000);
});
