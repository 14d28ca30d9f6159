/**
 * A reply with no text and no logprobs (an OpenAI-compatible `content: null`) is paid and stored
 * as `empty`: never read as an answer, never judged, recorded failed for good like a refusal (the
 * next run does not ask it again), and listed by `sondage status` as an empty reply.
 */
import { afterEach, describe, expect, it } from 'vitest';
import { runCampaign } from '../../lib/run/runCampaign.js';
import { readParquet, tableGlob } from '../../lib/store/index.js';
import { runMain } from '../helpers/cli.js';
import { loadContext } from '../helpers/campaigns.js';
import { wireCampaign, type WireCampaign } from '../helpers/wireCampaign.js';
import { ledgerSnapshot } from '../helpers/runData.js';
import { chatCompletion, type RecordedRequest } from '../providers/helpers/wireServer.js';


describe('empty replies', () => {
  let wire: WireCampaign | undefined;
  afterEach(async () => wire?.close());

  it('content: null is stored as empty, never read or judged, recorded failed once, and shown by status', async () => {
    // About a third of the prompts (by the length of their messages) get content null; the rest a verdict.
    const empty = (req: RecordedRequest) => JSON.stringify((req.body as { messages: unknown }).messages).length % 3 === 0;
    wire = await wireCampaign(
      [
        {
          from: (req) => {
            const reply = chatCompletion(req, 'Yes. That is how the story reads to me.', { prompt_tokens: 50, completion_tokens: 3 });
            if (!empty(req)) return reply;
            const json = reply.json as { choices: { message: { content: string | null } }[] };
            json.choices[0]!.message.content = null;
            return { json };
          },
        },
      ],
      { price: { input_per_mtok: 1, output_per_mtok: 2 } },
      (doc) => void (doc.design['languages'] = ['en']),
    );
    const { server, file } = wire;
    const ctx = await loadContext(file);
    const data = ctx.dataDir;

    const first = await runCampaign(ctx, { signal: new AbortController().signal, skipAnalysis: true });
    const asked = server.requests.length;
    const rows = await readParquet<{ item_id: string; status: string; cost_usd: number; text: string | null }>(tableGlob(data, 'run-small', 'generate', 'replies'), 'SELECT item_id, status, cost_usd, text FROM parts');
    const emptyIds = new Set(rows.filter((r) => r.status === 'empty').map((r) => r.item_id));
    expect(emptyIds.size).toBeGreaterThan(0);
    expect(rows.filter((r) => r.status === 'ok').length).toBeGreaterThan(0);
    // Paid, as the provider billed it.
    expect(rows.filter((r) => r.status === 'empty').every((r) => r.cost_usd > 0)).toBe(true);
    const generate = first.phases.find((p) => p.phase === 'generate')!;
    expect(generate.failed).toBe(emptyIds.size);

    // No reading of any kind (rule or judge) names an item whose reply was empty.
    const readings = await readParquet<{ item_id: string; reader: string }>(tableGlob(data, 'run-small', 'generate', 'readings'), 'SELECT item_id, reader FROM parts');
    expect(readings.length).toBeGreaterThan(0);
    expect(readings.filter((r) => emptyIds.has(r.item_id))).toEqual([]);

    // The next run asks nothing again: an empty reply is recorded once, like a refusal.
    await runCampaign(await loadContext(file), { signal: new AbortController().signal, skipAnalysis: true });
    expect(server.requests.length).toBe(asked);
    expect((await ledgerSnapshot(data, 'run-small')).generate.failed).toBe(emptyIds.size);

    const status = await runMain(['status', file, '--failures', '3']);
    expect(status.stdout).toMatch(/empty_reply: the provider answered with no text \(finish_reason stop\)/);
  });
});
