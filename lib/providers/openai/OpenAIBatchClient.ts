import OpenAI, { toFile } from 'openai';
import { z } from 'zod';
import type { GenerateRequest } from '../types.js';
import type { BatchClient, BatchHandle, BatchItemResult, BatchLimits, BatchLookup, BatchLookupResult, BatchRequest, BatchState } from '../batchTypes.js';
import { ProviderCallError } from '../errors.js';
import { bodyCode, classifyStatus, redactSecret, sdkErrorContext, toProviderCallError } from '../sdkErrors.js';
import type { SdkErrorContext } from '../sdkErrors.js';
import { splitBatch } from '../splitBatch.js';
import { OPENAI_BASE_URL, createOpenAIClient, fromWireResponse, settingsSent, toWireRequest } from './OpenAIChatProvider.js';
import type { ChatFlavour } from './OpenAIChatProvider.js';

import { OPENAI_BATCH_LIMITS } from '../batchLimits.js';

export { OPENAI_BATCH_LIMITS };

const ENDPOINT = '/v1/chat/completions';

/** The metadata key a batch's submission key is written under. */
export const SUBMISSION_METADATA_KEY = 'sondage_submission';

/**
 * How far before an intent `find` still lists batches: the provider's clock and ours may disagree.
 * Matching is by the metadata tag, so this only bounds the listing.
 */
const LIST_SLACK_MS = 10 * 60_000;

/** One JSONL line of a batch input file. Pure: exported for tests. */
export function toBatchLine(r: BatchRequest, model: string, flavour: ChatFlavour = 'openai'): string {
  return JSON.stringify({ custom_id: r.customId, method: 'POST', url: ENDPOINT, body: toWireRequest(r.request, model, flavour) });
}

const outputLineSchema = z.object({
  custom_id: z.string(),
  response: z.object({ status_code: z.number().int(), body: z.unknown() }).nullable().optional(),
  error: z.object({ code: z.string().nullable().optional(), message: z.string().nullable().optional() }).nullable().optional(),
});

/** Per-request error codes that mean "not run", so the request goes back to the queue. */
const NOT_RUN = new Set(['batch_expired', 'batch_cancelled']);

/**
 * Reads the lines of a batch output or error file into per-request results: a 200 body through
 * the same mapping as a synchronous reply (a refusal stays a permanent error), another status
 * classified as a synchronous error would be, `batch_expired` / `batch_cancelled` re-queued. A
 * line that does not parse is skipped, so its request counts as missing and is re-queued.
 * Pure: exported for tests.
 */
export function parseBatchOutput(text: string, provider: string): BatchItemResult[] {
  const out: BatchItemResult[] = [];
  for (const line of text.split('\n')) {
    if (line.trim() === '') continue;
    let parsed: z.infer<typeof outputLineSchema>;
    try {
      const r = outputLineSchema.safeParse(JSON.parse(line));
      if (!r.success) continue;
      parsed = r.data;
    } catch {
      continue;
    }
    const customId = parsed.custom_id;
    const res = parsed.response;
    if (res && res.status_code === 200) {
      try {
        out.push({ customId, ok: true, result: fromWireResponse(res.body, provider) });
      } catch (err) {
        const e = err as ProviderCallError;
        out.push({ customId, ok: false, errorClass: e.errorClass, message: e.message, retryable: e.retryable, ...(e.usage ? { usage: e.usage } : {}) });
      }
    } else if (res) {
      const { errorClass, retryable } = classifyStatus(res.status_code, bodyCode(res.body));
      const detail = JSON.stringify(res.body ?? null).slice(0, 300);
      out.push({ customId, ok: false, errorClass, retryable, message: `${provider}: batch request HTTP ${res.status_code} ${errorClass}: ${detail}` });
    } else {
      const code = parsed.error?.code ?? 'batch_error';
      out.push({ customId, ok: false, errorClass: code, retryable: NOT_RUN.has(code), message: `${provider}: ${code}: ${parsed.error?.message ?? 'no message'}` });
    }
  }
  return out;
}

const PHASE = {
  validating: 'pending',
  in_progress: 'running',
  finalizing: 'finalizing',
  cancelling: 'cancelling',
  completed: 'ended',
  expired: 'ended',
  cancelled: 'ended',
  failed: 'ended',
} as const;

