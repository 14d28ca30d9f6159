import { afterEach, describe, expect, it } from 'vitest';
import { EmbeddedLedger } from '../../lib/store/index.js';
import { loadContext } from '../helpers/campaigns.js';
import { runMain } from '../helpers/cli.js';
import { storedReplies } from '../helpers/runData.js';
import { chatCompletion, type RecordedRequest, type WireReply } from '../providers/helpers/wireServer.js';
import { WIRE_KEY as KEY, WIRE_KEY_ENV as ENV, wireCampaign, type WireCampaign } from '../helpers/wireCampaign.js';

// `sondage run` on a local OpenAI-compatible endpoint: items the provider refuses for good
// are not asked again by the next run, `--retry-failed` asks them, and a rejected key ends the run
// with the items pending and a message that names the key's variable, never the key.

const isLabel = (req: RecordedRequest): boolean => /A:|B:/.test((req.body as { messages: { content: string }[] }).messages.at(-1)?.content ?? '');

const completion = (req: RecordedRequest) => chatCompletion(req, isLabel(req) ? 'A' : 'Yes. It hurt someone.');

describe('sondage run and failed items', () => {
  let wire: WireCampaign | undefined;
  afterEach(async () => wire?.close());

  /** One English story, plain form, yes/no and label items, on a server answering by `reply`. */
  async function campaign(reply: WireReply) {
    wire = await wireCampaign([reply], { rpm: 100_000, price: { input_per_mtok: 1, output_per_mtok: 2 } }, (doc) => {
      doc.design['languages'] = ['en'];
      doc.design['forms'] = ['plain'];
      doc.design['constraints'] = ['yesno', 'label'];
    });
    return { server: wire.server, file: wire.file, ctx: await loadContext(wire.file) };
  }

  it('a content-filtered item is recorded once; the next run skips it, --retry-failed asks it', async () => {
    let filter = true;
    const { server, file, ctx } = await campaign({
      from: (req) =>
        filter && isLabel(req) ? { status: 400, json: { error: { message: 'blocked by policy', type: 'invalid_request_error', code: 'content_filter' } } } : completion(req),
    });

    const first = await runMain(['run', file, '--quiet']);
    expect(first.code).toBe(0);
    expect(first.stderr).toMatch(/--retry-failed/);
    const labelCalls = server.requests.filter(isLabel).length;
    expect(labelCalls).toBeGreaterThan(0);
    const after1 = server.requests.length;

    // The resume asks nothing: every item is done or refused for good.
    const second = await runMain(['run', file, '--quiet']);
    expect(second.code).toBe(0);
    expect(server.requests.length).toBe(after1);

    filter = false;
    const third = await runMain(['run', file, '--quiet', '--retry-failed']);
    expect(third.code).toBe(0);
    expect(server.requests.length).toBe(after1 + labelCalls);
    const rows = await storedReplies(ctx.dataDir, ctx.campaign.name, 'generate');
    expect(rows.filter((r) => r.error_class === 'content_filter')).toHaveLength(labelCalls);
    const ledger = new EmbeddedLedger(ctx.dataDir);
    try {
      expect(await ledger.counts(ctx.campaign.name, 'generate')).toEqual({ pending: 0, done: after1, failed: 0 });
    } finally {
      await ledger.close();
    }
  });

  it('a rejected key stops the run with every item pending and names the variable, not the key', async () => {
    const { server, file, ctx } = await campaign({ from: () => ({ status: 401, json: { error: { message: 'Incorrect API key provided', type: 'invalid_request_error', code: 'invalid_api_key' } } }) });

    const out = await runMain(['run', file, '--quiet']);
    expect(out.code).toBe(4);
    expect(out.stderr).toMatch(new RegExp(`openai-compatible/.*rejected the API key \\(auth.*${ENV}`));
    expect(out.stderr + out.stdout).not.toContain(KEY);
    const ledger = new EmbeddedLedger(ctx.dataDir);
    try {
      const counts = await ledger.counts(ctx.campaign.name, 'generate');
      expect(counts).toMatchObject({ done: 0, failed: 0 });
      expect(counts.pending).toBeGreaterThan(server.requests.length);
    } finally {
      await ledger.close();
    }
  });
});
