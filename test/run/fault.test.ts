import { createServer, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterEach, describe, expect, it } from 'vitest';
import { runCampaign } from '../../lib/run/runCampaign.js';
import { loadContext, tempDir, writeCampaign } from '../helpers/campaigns.js';
import { ledgerSnapshot, okCounts, storedReplies } from '../helpers/runData.js';

const KEY = 'sk-test-fault-0000000000000000';

/** The faults, in the order the server cycles through them, and the error class each must be stored as. */
const FAULTS = [
  { kind: '429', errorClass: 'rate_limit' },
  { kind: '500', errorClass: 'server_error' },
  { kind: '503', errorClass: 'server_error' },
  { kind: 'drop', errorClass: 'connection' },
  { kind: 'hang', errorClass: 'timeout' },
  { kind: 'malformed', errorClass: 'malformed_response' },
] as const;
type Fault = (typeof FAULTS)[number]['kind'];

interface FaultServer {
  readonly url: string;
  /** Faults served, by kind; `ok` counts the good answers. */
  readonly served: Map<Fault | 'ok', number>;
  close(): Promise<void>;
}

/**
 * An OpenAI-compatible chat endpoint that fails every fifth call (20 %), cycling through the
 * faults a provider meets: 429 with retry-after, 500, 503, a dropped connection, a
 * response that never comes, and a 200 whose body is not JSON.
 */
