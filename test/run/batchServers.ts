import { startWireServer, type RecordedRequest, type WireServer } from '../providers/helpers/wireServer.js';

/**
 * Local servers speaking the OpenAI Files + Batches and the Anthropic Message Batches wire formats
 * (the same routes and objects as test/providers/openaiBatch.test.ts and anthropicBatch.test.ts),
 * but stateful: they hold every batch created, walk it through its lifecycle one poll at a time,
 * and answer each submitted request. `expire(batchIndex, position)` says which requests of the
 * n-th batch (0-based) expire instead of answering; an expiring batch ends as `expired`.
 */
export interface BatchServer extends WireServer {
  /** Custom ids of every batch created, in creation order. */
  readonly created: string[][];
  /** Ids of the batches a cancel was asked for, in order. */
  readonly cancelled: string[];
  /** Cancels a batch as if someone else had asked the provider to (another process's `sondage stop`). */
  cancelNow(batchId: string): void;
  /** Batch creation requests received, failed ones included. */
  readonly createRequests: () => number;
  /** Deletes every batch it holds: later polls of them get a 404. */
  forget(): void;
}

/**
 * How the server answers the n-th batch creation request (0-based): `fail` a 503 without creating
 * the batch; `drop` creates the batch, then closes the connection without an answer (the client
 * cannot know it exists).
 */
export type CreateFault = 'fail' | 'drop' | undefined;

export interface BatchServerOptions {
  /** Polls a batch answers "still running" before it has ended. */
  readonly runningPolls?: number;
  readonly expire?: (batchIndex: number, position: number) => boolean;
  readonly createFault?: (createIndex: number) => CreateFault;
  /** Requests the provider answers with a permanent invalid-request error (by their position in the batch). */
  readonly reject?: (batchIndex: number, position: number) => boolean;
}

/** The answer the reading rules expect: a letter for label items, yes-first otherwise. */
function answer(prompt: string): string {
  return /A:|B:/.test(prompt) ? 'A' : 'Yes. I think so, because it hurt someone.';
}

/** Token counts every answer reports, `cached` of the input from the prompt cache: the tests price them. */
export const USAGE = { input: 100, cached: 40, output: 10 } as const;

interface Stored {
  readonly id: string;
  readonly requests: { customId: string; prompt: string; model: string }[];
  polls: number;
  /** ms since the epoch. */
  readonly createdAt: number;
  readonly metadata?: Record<string, string> | null;
  /** Cancelled: it ends at once, its odd-position requests never having run. */
  cancelled?: boolean;
}

/** Why request `i` of a batch did not run, if it did not. */
function notRun(b: Stored, i: number, expired: (b: Stored, i: number) => boolean): 'cancelled' | 'expired' | undefined {
  if (b.cancelled && i % 2 === 1) return 'cancelled';
  return expired(b, i) ? 'expired' : undefined;
}

