import { describe, expect, it } from 'vitest';
import { OpenAIBatchClient, completeResults, parseBatchOutput, toBatchLine } from '../../lib/providers/openai/OpenAIBatchClient.js';
import { splitBatch } from '../../lib/providers/splitBatch.js';
import type { BatchHandle, BatchRequest } from '../../lib/providers/batchTypes.js';
import chatCompletion from '../fixtures/providers/openai-chat-completion.json' with { type: 'json' };
import { outcome, outcomes } from './helpers/batchOutcome.js';
import { useWireServer } from './helpers/wireServer.js';
import type { RecordedRequest } from './helpers/wireServer.js';

const KEY = 'sk-test-batch-0123456789abcdef';
const req = (customId: string, content: string): BatchRequest => ({
  customId,
  request: { messages: [{ role: 'user', content }], settings: { max_tokens: 32, temperature: 0 } },
});
const REQS = [req('item-a', 'Was it wrong?'), req('item-b', 'Was it right?'), req('item-c', 'Was it fair?')];

const batchObject = (status: string, extra: Record<string, unknown> = {}) => ({
  id: 'batch_abc123',
  object: 'batch',
  endpoint: '/v1/chat/completions',
  errors: null,
  input_file_id: 'file-in-1',
  completion_window: '24h',
  status,
  output_file_id: null,
  error_file_id: null,
  created_at: 1751328000,
  request_counts: { total: 3, completed: 0, failed: 0 },
  metadata: null,
  ...extra,
});

const outLine = (customId: string, status: number, body: unknown) =>
  JSON.stringify({ id: `batch_req_${customId}`, custom_id: customId, response: { status_code: status, request_id: `req_${customId}`, body }, error: null });

/** A stateful OpenAI Files + Batches server: each GET of the batch advances it through `statuses`. */
function openaiBatchRoutes(statuses: readonly Record<string, unknown>[], files: Readonly<Record<string, string>>) {
  let polls = 0;
  return {
    from: (r: RecordedRequest) => {
      if (r.method === 'POST' && r.url === '/v1/files') return { json: { id: 'file-in-1', object: 'file', bytes: 100, created_at: 0, filename: 'sondage-batch.jsonl', purpose: 'batch', status: 'processed' } };
      if (r.method === 'POST' && r.url === '/v1/batches') return { json: batchObject('validating') };
      if (r.method === 'GET' && r.url === '/v1/batches/batch_abc123') return { json: statuses[Math.min(polls++, statuses.length - 1)] };
      if (r.method === 'POST' && r.url === '/v1/batches/batch_abc123/cancel') return { json: batchObject('cancelling') };
      const file = /^\/v1\/files\/([^/]+)\/content$/.exec(r.url)?.[1];
      if (r.method === 'GET' && file !== undefined && files[file] !== undefined) return { raw: files[file], headers: { 'content-type': 'application/jsonl' } };
      return { status: 404, json: { error: { message: `no route ${r.method} ${r.url}` } } };
    },
  };
}

const wire = useWireServer();

async function client(statuses: readonly Record<string, unknown>[], files: Readonly<Record<string, string>> = {}): Promise<OpenAIBatchClient> {
  const server = await wire.start([openaiBatchRoutes(statuses, files)]);
  return new OpenAIBatchClient({ model: 'gpt-4.1-mini', apiKey: KEY, baseURL: `${server.url}/v1`, metadata: { campaign: 'far6-demo' } });
}

