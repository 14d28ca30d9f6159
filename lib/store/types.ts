import type { LanguageCode } from '../core/types.js';

/** One attempt at one item. Stored for every attempt that produced text or an error. */
export interface ReplyRow {
  readonly item_id: string;
  readonly campaign: string;
  readonly phase: string;
  readonly model: string;
  readonly language: LanguageCode;
  /** 1-based. */
  readonly attempt: number;
  /**
   * `empty`: the provider answered (and billed) with no text and no logprobs (an OpenAI-compatible
   * `content: null`, an Anthropic reply without a text block). Never read as an answer, never handed
   * to a dependent phase, and recorded once like a refusal (lib/run/attemptVerdict.ts `isEmptyReply`).
   */
  readonly status: 'ok' | 'error' | 'empty';
  readonly text: string | null;
  readonly finish_reason: string | null;
  readonly input_tokens: number;
  readonly output_tokens: number;
  /** The part of `input_tokens` read from the provider's prompt cache; null when it did not say (older rows: absent). */
  readonly cached_input_tokens?: number | null;
  readonly cost_usd: number;
  readonly latency_ms: number;
  /** JSON of Record<token, {logprob, exact}>, or null. */
  readonly logprobs_json: string | null;
  /**
   * Whether every logprob in `logprobs_json` is exact (true), or some are only bounded above by
   * the top-k (false: vLLM candidates outside it); null without logprobs (older rows: absent).
   */
  readonly logprobs_exact?: boolean | null;
  readonly error_class: string | null;
  readonly error_message: string | null;
  /** JSON of the generation settings actually sent. */
  readonly settings_json: string;
  /** `simulated/alpha`, `openai/gpt-…`: where the reply came from. */
  readonly provider: string;
  readonly simulated: boolean;
  readonly created_at: string;
}

export interface ReadingRow {
  readonly item_id: string;
  readonly campaign: string;
  readonly phase: string;
  /** The model whose reply was read (partition key), not the judge. */
  readonly model: string;
  readonly language: LanguageCode;
  /** `rule` | `rule+` | `judge:<model id>`. */
  readonly reader: string;
  /** From the battery's vocabulary for the reader (and facet); `invalid` when nothing readable. */
  readonly label: string;
  /** What the rule matched, or the judge's raw output. */
  readonly raw: string | null;
  /** Readings of a dependent phase's reply (a judge's): the item whose reply produced it; null when it is the item itself. */
  readonly judge_item_id: string | null;
  /** Which of several things read off one reply this is (X-Value: nature, scope, A–H); null when a reader reads one thing. */
  readonly facet?: string | null;
  /** A numeric reading (P(True), a 1–5 score); null otherwise. */
  readonly value?: number | null;
  /**
   * Fingerprint of what the reading was read with (lib/run/readings.ts `readingFingerprint`: the
   * phase's reader version and the item's design data, such as a gold letter or a reading map).
   * A run finds the readings whose fingerprint the current design no longer gives and reads their
   * replies again (lib/run/refreshReadings.ts); null for rows stored before it existed.
   */
  readonly read_with?: string | null;
}

export type { TableName } from '../core/types.js';

/**
 * Files addressed by key (`campaigns/<c>/<phase>/replies/model=m/language=l/part-0001.parquet`),
 * the same keys on disk and in S3.
 */
export interface BlobStore {
  put(key: string, body: Uint8Array | string): Promise<void>;
  get(key: string): Promise<Uint8Array | undefined>;
  exists(key: string): Promise<boolean>;
  list(prefix: string): Promise<string[]>;
  delete(key: string): Promise<void>;
  /** Local path of a key where the backend is a directory (DuckDB reads it in place). */
  localPath?(key: string): string;
  /**
   * Moves `from` to `to` inside the store (a rename on disk, CopyObject then DeleteObject on S3);
   * false when `from` is not there. Without it, stagedParts.ts moves through get, put and delete.
   */
  move?(from: string, to: string): Promise<boolean>;
}

export interface BudgetState {
  readonly cap_usd: number;
  readonly spent_usd: number;
  /** Held by reservations: calls in flight, and those of a killed run not yet resolved (`orphaned_usd`). */
  readonly reserved_usd: number;
  /** The part of `reserved_usd` held by reservations of killed runs, until a journal shows what they asked. */
  readonly orphaned_usd: number;
  /**
   * Calls of killed runs that left no reply: the provider may have billed them, so they count
   * against the cap like spend (`spent + reserved + possibly billed ≤ cap`), shown apart.
   */
  readonly possibly_billed_usd: number;
}

