import type { GenerateRequest, GenerateResult } from './types.js';

/** One request of a provider batch; `customId` matches its result (a sondage item id). */
export interface BatchRequest {
  readonly customId: string;
  readonly request: GenerateRequest;
}

/**
 * What a run writes to its ledger at submission, so that a restarted run re-attaches to the batch
 * instead of submitting (and paying for) it again. Plain JSON.
 */
export interface BatchHandle {
  /** Provider id, e.g. `openai/gpt-4.1-mini`. */
  readonly provider: string;
  readonly batchId: string;
  /** The custom ids submitted, in order: a result never seen for one of them is re-queued, never lost. */
  readonly customIds: readonly string[];
  /** OpenAI: the uploaded JSONL input file. */
  readonly inputFileId?: string;
}

/**
 * The provider's lifecycle, normalised: OpenAI's validating → in_progress → finalizing →
 * completed | expired | cancelled | failed, Anthropic's in_progress → canceling → ended.
 */
export type BatchPhase = 'pending' | 'running' | 'finalizing' | 'cancelling' | 'ended';

export interface BatchState {
  readonly phase: BatchPhase;
  /** The provider's own status word (`completed`, `expired`, `ended`, ...). */
  readonly status: string;
  /** True once results can be read and nothing more will arrive. */
  readonly done: boolean;
  readonly counts: { readonly total: number; readonly succeeded: number; readonly failed: number };
  /** Why a whole batch failed (OpenAI `failed`: validation errors). */
  readonly error?: string;
}

/**
 * One request's outcome. A failed one carries its error class and whether re-queuing can help.
 * `result.settings_sent` is absent: the caller holds the request and adds the batch client's
 * `settingsSent(request)`, the same settings the synchronous path stores.
 */
export type BatchItemResult =
  | { readonly customId: string; readonly ok: true; readonly result: GenerateResult }
  | {
      readonly customId: string;
      readonly ok: false;
      readonly errorClass: string;
      readonly message: string;
      readonly retryable: boolean;
      /** The usage of an answer that is not a reply (a refusal, a filtered reply): billed, so the row is priced by it. */
      readonly usage?: GenerateResult['usage'];
    };

/** What a run knows of a batch it may have created without recording it (a ledger intent). */
export interface BatchLookup {
  /** The key the batch was tagged with at `submit`. */
  readonly submissionKey: string;
  /** The custom ids it was to hold, in order. */
  readonly customIds: readonly string[];
  /** ms since the epoch, taken before `submit`: the batch, if any, was created after it. */
  readonly createdAt: number;
  /** Batch ids already recorded: never the one looked for. */
  readonly exclude?: ReadonlySet<string>;
}

/**
 * `found`: the batch exists (adopt the handle); `absent`: it was never created (submit again);
 * `undetermined`: a batch that may be it cannot be told apart yet (ask again later, submit nothing).
 */
export type BatchLookupResult =
  | { readonly status: 'found'; readonly handle: BatchHandle }
  | { readonly status: 'absent' }
  | { readonly status: 'undetermined'; readonly reason: string };

/** The size limits a provider documents for one batch. */
export interface BatchLimits {
  readonly maxRequests: number;
  readonly maxBytes: number;
  /**
   * The fewest requests the provider accepts in one batch (Bedrock: 100 records per job); absent
   * where there is no minimum (OpenAI, Anthropic). A smaller remainder is asked synchronously
   * (lib/run/runBatchPartition.ts).
   */
  readonly minRequests?: number;
}

/**
 * A provider's batch API (OpenAI Batch, Anthropic Message Batches), as the registry's
 * `createBatchClient` returns it. The run owns the rest of the protocol: reserve the
 * batch's whole maximum cost, `submit`, write the handle to the ledger, `poll` until `done`,
 * store `results`, re-queue the retryable failures; on restart, `poll` the handles in the ledger
 * instead of submitting again.
 */
export interface BatchClient {
  /** Provider id, e.g. `openai/gpt-4.1-mini`. */
  readonly id: string;
  readonly limits: BatchLimits;
  /** The settings a request is sent with, for `settings_sent` on its reply. */
  settingsSent(req: GenerateRequest): Record<string, unknown>;
  /** Requests in batches within `limits`, in order. */
  split(requests: readonly BatchRequest[]): BatchRequest[][];
  /**
   * Creates one batch. `submissionKey` tags it where the provider allows (OpenAI `metadata`), so
   * that `find` can tell it apart after a crash.
   */
  submit(requests: readonly BatchRequest[], signal?: AbortSignal, submissionKey?: string): Promise<BatchHandle>;
  /** Looks for a batch `submit` may have created for `lookup` (a run that died before recording it). */
  find(lookup: BatchLookup, signal?: AbortSignal): Promise<BatchLookupResult>;
  poll(handle: BatchHandle, signal?: AbortSignal): Promise<BatchState>;
  /** One result per submitted id, in submission order; only once `poll` says `done`. */
  results(handle: BatchHandle, signal?: AbortSignal): Promise<BatchItemResult[]>;
  cancel(handle: BatchHandle, signal?: AbortSignal): Promise<void>;
}