export interface OpenAIBatchClientOptions {
  readonly model: string;
  readonly apiKey: string;
  readonly baseURL?: string;
  readonly flavour?: ChatFlavour;
  readonly timeoutMs?: number;
  readonly fetch?: typeof fetch;
  /** Written into the batch's metadata (e.g. campaign and run ids), for finding it in the dashboard. */
  readonly metadata?: Readonly<Record<string, string>>;
}

/**
 * OpenAI's Batch API: upload a JSONL file, create the batch, poll
 * it, read the output and error files, matched by `custom_id`. Every submitted id gets exactly one
 * result: those the provider never answered (expired, cancelled, a failed batch, a line it lost)
 * come back as retryable `batch_missing`, so nothing is silently lost. Persisting the handle and
 * re-attaching after a restart is the run's job (lib/run), as is reserving the budget first.
 */
export class OpenAIBatchClient implements BatchClient {
  readonly id: string;
  readonly limits: BatchLimits = OPENAI_BATCH_LIMITS;
  readonly #client: OpenAI;
  readonly #errors: SdkErrorContext;
  readonly #model: string;
  readonly #flavour: ChatFlavour;
  readonly #metadata: Readonly<Record<string, string>> | undefined;

  constructor(options: OpenAIBatchClientOptions) {
    this.#flavour = options.flavour ?? 'openai';
    this.#model = options.model;
    this.id = `${this.#flavour}/${options.model}`;
    this.#errors = sdkErrorContext(this.id, OpenAI, options, OPENAI_BASE_URL);
    this.#metadata = options.metadata;
    this.#client = createOpenAIClient(options);
  }