/** What a reservation covers: the partition of the calls, and their items. */
export interface ReservationScope {
  readonly phase: string;
  readonly model: string;
  readonly language: string;
  /** The items of the calls (ids are kept for up to MAX_SCOPE_IDS items; a count beyond). */
  readonly itemIds: readonly string[];
}

/** Reservations keep their item ids up to this many (a provider batch's reservation keeps its count only). */
export const MAX_SCOPE_IDS = 1_000;

/** A phase's items by state: still to ask, replied, failed (permanently or not). */
export interface ItemCounts {
  readonly pending: number;
  readonly done: number;
  readonly failed: number;
}

/**
 * A partition of a phase: the items of one model in one language. Every item belongs to one, and
 * the ledger is told which wherever it reads or writes items: the embedded ledger keys items by it,
 * so that the ids of one partition sit together in its index (random ids spread over the index of a
 * whole phase cost a cache miss each once the phase passes ~0.5 M items; bench/ledger.ts).
 */
export interface LedgerPartition {
  readonly phase: string;
  readonly model: string;
  readonly language: string;
}

/**
 * The partition of anything that has one, as a plain object (what crosses to a partition thread's
 * ledger: a run's spec holds functions, which a thread message cannot carry).
 */
export function ledgerPartition(of: LedgerPartition): LedgerPartition {
  return { phase: of.phase, model: of.model, language: of.language };
}

/** A partition of a phase as a run registered it: the whole set of its items for the current design. */
export interface PartitionRecord {
  readonly phase: string;
  readonly model: string;
  readonly language: string;
  readonly items: number;
}

/**
 * The ledger: item states and the campaign budget. Two backends, embedded (SQLite) and DynamoDB.
 *
 * Budget protocol (DESIGN.md "Cost and safety rails"): before a call, `reserve` the call's maximum
 * cost with a conditional write (spent + reserved + possibly billed + amount ≤ cap); after it,
 * `settle` the actual cost, which releases the reservation. A reservation whose holder died is
 * never simply released — its calls may have been billed: `orphanStale` marks it when a run
 * starts, and `resolveOrphans` turns it into spend once the dead run's journal shows which of its
 * calls came back (their cost is committed from the journal) and which did not (possibly billed).
 */
export interface Ledger {
  initCampaign(campaign: string, capUsd: number, runId: string): Promise<void>;
  budget(campaign: string): Promise<BudgetState>;
  /** Returns false, and reserves nothing, when the reservation would pass the cap. */
  reserve(campaign: string, reservationId: string, amountUsd: number, scope?: ReservationScope): Promise<boolean>;
  /** Turns a reservation into spend of `actualUsd` (which may exceed the reserved amount slightly). */
  settle(campaign: string, reservationId: string, actualUsd: number): Promise<void>;
  release(campaign: string, reservationId: string): Promise<void>;
  /**
   * Reservations left by runs other than `runId` (a killed run), except those holding an open
   * provider batch or a batch intent: `hold` marks them orphaned — still counted — for
   * `resolveOrphans` once the run adopts the dead run's journal (local runs); `bill` turns them into
   * possibly-billed spend at once (AWS: a killed Lambda's journal died with it). Returns how many
   * and how much.
   */
  orphanStale(campaign: string, runId: string, mode: 'hold' | 'bill'): Promise<{ readonly count: number; readonly amountUsd: number }>;
  /**
   * The orphaned reservations of one partition, once its dead runs' journals are adopted: each is
   * removed, and the calls whose items left no reply in those journals (`replied` has the ones that
   * did) become possibly billed at `maxCostOf(item)` (the whole amount where the ids were not kept).
   */
  resolveOrphans(
    campaign: string,
    partition: LedgerPartition,
    replied: ReadonlySet<string>,
    maxCostOf: (itemId: string) => number | undefined,
  ): Promise<{ readonly resolved: number; readonly billedUsd: number }>;
  /** Items of live (not orphaned) reservations per phase: the calls in flight now. */
  inFlight(campaign: string): Promise<Map<string, number>>;
  /**
   * Registers a partition's items for the current design: new ids pending, ids of the partition
   * no longer in `itemIds` retired (left out of `counts`, their replies kept), ids back in the
   * design restored; records the partition's size.
   */
  registerPartition(campaign: string, partition: LedgerPartition, itemIds: readonly string[]): Promise<void>;
  /** Every partition registered with `registerPartition`, with its size. */
  partitions(campaign: string): Promise<PartitionRecord[]>;

