import { afterEach, describe, expect, it } from 'vitest';
import { AnthropicBatchClient } from '../../lib/providers/anthropic/AnthropicBatchClient.js';
import type { BatchRequest } from '../../lib/providers/batchTypes.js';
import { OpenAIBatchClient, SUBMISSION_METADATA_KEY } from '../../lib/providers/openai/OpenAIBatchClient.js';
import { startAnthropicBatchServer, startOpenAIBatchServer, type BatchServer } from './batchServers.js';

const KEY = 'sk-test-batch-lookup-000000000000';
const req = (id: string): BatchRequest => ({ customId: id, request: { messages: [{ role: 'user', content: `Was ${id} wrong?` }], settings: { max_tokens: 16 } } });

let server: BatchServer | undefined;
afterEach(async () => {
  await server?.close();
  server = undefined;
});

// How a run that died before recording a batch finds it again.
describe('BatchClient.find', () => {
  it('OpenAI: finds the batch by the submission key in its metadata, and no other', async () => {
    server = await startOpenAIBatchServer();
    const client = new OpenAIBatchClient({ model: 'gpt-4.1-mini', apiKey: KEY, baseURL: `${server.url}/v1`, metadata: { campaign: 'c' } });
    const since = Date.now() - 1000;
    const mine = await client.submit([req('a'), req('b')], undefined, 'sondage-key-1');
    await client.submit([req('c'), req('d')], undefined, 'sondage-key-2');

    const created = server.requests.filter((r) => r.method === 'POST' && r.url === '/v1/batches');
    expect((created[0]!.body as { metadata: Record<string, string> }).metadata).toEqual({ campaign: 'c', [SUBMISSION_METADATA_KEY]: 'sondage-key-1' });
    const found = await client.find({ submissionKey: 'sondage-key-1', customIds: ['a', 'b'], createdAt: since });
    expect(found).toEqual({ status: 'found', handle: { provider: 'openai/gpt-4.1-mini', batchId: mine.batchId, inputFileId: mine.inputFileId, customIds: ['a', 'b'] } });
    expect(await client.find({ submissionKey: 'sondage-key-3', customIds: ['a', 'b'], createdAt: since })).toEqual({ status: 'absent' });
    expect(await client.find({ submissionKey: 'sondage-key-1', customIds: ['a', 'b'], createdAt: since, exclude: new Set([mine.batchId]) })).toEqual({ status: 'absent' });
    // Batches created well before the intent are not listed further.
    expect(await client.find({ submissionKey: 'sondage-key-1', customIds: ['a', 'b'], createdAt: Date.now() + 3_600_000 })).toEqual({ status: 'absent' });
  });

  it('Anthropic: undetermined while a same-sized batch runs; then found by its custom ids, or absent when they differ', async () => {
    server = await startAnthropicBatchServer({ runningPolls: 1 });
    const client = new AnthropicBatchClient({ model: 'claude-haiku-4-5', apiKey: KEY, baseURL: server.url });
    const since = Date.now() - 1000;
    const other = await client.submit([req('x'), req('y')]);
    const mine = await client.submit([req('a'), req('b')]);
    await client.submit([req('p'), req('q'), req('r')]);

    // Listing moves the local server's batches on by one poll: both 2-request batches are still running.
    const first = await client.find({ submissionKey: 'k', customIds: ['a', 'b'], createdAt: since });
    expect(first.status).toBe('undetermined');
    const second = await client.find({ submissionKey: 'k', customIds: ['a', 'b'], createdAt: since });
    expect(second).toEqual({ status: 'found', handle: { provider: 'anthropic/claude-haiku-4-5', batchId: mine.batchId, customIds: ['a', 'b'] } });
    expect(await client.find({ submissionKey: 'k', customIds: ['a', 'z'], createdAt: since })).toEqual({ status: 'absent' });
    expect(await client.find({ submissionKey: 'k', customIds: ['x', 'y'], createdAt: since, exclude: new Set([other.batchId]) })).toEqual({ status: 'absent' });
    // A batch created before the intent is never taken for it.
    expect(await client.find({ submissionKey: 'k', customIds: ['a', 'b'], createdAt: Date.now() + 60_000 })).toEqual({ status: 'absent' });
  });
});