describe('OpenAI batch: pure parts', () => {
  it('writes one JSONL line per request with the same body as the synchronous call', () => {
    expect(JSON.parse(toBatchLine(REQS[0]!, 'gpt-4.1-mini'))).toEqual({
      custom_id: 'item-a',
      method: 'POST',
      url: '/v1/chat/completions',
      body: { model: 'gpt-4.1-mini', messages: [{ role: 'user', content: 'Was it wrong?' }], max_completion_tokens: 32, temperature: 0 },
    });
  });

  it('splits by requests and by bytes, keeping order, and refuses an item larger than a batch', () => {
    const items = ['a', 'bb', 'ccc', 'dddd', 'e'];
    expect(splitBatch(items, (s) => s.length, { maxRequests: 2, maxBytes: 100 })).toEqual([['a', 'bb'], ['ccc', 'dddd'], ['e']]);
    expect(splitBatch(items, (s) => s.length, { maxRequests: 100, maxBytes: 5 })).toEqual([['a', 'bb'], ['ccc'], ['dddd', 'e']]);
    expect(() => splitBatch(['toolong'], (s) => s.length, { maxRequests: 10, maxBytes: 3 })).toThrow(/7 bytes exceeds the provider's batch size limit of 3 bytes/);
  });

  it('maps output and error lines; a line that does not parse is skipped', () => {
    const text = [
      outLine('item-a', 200, chatCompletion),
      outLine('item-b', 400, { error: { message: 'Invalid max_tokens', code: 'invalid_value' } }),
      JSON.stringify({ id: 'batch_req_c', custom_id: 'item-c', response: null, error: { code: 'batch_expired', message: 'This request could not be executed before the completion window expired.' } }),
      '{"custom_id": "item-d", "respo',
      outLine('item-e', 429, { error: { message: 'Rate limit', code: 'rate_limit_exceeded' } }),
    ].join('\n');
    const results = parseBatchOutput(text, 'openai/gpt-4.1-mini');
    expect(outcomes(results)).toEqual([
      ['item-a', 'ok'],
      ['item-b', 'bad_request/false'],
      ['item-c', 'batch_expired/true'],
      ['item-e', 'rate_limit/true'],
    ]);
    const a = results[0]!;
    expect(a.ok && a.result.usage).toEqual({ input_tokens: 57, output_tokens: 14, cached_input_tokens: 0 });
  });

  it('gives every submitted id exactly one result, missing ones re-queued', () => {
    const handle: BatchHandle = { provider: 'openai/m', batchId: 'b1', customIds: ['x', 'y', 'z'] };
    const ok = { customId: 'x', ok: true as const, result: { text: 'Yes.', finish_reason: 'stop', usage: { input_tokens: 1, output_tokens: 1 } } };
    const found = [ok, { ...ok, result: { ...ok.result, text: 'duplicate' } }, { ...ok, customId: 'not-submitted' }];
    const all = completeResults(handle, found, 'expired');
    expect(all.map((r) => r.customId)).toEqual(['x', 'y', 'z']);
    expect(all[0]).toEqual(ok);
    expect(all[1]).toMatchObject({ ok: false, errorClass: 'batch_missing', retryable: true });
    expect(completeResults(handle, [], 'failed', { message: 'invalid file', retryable: false })[2]).toMatchObject({ errorClass: 'batch_failed', retryable: false, message: expect.stringMatching(/invalid file/) });
  });
});

describe('OpenAIBatchClient against a local Files + Batches server', () => {
  it('uploads the JSONL, creates the batch, follows its lifecycle and matches results by custom_id', async () => {
    const ended = batchObject('completed', { output_file_id: 'file-out', error_file_id: 'file-err', request_counts: { total: 3, completed: 1, failed: 1 } });
    const c = await client(
      [
        batchObject('validating'),
        batchObject('in_progress', { request_counts: { total: 3, completed: 1, failed: 0 } }),
        batchObject('finalizing', { request_counts: { total: 3, completed: 1, failed: 1 } }),
        ended,
      ],
      {
        'file-out': outLine('item-a', 200, chatCompletion) + '\n',
        'file-err': outLine('item-b', 500, { error: { message: 'The server had an error', type: 'server_error' } }) + '\n',
      },
    );
    const handle = await c.submit(REQS);
    expect(handle).toEqual({ provider: 'openai/gpt-4.1-mini', batchId: 'batch_abc123', inputFileId: 'file-in-1', customIds: ['item-a', 'item-b', 'item-c'] });
    // a handle is plain JSON: the ledger stores it and a restarted run re-attaches with it
    expect(JSON.parse(JSON.stringify(handle))).toEqual(handle);

    const [upload, create] = wire.current.requests;
    expect(upload?.url).toBe('/v1/files');
    expect(String(upload?.headers['content-type'])).toMatch(/^multipart\/form-data/);
    const multipart = String(upload?.body);
    expect(multipart).toContain('name="purpose"');
    expect(multipart).toContain('batch');
    for (const r of REQS) expect(multipart).toContain(toBatchLine(r, 'gpt-4.1-mini'));
    expect(create?.body).toEqual({ input_file_id: 'file-in-1', endpoint: '/v1/chat/completions', completion_window: '24h', metadata: { campaign: 'far6-demo' } });
    expect(upload?.headers.authorization).toBe(`Bearer ${KEY}`);

    const phases = [];
    for (let i = 0; i < 4; i++) phases.push(await c.poll(handle));
    expect(phases.map((p) => [p.phase, p.status, p.done])).toEqual([
      ['pending', 'validating', false],
      ['running', 'in_progress', false],
      ['finalizing', 'finalizing', false],
      ['ended', 'completed', true],
    ]);
    expect(phases[3]?.counts).toEqual({ total: 3, succeeded: 1, failed: 1 });

    const results = await c.results(handle);
    expect(outcomes(results)).toEqual([
      ['item-a', 'ok'],
      ['item-b', 'server_error/true'],
      ['item-c', 'batch_missing/true'],
    ]);
    expect(c.settingsSent(REQS[0]!.request)).toEqual({ model: 'gpt-4.1-mini', max_completion_tokens: 32, temperature: 0 });
  });

  it('an expired batch returns its partial output and re-queues the rest', async () => {
    const c = await client(
      [batchObject('expired', { output_file_id: 'file-out', error_file_id: 'file-err' })],
      {
        'file-out': outLine('item-a', 200, chatCompletion),
        'file-err': ['item-b', 'item-c']
          .map((id) => JSON.stringify({ custom_id: id, response: null, error: { code: 'batch_expired', message: 'This request could not be executed before the completion window expired.' } }))
          .join('\n'),
      },
    );
    const handle: BatchHandle = { provider: 'openai/gpt-4.1-mini', batchId: 'batch_abc123', inputFileId: 'file-in-1', customIds: ['item-a', 'item-b', 'item-c'] };
    expect((await c.poll(handle)).done).toBe(true);
    const results = await c.results(handle);
    expect(results.map(outcome)).toEqual(['ok', 'batch_expired/true', 'batch_expired/true']);
  });

  it('a failed batch reports its reason on every request; results before the end are refused', async () => {
    const failed = batchObject('failed', { errors: { object: 'list', data: [{ code: 'token_limit_exceeded', message: 'Enqueued token limit reached', param: null, line: null }] } });
    const c = await client([batchObject('in_progress'), failed]);
    const handle: BatchHandle = { provider: 'openai/gpt-4.1-mini', batchId: 'batch_abc123', customIds: ['item-a'] };
    await expect(c.results(handle)).rejects.toThrow(/batch batch_abc123 is in_progress; poll until it has ended/);
    const state = await c.poll(handle);
    expect(state).toMatchObject({ phase: 'ended', status: 'failed', done: true, error: 'token_limit_exceeded: Enqueued token limit reached' });
    expect((await c.results(handle))[0]).toMatchObject({ errorClass: 'batch_failed', retryable: true });
  });

  it('refuses a batch with repeated custom ids, and cancels', async () => {
    const c = await client([batchObject('cancelling')]);
    await expect(c.submit([REQS[0]!, REQS[0]!])).rejects.toThrow(/repeats a custom id/);
    expect(wire.current.requests).toHaveLength(0);
    await c.cancel({ provider: 'openai/gpt-4.1-mini', batchId: 'batch_abc123', customIds: [] });
    expect(wire.current.requests.map((r) => `${r.method} ${r.url}`)).toEqual(['POST /v1/batches/batch_abc123/cancel']);
    expect(c.split(REQS)).toEqual([REQS]);
  });
});
