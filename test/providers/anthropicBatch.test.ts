import { describe, expect, it } from 'vitest';
import { AnthropicBatchClient, fromBatchResult, toBatchRequest } from '../../lib/providers/anthropic/AnthropicBatchClient.js';
import type { BatchHandle, BatchRequest } from '../../lib/providers/batchTypes.js';
import message from '../fixtures/providers/anthropic-message.json' with { type: 'json' };
import messageRefusal from '../fixtures/providers/anthropic-message-refusal.json' with { type: 'json' };
import { outcome, outcomes } from './helpers/batchOutcome.js';
import { useWireServer } from './helpers/wireServer.js';
import type { RecordedRequest } from './helpers/wireServer.js';

const KEY = 'test-anthropic-batch-key-0123456789abcdef';
const req = (customId: string, content: string): BatchRequest => ({
  customId,
  request: { messages: [{ role: 'user', content }], settings: { max_tokens: 32, temperature: 0, thinking: 'off' } },
});
const REQS = [req('item-a', 'Was it wrong?'), req('item-b', 'Was it right?'), req('item-c', 'Was it fair?'), req('item-d', 'Was it kind?')];
const ID = 'msgbatch_013Zva2CMHLNnXjNJJKqJ2EF';

const wire = useWireServer();

const counts = (c: Partial<Record<'processing' | 'succeeded' | 'errored' | 'canceled' | 'expired', number>>) => ({
  processing: 0,
  succeeded: 0,
  errored: 0,
  canceled: 0,
  expired: 0,
  ...c,
});

function batchObject(status: 'in_progress' | 'canceling' | 'ended', requestCounts: ReturnType<typeof counts>, resultsUrl: string | null = null) {
  return {
    id: ID,
    type: 'message_batch',
    processing_status: status,
    request_counts: requestCounts,
    ended_at: status === 'ended' ? '2026-01-02T00:00:00Z' : null,
    created_at: '2026-01-01T00:00:00Z',
    expires_at: '2026-01-02T00:00:00Z',
    archived_at: null,
    cancel_initiated_at: null,
    results_url: resultsUrl,
  };
}

/** A stateful Message Batches server: each GET of the batch advances it through `states`. */
async function client(states: readonly ((base: string) => unknown)[], resultsBody = ''): Promise<AnthropicBatchClient> {
  let polls = 0;
  let base = '';
  const server = await wire.start([
    {
      from: (r: RecordedRequest) => {
        if (r.method === 'POST' && r.url === '/v1/messages/batches') return { json: batchObject('in_progress', counts({ processing: 4 })) };
        if (r.method === 'GET' && r.url === `/v1/messages/batches/${ID}`) return { json: states[Math.min(polls++, states.length - 1)]!(base) };
        if (r.method === 'GET' && r.url === `/v1/messages/batches/${ID}/results`) return { raw: resultsBody, headers: { 'content-type': 'application/binary' } };
        if (r.method === 'POST' && r.url === `/v1/messages/batches/${ID}/cancel`) return { json: batchObject('canceling', counts({ processing: 4 })) };
        return { status: 404, json: { type: 'error', error: { type: 'not_found_error', message: `no route ${r.method} ${r.url}` } } };
      },
    },
  ]);
  base = server.url;
  return new AnthropicBatchClient({ model: 'claude-haiku-4-5', apiKey: KEY, baseURL: server.url });
}

const line = (customId: string, result: unknown) => JSON.stringify({ custom_id: customId, result });
const handle: BatchHandle = { provider: 'anthropic/claude-haiku-4-5', batchId: ID, customIds: REQS.map((r) => r.customId) };

