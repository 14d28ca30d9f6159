import Anthropic from '@anthropic-ai/sdk';
import type { GenerateRequest } from '../types.js';
import type { BatchClient, BatchHandle, BatchItemResult, BatchLimits, BatchLookup, BatchLookupResult, BatchRequest, BatchState } from '../batchTypes.js';
import { ProviderCallError } from '../errors.js';
import type { ProviderErrorClass } from '../errors.js';
import { sdkErrorContext, toProviderCallError } from '../sdkErrors.js';
import type { SdkErrorContext } from '../sdkErrors.js';
import { splitBatch } from '../splitBatch.js';
import { completeResults } from '../openai/OpenAIBatchClient.js';
import { ANTHROPIC_BASE_URL, fromWireResponse, settingsSent, toWireRequest } from './AnthropicMessagesProvider.js';
import { sdkTransport } from '../transportTimeouts.js';

import { ANTHROPIC_BATCH_LIMITS } from '../batchLimits.js';

export { ANTHROPIC_BATCH_LIMITS };

/**
 * A batch created this long before an intent's time may still be its own (the provider's clock and
 * ours disagree by this much at most). Kept short: an older batch with the same ids (an expired
 * one re-queued) must not pass for the new one.
 */
const CLOCK_SLACK_MS = 2_000;

/** The API's rule for a batch request's custom_id. */
const CUSTOM_ID = /^[a-zA-Z0-9_-]{1,64}$/;

/** The `error.type` of an errored batch request → error class and whether re-queuing can help. */
const ERROR_TYPES: Readonly<Record<string, { errorClass: ProviderErrorClass; retryable: boolean }>> = {
  invalid_request_error: { errorClass: 'bad_request', retryable: false },
  authentication_error: { errorClass: 'auth', retryable: false },
  billing_error: { errorClass: 'payment_required', retryable: false },
  permission_error: { errorClass: 'permission', retryable: false },
  not_found_error: { errorClass: 'not_found', retryable: false },
  rate_limit_error: { errorClass: 'rate_limit', retryable: true },
  timeout_error: { errorClass: 'timeout', retryable: true },
  api_error: { errorClass: 'server_error', retryable: true },
  overloaded_error: { errorClass: 'server_error', retryable: true },
};

/** The `params` of one batch request: the same body as the synchronous call. Pure: exported for tests. */
export function toBatchRequest(r: BatchRequest, model: string): { custom_id: string; params: ReturnType<typeof toWireRequest> } {
  return { custom_id: r.customId, params: toWireRequest(r.request, model) };
}

/**
 * One line of a batch's results: `succeeded` through the synchronous mapping (a refusal stays a
 * permanent error), `errored` classified by its error type, `canceled` and `expired` re-queued.
 * Pure: exported for tests.
 */
export function fromBatchResult(line: unknown, provider: string): BatchItemResult | undefined {
  if (line === null || typeof line !== 'object') return undefined;
  const { custom_id: customId, result } = line as { custom_id?: unknown; result?: { type?: unknown; message?: unknown; error?: unknown } };
  if (typeof customId !== 'string' || result === undefined || result === null) return undefined;
  switch (result.type) {
    case 'succeeded':
      try {
        return { customId, ok: true, result: fromWireResponse(result.message, provider) };
      } catch (err) {
        const e = err as ProviderCallError;
        return { customId, ok: false, errorClass: e.errorClass, message: e.message, retryable: e.retryable, ...(e.usage ? { usage: e.usage } : {}) };
      }
    case 'errored': {
      const inner = (result.error as { error?: { type?: unknown; message?: unknown } } | undefined)?.error;
      const type = typeof inner?.type === 'string' ? inner.type : 'unknown_error';
      const known = ERROR_TYPES[type] ?? { errorClass: 'http_error' as const, retryable: false };
      return { customId, ok: false, ...known, message: `${provider}: batch request ${type}: ${String(inner?.message ?? '').slice(0, 300)}` };
    }
    case 'canceled':
      return { customId, ok: false, errorClass: 'batch_cancelled', retryable: true, message: `${provider}: batch request cancelled before it ran; re-queue it` };
    case 'expired':
      return { customId, ok: false, errorClass: 'batch_expired', retryable: true, message: `${provider}: batch request expired before it ran; re-queue it` };
    default:
      return undefined;
  }
}