  /** Registers items of a partition as pending; ids already known keep their state. */
  registerItems(campaign: string, partition: LedgerPartition, itemIds: readonly string[]): Promise<void>;
  /**
   * Whether any item of the partition is registered or committed: some run has begun it. The local
   * run asks a partition no run has begun in one pass (lib/run/onePassPartition.ts). Absent where
   * a backend has no cheap answer (DynamoDB, whose workers run shards): every partition then runs
   * as one begun before.
   */
  hasItems?(campaign: string, partition: LedgerPartition): Promise<boolean>;
  /**
   * Records a partition as registerPartition does — its size and the digest of its ids in order
   * (idsDigest) — when every id is registered already (registerItems, in that order) and none
   * was registered before: the one-pass run of a fresh partition, which registered each slice as
   * it asked it and no longer holds the ids.
   */
  recordPartition?(campaign: string, partition: LedgerPartition, items: number, idsDigest: string): Promise<void>;
  /** Items not yet done (pending or failed, permanently failed included), in registration order. */
  pendingItems(campaign: string, phase: string): Promise<Set<string>>;
  /**
   * The subset of `itemIds` a run asks (a partition's view, without loading the whole phase): not
   * done, and not failed permanently unless `retryFailed` (a refusal is recorded once).
   */
  pendingAmong(campaign: string, partition: LedgerPartition, itemIds: readonly string[], options?: PendingOptions): Promise<Set<string>>;
  /**
   * Atomically: marks items done (or failed), records the part file that holds their replies,
   * deletes the given reservations and adds `costUsd` to spent. A part recorded here is never
   * adopted twice.
   */
  commitPart(commit: PartCommit): Promise<void>;
  /** Part keys already committed for a campaign phase. */
  committedParts(campaign: string, phase: string): Promise<Set<string>>;
  /** A phase's items by state, retired ones left out. */
  counts(campaign: string, phase: string): Promise<ItemCounts>;
  /**
   * Each of `phases`' counts, as `counts` gives them (a phase without items: all zero), read
   * together: the embedded ledger reads its items once for all the phases instead of once each.
   */
  phaseCounts(campaign: string, phases: readonly string[]): Promise<Map<string, ItemCounts>>;

  /**
   * Records a provider batch right after its submission, with the reservation that holds
   * its maximum cost. An open batch's reservation survives `releaseStale`: a restarted run
   * re-attaches to the batch, and the money it will cost stays held.
   */
  recordBatch(record: BatchRecord): Promise<void>;
  /** Batches of a partition submitted and not yet committed (`PartCommit.closeBatches`), oldest first. */
  openBatches(campaign: string, phase: string, model: string, language: string): Promise<BatchRecord[]>;
  /** Every open batch of a campaign, all partitions, oldest first (`sondage stop`). */
  campaignBatches(campaign: string): Promise<BatchRecord[]>;
  /** Notes that the provider was asked to cancel an open batch; it stays open until its (partial) results are committed. */
  markBatchCancelled(campaign: string, batchId: string, at: string): Promise<void>;
  /**
   * Records that a batch is about to be created, before the provider is asked: a run that
   * dies between the provider creating the batch and `recordBatch` leaves this intent, and the next
   * run looks the batch up by its submission key instead of creating (and paying for) it again.
   * Its reservation survives `releaseStale`, as an open batch's does.
   */
  recordBatchIntent(intent: BatchIntent): Promise<void>;
  /** Intents of a partition not yet resolved (by `recordBatch` or `dropBatchIntent`), oldest first. */
  batchIntents(campaign: string, phase: string, model: string, language: string): Promise<BatchIntent[]>;
  /** Every unresolved intent of a campaign (`sondage stop`). */
  campaignBatchIntents(campaign: string): Promise<BatchIntent[]>;
  /** Forgets an intent whose batch was never created; its reservation is released in the same write. */
  dropBatchIntent(campaign: string, submissionKey: string): Promise<void>;
  /**
   * Worker leases, where workers of two executions could overlap (DynamoDB): a worker keeps one
   * live while it runs (`heartbeat` again before `untilMs` passes) and ends it when it returns;
   * `liveHolders` says how many of other runs are live, so a plan that moved the fence can wait
   * for the fenced generation to stop. Absent on the embedded ledger, whose run lock already
   * keeps one run at a time.
   */
  /**
   * A call of `model` cost `excessUsd` more than it reserved (DynamoDB): every worker of the
   * campaign stops at its next chunk, not only the one that saw it. The local run's partitions
   * share one process and its stop state instead.
   */
  flagOverrun?(campaign: string, model: string, excessUsd: number): Promise<void>;
  /**
   * The campaign's fence when it names another run than this ledger's (DynamoDB): a worker that
   * took its lease and finds this refuses its shards before it registers or builds anything, so a
   * plan that moved the fence and saw no live lease never has two generations at work.
   */
  fencedOutBy?(campaign: string): Promise<string | undefined>;
  heartbeat?(campaign: string, holder: string, untilMs: number): Promise<void>;
  endHeartbeat?(campaign: string, holder: string): Promise<void>;
  liveHolders?(campaign: string, exceptRunId: string): Promise<{ readonly count: number; readonly untilMs: number; readonly runs: readonly string[] }>;
  close(): Promise<void>;
}