describe('Anthropic batch: pure parts', () => {
  it('sends each request with the same params as the synchronous call', () => {
    expect(toBatchRequest(REQS[0]!, 'claude-haiku-4-5')).toEqual({
      custom_id: 'item-a',
      params: { model: 'claude-haiku-4-5', max_tokens: 32, messages: [{ role: 'user', content: 'Was it wrong?' }], temperature: 0, thinking: { type: 'disabled' } },
    });
  });

  it('maps succeeded, refused, errored, cancelled and expired results', () => {
    const p = 'anthropic/claude-haiku-4-5';
    const cls = (l: unknown) => {
      const r = fromBatchResult(JSON.parse(JSON.stringify(l)), p);
      return r === undefined ? undefined : outcome(r);
    };
    expect(cls({ custom_id: 'a', result: { type: 'succeeded', message } })).toBe('ok');
    expect(cls({ custom_id: 'a', result: { type: 'succeeded', message: messageRefusal } })).toBe('refusal/false');
    expect(cls({ custom_id: 'a', result: { type: 'errored', error: { type: 'error', error: { type: 'invalid_request_error', message: 'max_tokens: Field required' } } } })).toBe('bad_request/false');
    expect(cls({ custom_id: 'a', result: { type: 'errored', error: { type: 'error', error: { type: 'overloaded_error', message: 'Overloaded' } } } })).toBe('server_error/true');
    expect(cls({ custom_id: 'a', result: { type: 'canceled' } })).toBe('batch_cancelled/true');
    expect(cls({ custom_id: 'a', result: { type: 'expired' } })).toBe('batch_expired/true');
    expect(cls({ result: { type: 'expired' } })).toBeUndefined();
  });
});

describe('AnthropicBatchClient against a local Message Batches server', () => {
  it('creates the batch, follows its lifecycle and matches streamed results by custom_id', async () => {
    const results = [
      line('item-a', { type: 'succeeded', message }),
      line('item-b', { type: 'errored', error: { type: 'error', error: { type: 'api_error', message: 'Internal server error' } } }),
      line('item-c', { type: 'expired' }),
    ].join('\n');
    const c = await client(
      [
        () => batchObject('in_progress', counts({ processing: 4 })),
        () => batchObject('in_progress', counts({ processing: 2, succeeded: 1, errored: 1 })),
        (base) => batchObject('ended', counts({ succeeded: 1, errored: 1, expired: 1 }), `${base}/v1/messages/batches/${ID}/results`),
      ],
      results,
    );
    const h = await c.submit(REQS);
    expect(h).toEqual(handle);
    const [create] = wire.current.requests;
    expect(create?.url).toBe('/v1/messages/batches');
    expect(create?.body).toEqual({ requests: REQS.map((r) => toBatchRequest(r, 'claude-haiku-4-5')) });
    expect(JSON.stringify(create?.headers)).toContain(KEY);

    const states = [];
    for (let i = 0; i < 3; i++) states.push(await c.poll(h));
    expect(states.map((s) => [s.phase, s.done, s.counts.succeeded, s.counts.failed])).toEqual([
      ['running', false, 0, 0],
      ['running', false, 1, 1],
      ['ended', true, 1, 2],
    ]);
    const out = await c.results(h);
    expect(outcomes(out)).toEqual([
      ['item-a', 'ok'],
      ['item-b', 'server_error/true'],
      ['item-c', 'batch_expired/true'],
      ['item-d', 'batch_missing/true'],
    ]);
    const a = out[0]!;
    expect(a.ok && a.result.usage).toEqual({ input_tokens: 73, output_tokens: 19, cached_input_tokens: 12 });
    expect(c.settingsSent(REQS[0]!.request)).toEqual({ model: 'claude-haiku-4-5', max_tokens: 32, temperature: 0, thinking: { type: 'disabled' } });
  });

  it('refuses results before the batch has ended, and reports a broken results file as retryable', async () => {
    const c = await client(
      [() => batchObject('canceling', counts({ processing: 4 })), (base) => batchObject('ended', counts({ canceled: 4 }), `${base}/v1/messages/batches/${ID}/results`)],
      `${line('item-a', { type: 'canceled' })}\n{"custom_id": "item-b", "resu`,
    );
    await expect(c.results(handle)).rejects.toThrow(/is canceling; poll until it has ended/);
    const err = await c.results(handle).catch((e: unknown) => e);
    expect(err).toMatchObject({ errorClass: 'malformed_response', retryable: true });
  });

  it('refuses custom ids the API would reject, repeated ids, and cancels', async () => {
    const c = await client([() => batchObject('canceling', counts({ processing: 4 }))]);
    await expect(c.submit([req('has space', 'x')])).rejects.toThrow(/custom id "has space" is not 1-64 letters, digits, _ or -/);
    await expect(c.submit([REQS[0]!, REQS[0]!])).rejects.toThrow(/repeats a custom id/);
    expect(wire.current.requests).toHaveLength(0);
    await c.cancel(handle);
    expect(wire.current.requests.map((r) => `${r.method} ${r.url}`)).toEqual([`POST /v1/messages/batches/${ID}/cancel`]);
  });
});