async function startFaultServer(): Promise<FaultServer> {
  const served = new Map<Fault | 'ok', number>();
  const hanging = new Set<ServerResponse>();
  let n = 0;
  const server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      n++;
      const fault = n % 5 === 0 ? FAULTS[(n / 5 - 1) % FAULTS.length]!.kind : undefined;
      served.set(fault ?? 'ok', (served.get(fault ?? 'ok') ?? 0) + 1);
      const json = (status: number, body: unknown, headers: Record<string, string> = {}) => {
        res.writeHead(status, { 'content-type': 'application/json', ...headers });
        res.end(JSON.stringify(body));
      };
      switch (fault) {
        case '429':
          return json(429, { error: { message: 'slow down', type: 'rate_limit' } }, { 'retry-after-ms': '5' });
        case '500':
          return json(500, { error: { message: 'internal error', type: 'server_error' } });
        case '503':
          return json(503, { error: { message: 'overloaded', type: 'server_error' } });
        case 'drop':
          return req.socket.destroy();
        case 'hang':
          hanging.add(res);
          return;
        case 'malformed':
          res.writeHead(200, { 'content-type': 'application/json' });
          return res.end('{"id": "chatcmpl-torn", "choices": [{"index": 0, "mess');
        default: {
          const body = JSON.parse(Buffer.concat(chunks).toString('utf8')) as { model: string; messages: { content: string }[] };
          const prompt = body.messages.at(-1)?.content ?? '';
          const text = /A:|B:/.test(prompt) ? 'A' : 'Yes. I think so, because it hurt someone.';
          return json(200, {
            id: `chatcmpl-${n}`,
            object: 'chat.completion',
            created: 1_751_328_000,
            model: body.model,
            choices: [{ index: 0, message: { role: 'assistant', content: text, refusal: null }, finish_reason: 'stop', logprobs: null }],
            usage: { prompt_tokens: 100, completion_tokens: 10, total_tokens: 110 },
          });
        }
      }
    });
  });
  // An idle keep-alive socket closed by the server while the client reuses it would be a failure
  // the server never saw; keep them open for the whole test.
  server.keepAliveTimeout = 60_000;
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}`,
    served,
    close: () =>
      new Promise<void>((resolve) => {
        for (const res of hanging) res.destroy();
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}

describe('a campaign against an endpoint that fails 20 % of calls', () => {
  let server: FaultServer | undefined;
  let cleanup: (() => Promise<void>) | undefined;
  afterEach(async () => {
    await server?.close();
    await cleanup?.();
    delete process.env['SONDAGE_FAULT_KEY'];
  });

  it('stores one ok reply per item, records every failure with its class, and counts cost once', async () => {
    // Prepare
    server = await startFaultServer();
    process.env['SONDAGE_FAULT_KEY'] = KEY;
    const tmp = await tempDir('fault');
    cleanup = tmp.cleanup;
    const file = await writeCampaign(tmp.dir, 'small.yaml', (doc) => {
      doc.design['languages'] = ['en', 'de'];
      doc.design['forms'] = ['plain', 'negint'];
      doc.design['constraints'] = ['yesno', 'label'];
      doc.models = [
        {
          id: 'flaky',
          provider: 'openai-compatible',
          model: 'qwen3-8b',
          base_url: `${server!.url}/v1`,
          api_key_env: 'SONDAGE_FAULT_KEY',
          rpm: 1_000_000,
          price: { input_per_mtok: 1, output_per_mtok: 2 },
        },
      ];
    });
    const ctx = await loadContext(file);

    // Act: short backoff, and a timeout short enough that a hung call costs a fraction of a second.
    const summary = await runCampaign(ctx, { retry: { maxAttempts: 10, baseDelayMs: 1, maxDelayMs: 10, timeoutMs: 400 }, skipAnalysis: true });

    // Assess: every item done exactly once.
    const generate = summary.phases.find((p) => p.phase === 'generate')!;
    expect(generate.items).toBeGreaterThan(20);
    expect(generate.done).toBe(generate.items);
    expect(generate.failed).toBe(0);
    const rows = await storedReplies(ctx.dataDir, ctx.campaign.name, 'generate');
    const ok = okCounts(rows);
    expect(ok.size).toBe(generate.items);
    expect([...ok.values()].every((c) => c === 1)).toBe(true);
    // Every request the server saw is stored once: as the ok reply, or as an error row of the
    // fault's class. Under load a slow answer may pass the timeout first and be stored as a
    // timeout instead, so the classes other than timeout are bounds and the totals are exact.
    const served = (kinds: readonly (Fault | 'ok')[]) => kinds.reduce((s, k) => s + (server!.served.get(k) ?? 0), 0);
    const stored = new Map<string, number>();
    for (const r of rows) if (r.status === 'error') stored.set(r.error_class ?? 'null', (stored.get(r.error_class ?? 'null') ?? 0) + 1);
    expect(rows.length).toBe(served(['ok', ...FAULTS.map((f) => f.kind)]));
    expect([...stored.keys()].sort()).toEqual([...new Set(FAULTS.map((f) => f.errorClass))].sort());
    expect(ok.size).toBeLessThanOrEqual(served(['ok']));
    for (const cls of new Set(FAULTS.map((f) => f.errorClass))) {
      const kinds = FAULTS.filter((f) => f.errorClass === cls).map((f) => f.kind);
      if (cls === 'timeout') expect(stored.get(cls)).toBeGreaterThanOrEqual(served(kinds));
      else expect(stored.get(cls), cls).toBeLessThanOrEqual(served(kinds));
    }
    for (const f of FAULTS) expect(server.served.get(f.kind), f.kind).toBeGreaterThan(0);
    // Errors cost nothing; ok replies 100 prompt + 10 completion tokens at $1/$2 per million.
    expect(rows.filter((r) => r.status === 'error').every((r) => r.cost_usd === 0)).toBe(true);
    const okCost = rows.filter((r) => r.status === 'ok').reduce((s, r) => s + r.cost_usd, 0);
    expect(okCost).toBeCloseTo((ok.size * (100 * 1 + 10 * 2)) / 1e6, 12);
    // The generate phase is all the spending on the real endpoint; the simulated judge adds its own.
    const ledger = await ledgerSnapshot(ctx.dataDir, ctx.campaign.name);
    const judgeRows = await storedReplies(ctx.dataDir, ctx.campaign.name, 'judge');
    const judgeCost = judgeRows.filter((r) => r.status === 'ok').reduce((s, r) => s + r.cost_usd, 0);
    expect(ledger.budget.spent_usd).toBeCloseTo(okCost + judgeCost, 12);
    expect(ledger.budget.reserved_usd).toBe(0);
    expect(ledger.generate).toEqual({ pending: 0, done: generate.items, failed: 0 });
  });
});