export async function startOpenAIBatchServer(options: BatchServerOptions = {}): Promise<BatchServer> {
  const files = new Map<string, string>();
  const batches = new Map<string, Stored & { inputFile: string }>();
  const created: string[][] = [];
  const running = options.runningPolls ?? 2;
  const statuses = ['validating', 'in_progress', 'finalizing'];
  const expired = (b: Stored, i: number) => options.expire?.(Number(b.id.slice('batch_'.length)), i) ?? false;
  const object = (b: Stored & { inputFile: string }) => {
    const ended = b.polls > running || b.cancelled === true;
    const anyExpired = b.requests.some((_, i) => expired(b, i));
    const anyNotRun = b.requests.some((_, i) => notRun(b, i, expired) !== undefined);
    return {
      id: b.id,
      object: 'batch',
      endpoint: '/v1/chat/completions',
      errors: null,
      input_file_id: b.inputFile,
      completion_window: '24h',
      status: ended ? (b.cancelled ? 'cancelled' : anyExpired ? 'expired' : 'completed') : statuses[Math.min(b.polls, statuses.length - 1)],
      output_file_id: ended ? `${b.id}-out` : null,
      error_file_id: ended && anyNotRun ? `${b.id}-err` : null,
      created_at: Math.floor(b.createdAt / 1000),
      request_counts: { total: b.requests.length, completed: 0, failed: 0 },
      metadata: b.metadata ?? null,
    };
  };
  let creates = 0;
  const cancelled: string[] = [];
  const server = await startWireServer([
    {
      from: (r: RecordedRequest) => {
        if (r.method === 'POST' && r.url === '/v1/files') {
          const id = `file-in-${files.size}`;
          // The multipart body holds the JSONL file: one request per line.
          files.set(id, String(r.body));
          return { json: { id, object: 'file', bytes: 1, created_at: 0, filename: 'sondage-batch.jsonl', purpose: 'batch', status: 'processed' } };
        }
        if (r.method === 'POST' && r.url === '/v1/batches') {
          const fault = options.createFault?.(creates++);
          if (fault === 'fail') return { status: 503, json: { error: { message: 'The server is overloaded', type: 'server_error' } } };
          const { input_file_id: inputFile, metadata } = r.body as { input_file_id: string; metadata?: Record<string, string> };
          const lines = (files.get(inputFile) ?? '').split(/\r?\n/).filter((l) => l.startsWith('{"custom_id"'));
          const requests = lines.map((l) => {
            const line = JSON.parse(l) as { custom_id: string; body: { model: string; messages: { content: string }[] } };
            return { customId: line.custom_id, prompt: line.body.messages.at(-1)?.content ?? '', model: line.body.model };
          });
          const b = { id: `batch_${created.length}`, requests, polls: 0, inputFile, createdAt: Date.now(), metadata: metadata ?? null };
          created.push(requests.map((q) => q.customId));
          batches.set(b.id, b);
          if (fault === 'drop') return { drop: true };
          return { json: { ...object(b), status: 'validating' } };
        }
        if (r.method === 'GET' && r.url.startsWith('/v1/batches?')) {
          // Newest first, one page: listing does not move a batch along (only a retrieve does).
          const data = [...batches.values()].reverse().map(object);
          return { json: { object: 'list', data, first_id: data[0]?.id ?? null, last_id: data.at(-1)?.id ?? null, has_more: false } };
        }
        const cancel = /^\/v1\/batches\/([^/]+)\/cancel$/.exec(r.url)?.[1];
        if (r.method === 'POST' && cancel !== undefined && batches.has(cancel)) {
          const b = batches.get(cancel)!;
          cancelled.push(b.id);
          const before = object(b);
          if (before.status === 'completed' || before.status === 'expired') return { status: 409, json: { error: { message: `Cannot cancel a batch with status '${before.status}'.` } } };
          b.cancelled = true;
          return { json: { ...object(b), status: 'cancelling' } };
        }
        const get = /^\/v1\/batches\/([^/]+)$/.exec(r.url)?.[1];
        if (r.method === 'GET' && get !== undefined && batches.has(get)) {
          const b = batches.get(get)!;
          b.polls++;
          return { json: object(b) };
        }
        const file = /^\/v1\/files\/(batch_\d+)-(out|err)\/content$/.exec(r.url);
        if (r.method === 'GET' && file && batches.has(file[1]!)) {
          const b = batches.get(file[1]!)!;
          const lines = b.requests.flatMap((q, i) => {
            const why = notRun(b, i, expired);
            if ((file[2] === 'err') !== (why !== undefined)) return [];
            if (why !== undefined) {
              const message = why === 'expired' ? 'This request could not be executed before the completion window expired.' : 'This request was cancelled before it ran.';
              return [JSON.stringify({ id: `batch_req_${i}`, custom_id: q.customId, response: null, error: { code: `batch_${why}`, message } })];
            }
            if (options.reject?.(Number(b.id.slice('batch_'.length)), i)) {
              const error = { error: { message: 'Invalid prompt: it violates the usage policy.', type: 'invalid_request_error', code: 'invalid_prompt' } };
              return [JSON.stringify({ id: `batch_req_${i}`, custom_id: q.customId, response: { status_code: 400, request_id: `req_${i}`, body: error }, error: null })];
            }
            const body = {
              id: `chatcmpl-${b.id}-${i}`,
              object: 'chat.completion',
              created: 1_751_328_000,
              model: q.model,
              choices: [{ index: 0, message: { role: 'assistant', content: answer(q.prompt), refusal: null }, finish_reason: 'stop', logprobs: null }],
              usage: {
                prompt_tokens: USAGE.input,
                completion_tokens: USAGE.output,
                total_tokens: USAGE.input + USAGE.output,
                prompt_tokens_details: { cached_tokens: USAGE.cached, audio_tokens: 0 },
              },
            };
            return [JSON.stringify({ id: `batch_req_${i}`, custom_id: q.customId, response: { status_code: 200, request_id: `req_${i}`, body }, error: null })];
          });
          return { raw: lines.join('\n') + '\n', headers: { 'content-type': 'application/jsonl' } };
        }
        return { status: 404, json: { error: { message: `no route ${r.method} ${r.url}` } } };
      },
    },
  ]);
  const cancelNow = (id: string) => {
    const b = batches.get(id);
    if (b) b.cancelled = true;
  };
  return Object.assign(server, { created, cancelled, cancelNow, createRequests: () => creates, forget: () => batches.clear() });
}

