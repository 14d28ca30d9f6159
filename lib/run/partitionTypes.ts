/**
 * What running one (phase, model, language) partition takes (PartitionSpec, with the PartSink its
 * parts go to) and what it returns (PartitionOutcome). The contract between the builders
 * (partitionSpec.ts), the runners (runPartition.ts, runBatchPartition.ts) and their callers (the
 * local run, the partition threads, the Lambda worker), kept in one file of its own so that each
 * can import it without importing a runner.
 */
import type { LanguageCode, PromptItem } from '../core/types.js';
import type { TokenUsage } from '../pricing/pricing.js';
import type { ModelProvider, Price } from '../providers/types.js';
import type { Ledger, ReadingRow, ReplyRow } from '../store/types.js';
import type { RetryPolicy } from './callWithRetry.js';
import type { SlicedItems } from './slicedItems.js';
import type { CallWatch } from './CallWatch.js';
import type { Semaphore } from './Semaphore.js';
import type { StopState } from './stopState.js';

/** Rows per Parquet part where a run sets none (RunOptions.partRows): replies parts, and the files of a prompts part. */
export const DEFAULT_PART_ROWS = 20_000;

/** Where the rows of one partition go once a part is complete. */
export interface PartSink {
  /**
   * Writes the replies part `partName`; returns its key. From `rows` when the caller still holds
   * the journal's rows (the part's own run: the journal is not read back), else by converting the
   * journal (NDJSON reply rows: a killed run's, or a batch's).
   */
  writeReplies(journalPath: string, partName: string, rows?: readonly ReplyRow[]): Promise<string>;
  /** The key `writeReplies` gives the part `partName` (to ask the ledger whether it is committed). */
  partKey(partName: string): string;
  /** Writes reading rows as a readings part. */
  writeReadings(rows: readonly ReadingRow[], partName: string): Promise<void>;
  /**
   * After the part's ledger commit: moves its replies and readings from staging into the tables
   * (lib/store/stagedParts.ts). Idempotent. Absent where parts are written in place (test sinks).
   */
  publish?(partName: string): Promise<void>;
}

export interface PartitionSpec {
  readonly campaign: string;
  readonly phase: string;
  /** Partition keys: the model whose replies these are (for the judge phase, the judged model). */
  readonly model: string;
  readonly language: LanguageCode;
  readonly runId: string;
  /** The partition's items, or (a dependent phase's in the local run) its slices, expanded one at a time as they are asked. */
  readonly items: readonly PromptItem[] | SlicedItems;
  readonly provider: ModelProvider;
  readonly price: Price;
  readonly retry: RetryPolicy;
  /** Readings of one successful reply (rule readings, or the judge's label of the source item). */
  readReply(item: PromptItem, reply: ReplyRow): ReadingRow[];
  /** Reservation amount (USD) for one call to this item: prompt + max_tokens at list price. */
  maxCost(item: PromptItem): number;
  /** USD of one reply; `cached_input_tokens`, when present, at the cached-input price. */
  cost(usage: TokenUsage): number;
  readonly journalDir: string;
  readonly sink: PartSink;
  readonly ledger: Ledger;
  readonly semaphore: Semaphore;
  /** Items per reservation (halved near the cap, down to one). */
  readonly chunkSize: number;
  /** Reply rows per Parquet part (DEFAULT_PART_ROWS unless a run sets it), and prompt rows per file of a prompts part (lib/run/promptsPart.ts). */
  readonly partRows: number;
  /**
   * Seal the open part once it is this old (ms), whatever its rows: what a hard kill can lose is
   * then at most this much work (the GPU job on Spot, gpu.commit_minutes). Checked as chunks end.
   */
  readonly partMs?: number;
  readonly signal?: AbortSignal;
  readonly onReply?: (row: ReplyRow) => void;
  /** Ask again the items whose last attempt failed permanently (`sondage run --retry-failed`). */
  readonly retryFailed?: boolean;
  /** The environment variable holding the provider's API key, named when the provider rejects it. */
  readonly keyEnv?: string;
  /**
   * The items are the whole partition for the current design (the local run), not a shard of it
   * (the Lambda worker): registered with `registerPartition`, so that ids the design dropped are
   * retired, and a killed run's held reservations of the partition resolved once its journals
   * are adopted.
   */
  readonly wholePartition?: boolean;
  /**
   * Shared by the partitions of a run. `reason`: the budget could not cover even one more call, or
   * the run was aborted: no new chunk starts anywhere. `keyFailures`: keyScope (provider model,
   * endpoint, key variable) → message, for keys a provider rejected: no partition of that scope
   * starts a new call; the same model at another endpoint goes on.
   */
  readonly stop: StopState;
  /**
   * Whether a call whose attempt may take `attemptTimeoutMs` can still start (the Lambda worker:
   * while that, or the campaign's call window where shorter, is left before the deadline). A call
   * not started leaves its item pending, unpaid; absent, every call may start.
   */
  readonly mayStartCall?: (attemptTimeoutMs: number) => boolean;
  /** Sees the calls in flight and the waits before retries (the local run's progress line). */
  readonly watch?: CallWatch;
  /**
   * Told of each attempt sent and never answered, with the journal it is in and what it reserved:
   * the Lambda worker's salvage counts it possibly billed when a runner that threw leaves that
   * journal's part uncommitted (its commit would have counted it).
   */
  readonly onUnanswered?: (journalPath: string, reservedUsd: number) => void;
}

export interface PartitionOutcome {
  readonly done: number;
  readonly failed: number;
  readonly adopted: number;
  readonly costUsd: number;
  readonly pending: number;
  /** Set when the provider rejected the API key: the message naming the model and the key's variable. */
  readonly keyFailure?: string;
  /**
   * Items left pending because the provider rejected the key: not in `pending`, which counts what
   * another pass of this run could still do (the Lambda worker asks to be invoked again for it;
   * for these only a new key helps).
   */
  readonly keyBlocked?: number;
  /** Set when the provider asked to wait longer than the run waits: the message says when to resume. */
  readonly waitStop?: string;
  /** Items left pending by that stop (not in `pending`, as `keyBlocked`). */
  readonly waitBlocked?: number;
  /** Stored readings read again because the design's reading inputs changed (lib/run/refreshReadings.ts), and how many of them changed. */
  readonly reread?: number;
  readonly rereadChanged?: number;
  /**
   * Items of a batch route handed to the model's synchronous call (Bedrock: Converse) at the
   * on-demand price, being fewer than the provider's minimum per batch (`minRequests`, Bedrock's
   * 100 records): how many, and that minimum (lib/run/runBatchPartition.ts).
   */
  readonly syncRemainder?: SyncRemainder;
}

/** Items a batch run asked synchronously for want of a batch's minimum, and the minimum. */
export interface SyncRemainder {
  readonly items: number;
  readonly minRequests: number;
}