export interface AnthropicBatchClientOptions {
  readonly model: string;
  readonly apiKey: string;
  /** Without `/v1`, as for the Messages adapter. */
  readonly baseURL?: string;
  readonly timeoutMs?: number;
  readonly fetch?: typeof fetch;
}

/**
 * Anthropic's Message Batches: create, poll, stream the results,
 * matched by `custom_id`. Every submitted id gets exactly one result: cancelled and expired
 * requests come back retryable, ids missing from the results as `batch_missing`. Persisting the
 * handle and re-attaching after a restart is the run's job (lib/run), as is reserving the budget.
 */
export class AnthropicBatchClient implements BatchClient {
  readonly id: string;
  readonly limits: BatchLimits = ANTHROPIC_BATCH_LIMITS;
  readonly #client: Anthropic;
  readonly #errors: SdkErrorContext;
  readonly #model: string;

  constructor(options: AnthropicBatchClientOptions) {
    this.#model = options.model;
    this.id = `anthropic/${options.model}`;
    this.#errors = sdkErrorContext(this.id, Anthropic, options, ANTHROPIC_BASE_URL);
    this.#client = new Anthropic({
      apiKey: options.apiKey,
      baseURL: options.baseURL ?? ANTHROPIC_BASE_URL,
      maxRetries: 0,
      ...sdkTransport(options.timeoutMs, options.fetch),
    });
  }

  settingsSent(req: GenerateRequest): Record<string, unknown> {
    return settingsSent(toWireRequest(req, this.#model));
  }

  split(requests: readonly BatchRequest[]): BatchRequest[][] {
    // +1 for the comma between array elements
    return splitBatch(requests, (r) => Buffer.byteLength(JSON.stringify(toBatchRequest(r, this.#model))) + 1, this.limits);
  }

  /**
   * Write the handle to the ledger before anything else.
   * @throws ProviderCallError `bad_request` for a custom id the API would refuse, a repeated one, or
   *   more requests than one batch may hold (use `split`).
   */
  /** Creates the batch. Message Batches carry no metadata: `submissionKey` is not sent (see `find`). */
  async submit(requests: readonly BatchRequest[], signal?: AbortSignal, _submissionKey?: string): Promise<BatchHandle> {
    const ids = requests.map((r) => r.customId);
    const bad = ids.find((id) => !CUSTOM_ID.test(id));
    const fail = (msg: string) => new ProviderCallError(`${this.id}: ${msg}`, this.id, 'bad_request', false);
    if (bad !== undefined) throw fail(`custom id ${JSON.stringify(bad)} is not 1-64 letters, digits, _ or -`);
    if (new Set(ids).size !== ids.length) throw fail('a batch repeats a custom id; results could not be matched');
    if (this.split(requests).length > 1) throw fail(`${requests.length} requests exceed one batch's limits; split them first`);
    try {
      const batch = await this.#client.messages.batches.create(
        { requests: requests.map((r) => toBatchRequest(r, this.#model)) as Parameters<Anthropic['messages']['batches']['create']>[0]['requests'] },
        signal ? { signal } : {},
      );
      return { provider: this.id, batchId: batch.id, customIds: ids };
    } catch (err) {
      throw toProviderCallError(err, this.#errors);
    }
  }

  /**
   * Message Batches have no metadata to tag, so a batch is recognised by what it holds. Candidates:
   * batches listed (newest first) created at or after the intent's time (less a 2 s clock slack),
   * not already recorded, with as many requests as the intent. An ended candidate is read: it is
   * the intent's batch exactly when its results carry the intent's custom ids. While a candidate
   * has not ended its ids cannot be read, so the answer is `undetermined` and nothing is submitted
   * again (a second batch would be paid twice); the run asks again on its next poll. Without a
   * candidate the batch was never created (`absent`).
   */
  async find(lookup: BatchLookup, signal?: AbortSignal): Promise<BatchLookupResult> {
    const opts = signal ? { signal } : {};
    const wanted = new Set(lookup.customIds);
    let running = 0;
    try {
      for await (const b of this.#client.messages.batches.list({ limit: 100 }, opts)) {
        if (Date.parse(b.created_at) < lookup.createdAt - CLOCK_SLACK_MS) break;
        const c = b.request_counts;
        if (lookup.exclude?.has(b.id) || c.processing + c.succeeded + c.errored + c.canceled + c.expired !== wanted.size) continue;
        if (b.processing_status !== 'ended') {
          running++;
          continue;
        }
        const seen = new Set<string>();
        for await (const line of await this.#client.messages.batches.results(b.id, {}, opts)) seen.add(line.custom_id);
        if (seen.size === wanted.size && [...seen].every((id) => wanted.has(id))) {
          return { status: 'found', handle: { provider: this.id, batchId: b.id, customIds: [...lookup.customIds] } };
        }
      }
    } catch (err) {
      if (err instanceof SyntaxError) {
        throw new ProviderCallError(`${this.id}: batch results are not JSONL; look again`, this.id, 'malformed_response', true, undefined, undefined, { cause: err });
      }
      throw toProviderCallError(err, this.#errors);
    }
    return running > 0
      ? { status: 'undetermined', reason: `${running} batch(es) of ${wanted.size} requests created since the intent are still running; their ids can be read once they end` }
      : { status: 'absent' };
  }

  async poll(handle: BatchHandle, signal?: AbortSignal): Promise<BatchState> {
    try {
      const b = await this.#client.messages.batches.retrieve(handle.batchId, null, signal ? { signal } : {});
      const c = b.request_counts;
      const phase = b.processing_status === 'ended' ? 'ended' : b.processing_status === 'canceling' ? 'cancelling' : 'running';
      return {
        phase,
        status: b.processing_status,
        done: phase === 'ended',
        counts: { total: c.processing + c.succeeded + c.errored + c.canceled + c.expired, succeeded: c.succeeded, failed: c.errored + c.canceled + c.expired },
      };
    } catch (err) {
      throw toProviderCallError(err, this.#errors);
    }
  }

  /**
   * Every submitted request's result, once the batch has ended. A results file that breaks off or
   * does not parse fails the whole read (retryable): results can be read again at no cost.
   * @throws ProviderCallError when the batch has not ended yet (poll first).
   */
  async results(handle: BatchHandle, signal?: AbortSignal): Promise<BatchItemResult[]> {
    const opts = signal ? { signal } : {};
    try {
      const b = await this.#client.messages.batches.retrieve(handle.batchId, null, opts);
      if (b.processing_status !== 'ended') {
        throw new ProviderCallError(`${this.id}: batch ${handle.batchId} is ${b.processing_status}; poll until it has ended`, this.id, 'bad_request', false);
      }
      const found: BatchItemResult[] = [];
      for await (const line of await this.#client.messages.batches.results(handle.batchId, {}, opts)) {
        const r = fromBatchResult(line, this.id);
        if (r) found.push(r);
      }
      return completeResults(handle, found, b.processing_status);
    } catch (err) {
      if (err instanceof SyntaxError) {
        throw new ProviderCallError(`${this.id}: batch ${handle.batchId} results are not JSONL; read them again`, this.id, 'malformed_response', true, undefined, undefined, {
          cause: err,
        });
      }
      throw toProviderCallError(err, this.#errors);
    }
  }

  async cancel(handle: BatchHandle, signal?: AbortSignal): Promise<void> {
    try {
      await this.#client.messages.batches.cancel(handle.batchId, null, signal ? { signal } : {});
    } catch (err) {
      throw toProviderCallError(err, this.#errors);
    }
  }
}