export async function startAnthropicBatchServer(options: BatchServerOptions = {}): Promise<BatchServer> {
  const batches = new Map<string, Stored>();
  const created: string[][] = [];
  const running = options.runningPolls ?? 2;
  let creates = 0;
  const cancelled: string[] = [];
  let base = '';
  const index = (b: Stored) => Number(b.id.slice('msgbatch_'.length));
  const expired = (b: Stored, i: number) => options.expire?.(index(b), i) ?? false;
  const object = (b: Stored) => {
    const ended = b.polls > running || b.cancelled === true;
    const nExpired = b.requests.filter((_, i) => notRun(b, i, expired) === 'expired').length;
    const nCanceled = b.requests.filter((_, i) => notRun(b, i, expired) === 'cancelled').length;
    return {
      id: b.id,
      type: 'message_batch',
      processing_status: ended ? 'ended' : 'in_progress',
      request_counts: ended
        ? { processing: 0, succeeded: b.requests.length - nExpired - nCanceled, errored: 0, canceled: nCanceled, expired: nExpired }
        : { processing: b.requests.length, succeeded: 0, errored: 0, canceled: 0, expired: 0 },
      ended_at: ended ? new Date(b.createdAt + 1000).toISOString() : null,
      created_at: new Date(b.createdAt).toISOString(),
      expires_at: '2026-01-02T00:00:00Z',
      archived_at: null,
      cancel_initiated_at: b.cancelled ? new Date(b.createdAt + 500).toISOString() : null,
      results_url: ended ? `${base}/v1/messages/batches/${b.id}/results` : null,
    };
  };
  const server = await startWireServer([
    {
      from: (r: RecordedRequest) => {
        if (r.method === 'POST' && r.url === '/v1/messages/batches') {
          const fault = options.createFault?.(creates++);
          if (fault === 'fail') return { status: 529, json: { type: 'error', error: { type: 'overloaded_error', message: 'Overloaded' } } };
          const body = r.body as { requests: { custom_id: string; params: { model: string; messages: { content: string }[] } }[] };
          const requests = body.requests.map((q) => ({ customId: q.custom_id, prompt: q.params.messages.at(-1)?.content ?? '', model: q.params.model }));
          const b: Stored = { id: `msgbatch_${created.length}`, requests, polls: 0, createdAt: Date.now() };
          created.push(requests.map((q) => q.customId));
          batches.set(b.id, b);
          if (fault === 'drop') return { drop: true };
          return { json: object(b) };
        }
        if (r.method === 'GET' && r.url.startsWith('/v1/messages/batches?')) {
          // Newest first, one page. Listing stands for time passing: each listed batch moves one poll on.
          const data = [...batches.values()].reverse().map((b) => {
            b.polls++;
            return object(b);
          });
          return { json: { data, has_more: false, first_id: data[0]?.id ?? null, last_id: data.at(-1)?.id ?? null } };
        }
        const cancel = /^\/v1\/messages\/batches\/(msgbatch_\d+)\/cancel$/.exec(r.url)?.[1];
        if (r.method === 'POST' && cancel !== undefined && batches.has(cancel)) {
          const b = batches.get(cancel)!;
          cancelled.push(b.id);
          if (object(b).processing_status === 'ended') return { json: object(b) };
          b.cancelled = true;
          return { json: { ...object(b), processing_status: 'canceling' } };
        }
        const m = /^\/v1\/messages\/batches\/(msgbatch_\d+)(\/results)?$/.exec(r.url);
        if (r.method === 'GET' && m && batches.has(m[1]!)) {
          const b = batches.get(m[1]!)!;
          if (!m[2]) {
            b.polls++;
            return { json: object(b) };
          }
          const lines = b.requests.map((q, i) =>
            JSON.stringify({
              custom_id: q.customId,
              result: notRun(b, i, expired)
                ? { type: notRun(b, i, expired) === 'cancelled' ? 'canceled' : 'expired' }
                : options.reject?.(index(b), i)
                  ? { type: 'errored', error: { type: 'error', error: { type: 'invalid_request_error', message: 'Invalid prompt.' } } }
                  : {
                    type: 'succeeded',
                    message: {
                      id: `msg_${b.id}_${i}`,
                      type: 'message',
                      role: 'assistant',
                      model: q.model,
                      content: [{ type: 'text', text: answer(q.prompt) }],
                      stop_reason: 'end_turn',
                      stop_sequence: null,
                      usage: { input_tokens: USAGE.input - USAGE.cached, output_tokens: USAGE.output, cache_creation_input_tokens: 0, cache_read_input_tokens: USAGE.cached },
                    },
                  },
            }),
          );
          return { raw: lines.join('\n') + '\n', headers: { 'content-type': 'application/binary' } };
        }
        return { status: 404, json: { type: 'error', error: { type: 'not_found_error', message: `no route ${r.method} ${r.url}` } } };
      },
    },
  ]);
  base = server.url;
  const cancelNow = (id: string) => {
    const b = batches.get(id);
    if (b) b.cancelled = true;
  };
  return Object.assign(server, { created, cancelled, cancelNow, createRequests: () => creates, forget: () => batches.clear() });
}