/** A provider batch in the ledger: what a restarted run needs to re-attach to it. */
export interface BatchRecord {
  readonly campaign: string;
  readonly phase: string;
  readonly model: string;
  readonly language: string;
  readonly batchId: string;
  /** The batch client's handle (lib/providers BatchHandle), as JSON. */
  readonly handleJson: string;
  /** The reservation holding the batch's maximum cost; settled by the commit that closes the batch. */
  readonly reservationId: string;
  /** The intent this batch resolves (`recordBatch` deletes it in the same write). */
  readonly submissionKey?: string;
  /** ISO time `sondage stop` asked the provider to cancel the batch. */
  readonly cancelledAt?: string;
}

/** A batch about to be created (`Ledger.recordBatchIntent`). */
export interface BatchIntent {
  readonly campaign: string;
  readonly phase: string;
  readonly model: string;
  readonly language: string;
  /** The batch client's id (`openai/gpt-4.1-mini`): who to ask whether the batch exists. */
  readonly provider: string;
  /** Deterministic from the intent (lib/run `submissionKey`); the batch is tagged with it where the provider allows. */
  readonly submissionKey: string;
  /** The custom ids the batch will hold, in order. */
  readonly customIds: readonly string[];
  readonly reservationId: string;
  /** ms since the epoch, written before the provider is asked: the batch was created after it. */
  readonly createdAt: number;
}

/** Which not-done items `Ledger.pendingAmong` returns. */
export interface PendingOptions {
  /** Also the items whose last attempt failed permanently (`sondage run --retry-failed`). Default false. */
  readonly retryFailed?: boolean;
}

export interface PartCommit {
  readonly campaign: string;
  readonly phase: string;
  /** The partition of the part's items, with `phase` (LedgerPartition). */
  readonly model: string;
  readonly language: string;
  readonly partKey: string;
  readonly done: readonly string[];
  /** Items that failed after exhausting their retries: asked again by the next run. */
  readonly failed: readonly string[];
  /**
   * Items whose last attempt failed with an error a retry cannot fix (refusal, content filter, bad
   * request, not found): failed like `failed`, but not asked again unless `retryFailed`.
   */
  readonly failedPermanently?: readonly string[];
  /** Reservations settled by this commit (a part spans several chunks, each with its own). */
  readonly reservationIds?: readonly string[];
  /** Actual cost of the part's replies, added to spent once. */
  readonly costUsd: number;
  /**
   * Reservations of attempts sent and never answered (a timeout, an abort in flight): the provider
   * may have billed them, so they move to possibly billed, counted against the cap, not released.
   */
  readonly possiblyBilledUsd?: number;
  /** Batches whose results this part holds: closed in the same transaction, never re-attached to. */
  readonly closeBatches?: readonly string[];
}