  /** The settings a request is sent with, as the synchronous path stores them. */
  settingsSent(req: GenerateRequest): Record<string, unknown> {
    return settingsSent(toWireRequest(req, this.#model, this.#flavour));
  }

  /** Splits requests into batches within the documented limits. */
  split(requests: readonly BatchRequest[]): BatchRequest[][] {
    return splitBatch(requests, (r) => Buffer.byteLength(toBatchLine(r, this.#model, this.#flavour)) + 1, this.limits);
  }

  /**
   * Uploads the requests and creates the batch. Write the handle to the ledger before anything
   * else: it is what a restarted run re-attaches to.
   * @throws SondageError when the requests exceed one batch's limits (use `split`), or repeat a custom id.
   */
  async submit(requests: readonly BatchRequest[], signal?: AbortSignal, submissionKey?: string): Promise<BatchHandle> {
    const ids = requests.map((r) => r.customId);
    if (new Set(ids).size !== ids.length) throw new ProviderCallError(`${this.id}: a batch repeats a custom id; results could not be matched`, this.id, 'bad_request', false);
    if (this.split(requests).length > 1) {
      throw new ProviderCallError(`${this.id}: ${requests.length} requests exceed one batch's limits; split them first`, this.id, 'bad_request', false);
    }
    const jsonl = requests.map((r) => toBatchLine(r, this.#model, this.#flavour)).join('\n') + '\n';
    const opts = signal ? { signal } : {};
    const metadata =
      this.#metadata || submissionKey !== undefined
        ? { ...this.#metadata, ...(submissionKey !== undefined ? { [SUBMISSION_METADATA_KEY]: submissionKey } : {}) }
        : undefined;
    try {
      const file = await this.#client.files.create({ file: await toFile(Buffer.from(jsonl), 'sondage-batch.jsonl'), purpose: 'batch' }, opts);
      const batch = await this.#client.batches.create(
        { input_file_id: file.id, endpoint: ENDPOINT, completion_window: '24h', ...(metadata ? { metadata } : {}) },
        opts,
      );
      return { provider: this.id, batchId: batch.id, inputFileId: file.id, customIds: ids };
    } catch (err) {
      throw toProviderCallError(err, this.#errors);
    }
  }

  /**
   * The batch tagged with `lookup.submissionKey` in its metadata, among those created since shortly
   * before the intent (listed newest first): exact, as the tag is unique to one intent.
   */
  async find(lookup: BatchLookup, signal?: AbortSignal): Promise<BatchLookupResult> {
    try {
      for await (const b of this.#client.batches.list({ limit: 100 }, signal ? { signal } : {})) {
        if (b.created_at * 1000 < lookup.createdAt - LIST_SLACK_MS) break;
        if (b.metadata?.[SUBMISSION_METADATA_KEY] !== lookup.submissionKey || lookup.exclude?.has(b.id)) continue;
        return { status: 'found', handle: { provider: this.id, batchId: b.id, inputFileId: b.input_file_id, customIds: [...lookup.customIds] } };
      }
      return { status: 'absent' };
    } catch (err) {
      throw toProviderCallError(err, this.#errors);
    }
  }

  async poll(handle: BatchHandle, signal?: AbortSignal): Promise<BatchState> {
    try {
      const b = await this.#client.batches.retrieve(handle.batchId, signal ? { signal } : {});
      const phase = PHASE[b.status] ?? 'running';
      const counts = b.request_counts ?? { total: handle.customIds.length, completed: 0, failed: 0 };
      const error = b.errors?.data?.map((e) => `${e.code ?? 'error'}: ${e.message ?? ''}`).join('; ');
      return {
        phase,
        status: b.status,
        done: phase === 'ended',
        counts: { total: counts.total, succeeded: counts.completed, failed: counts.failed },
        ...(error ? { error: redactSecret(error, this.#errors.secrets) } : {}),
      };
    } catch (err) {
      throw toProviderCallError(err, this.#errors);
    }
  }

  /**
   * Every submitted request's result, once the batch has ended: the output file's successes, the
   * error file's failures, and a retryable `batch_missing` for each id in neither.
   * @throws ProviderCallError when the batch has not ended yet (poll first).
   */
  async results(handle: BatchHandle, signal?: AbortSignal): Promise<BatchItemResult[]> {
    const opts = signal ? { signal } : {};
    try {
      const b = await this.#client.batches.retrieve(handle.batchId, opts);
      if (PHASE[b.status] !== 'ended') {
        throw new ProviderCallError(`${this.id}: batch ${handle.batchId} is ${b.status}; poll until it has ended`, this.id, 'bad_request', false);
      }
      const found: BatchItemResult[] = [];
      for (const fileId of [b.output_file_id, b.error_file_id]) {
        if (!fileId) continue;
        const text = await (await this.#client.files.content(fileId, opts)).text();
        found.push(...parseBatchOutput(text, this.id));
      }
      const failure =
        b.status === 'failed'
          ? {
              message: redactSecret(b.errors?.data?.map((e) => `${e.code ?? 'error'}: ${e.message ?? ''}`).join('; ') || 'no reason given', this.#errors.secrets),
              // a full enqueued-token queue clears; a file that fails validation will fail again
              retryable: b.errors?.data?.some((e) => (e.code ?? '').includes('limit')) ?? false,
            }
          : undefined;
      return completeResults(handle, found, b.status, failure);
    } catch (err) {
      throw toProviderCallError(err, this.#errors);
    }
  }

  async cancel(handle: BatchHandle, signal?: AbortSignal): Promise<void> {
    try {
      await this.#client.batches.cancel(handle.batchId, signal ? { signal } : {});
    } catch (err) {
      throw toProviderCallError(err, this.#errors);
    }
  }
}

/**
 * One result per submitted id, in submission order: the first result found for an id (a provider
 * that repeats a line is not counted twice), ids the batch never answered as retryable
 * `batch_missing` (or `batch_failed` with the batch's reason when the whole batch failed), ids
 * the batch did not contain dropped. Exported for the Anthropic client and tests.
 */
export function completeResults(
  handle: BatchHandle,
  found: readonly BatchItemResult[],
  status: string,
  failure?: { readonly message: string; readonly retryable: boolean },
): BatchItemResult[] {
  const byId = new Map<string, BatchItemResult>();
  for (const r of found) if (!byId.has(r.customId)) byId.set(r.customId, r);
  return handle.customIds.map(
    (customId) =>
      byId.get(customId) ??
      (failure
        ? { customId, ok: false, errorClass: 'batch_failed', retryable: failure.retryable, message: `${handle.provider}: batch ${handle.batchId} failed: ${failure.message}` }
        : {
        customId,
        ok: false,
        errorClass: 'batch_missing',
        retryable: true,
        message: `${handle.provider}: batch ${handle.batchId} ended (${status}) without a result for ${customId}; re-queue it`,
      }),
  );
}
