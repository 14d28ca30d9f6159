import { afterEach, describe, expect, it } from 'vitest';
import { EmbeddedLedger } from '../../lib/store/index.js';
import { loadContext, tempDir, writeCampaign } from '../helpers/campaigns.js';
import { runMain } from '../helpers/cli.js';
import { storedReplies } from '../helpers/runData.js';
import { chatCompletion, startWireServer, type RecordedRequest, type WireServer } from '../providers/helpers/wireServer.js';

// `sondage run` on a local OpenAI-compatible endpoint: items the provider refuses for good
// are not asked again by the next run, `--retry-failed` asks them, and a rejected key ends the run
// with the items pending and a message that names the key's variable, never the key.

const KEY = 'sk-test-local-retry-0000000000000';
const ENV = 'SONDAGE_RETRY_TEST_KEY';

const isLabel = (req: RecordedRequest): boolean => /A:|B:/.test((req.body as { messages: { content: string }[] }).messages.at(-1)?.content ?? '');

const completion = (req: RecordedRequest) => chatCompletion(req, isLabel(req) ? 'A' : 'Yes. It hurt someone.');

describe('sondage run and failed items', () => {
  let server: WireServer | undefined;
  let cleanup: (() => Promise<void>) | undefined;
  afterEach(async () => {
    await server?.close();
    await cleanup?.();
    delete process.env[ENV];
  });

  async function campaign(name: string) {
    const tmp = await tempDir(name);
    cleanup = tmp.cleanup;
    const file = await writeCampaign(tmp.dir, 'small.yaml', (doc) => {
      doc.design['languages'] = ['en'];
      doc.design['forms'] = ['plain'];
      doc.design['constraints'] = ['yesno', 'label'];
      doc.models = [
        {
          id: 'local',
          provider: 'openai-compatible',
          model: 'qwen3-8b',
          base_url: `${server!.url}/v1`,
          api_key_env: ENV,
          rpm: 100_000,
          price: { input_per_mtok: 1, output_per_mtok: 2 },
        },
      ];
    });
    return { file, ctx: await loadContext(file) };
  }

  it('a content-filtered item is recorded once; the next run skips it, --retry-failed asks it', async () => {
    let filter = true;
    server = await startWireServer([
      {
        from: (req) =>
          filter && isLabel(req) ? { status: 400, json: { error: { message: 'blocked by policy', type: 'invalid_request_error', code: 'content_filter' } } } : completion(req),
      },
    ]);
    process.env[ENV] = KEY;
    const { file, ctx } = await campaign('retry-failed');

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
    server = await startWireServer([{ from: () => ({ status: 401, json: { error: { message: 'Incorrect API key provided', type: 'invalid_request_error', code: 'invalid_api_key' } } }) }]);
    process.env[ENV] = KEY;
    const { file, ctx } = await campaign('bad-key');

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
