/**
 * What the local run and its partition threads (partitionThreads.ts, partitionThreadMain.ts) say
 * to each other. Everything here crosses a structured clone: plain data only.
 */
import type { Campaign } from '../design/campaign.js';
import { SondageError } from '../errors.js';
import { StorageError } from '../store/storageErrors.js';
import type { RetryPolicy } from './callWithRetry.js';
import type { PartitionOutcome } from './partitionTypes.js';
import type { StopState } from './stopState.js';

/** What a partition thread is started with (its workerData). */
export interface ThreadInit {
  readonly campaign: Campaign;
  readonly dataDir: string;
  /** The run's id: the thread's reservations are the run's, not another run's. */
  readonly runId: string;
  readonly retry: RetryPolicy;
  readonly chunkSize: number;
  readonly partRows: number;
  /** RunOptions.sliceSources. */
  readonly sliceSources?: number;
  /** RunOptions.onePass, when false. */
  readonly onePass?: false;
  readonly retryFailed: boolean;
  /** This thread's share of the campaign's `concurrency`. */
  readonly concurrency: number;
  /** The only languages whose partitions this thread runs, when the run splits them (its design holds no other); absent: any. */
  readonly languages?: readonly string[];
}

/** A StopState as data (its map as entries). */
export interface StopSnapshot {
  readonly reason?: 'budget' | 'aborted' | 'overrun' | undefined;
  readonly keyFailures: readonly (readonly [string, string])[];
  /** StopState.overruns as entries (absent from threads that saw none). */
  readonly overruns?: readonly (readonly [string, number])[];
}

/** A partition thread's ledger call (threadLedger.ts), as it crosses: the method and its cloneable arguments. */
export interface LedgerCall {
  readonly type: 'ledger';
  readonly id: number;
  readonly method: string;
  readonly args: readonly unknown[];
}

export type LedgerReply =
  | { readonly type: 'ledgerReply'; readonly id: number; readonly ok: true; readonly value: unknown }
  | { readonly type: 'ledgerReply'; readonly id: number; readonly ok: false; readonly error: ThreadError };

export type ToThread =
  | LedgerReply
  | { readonly type: 'run'; readonly id: number; readonly phase: string; readonly model: string; readonly language: string }
  /** The run (or another thread) stopped: no new chunk starts; `aborted` also cuts calls short. */
  | { readonly type: 'stop'; readonly stop: StopSnapshot }
  | { readonly type: 'close' };

export type FromThread =
  | LedgerCall
  | { readonly type: 'ready' }
  /** Replies journaled since the last such message: the progress bar's and the spend line's. */
  | { readonly type: 'replies'; readonly ok: number; readonly costUsd: number }
  | { readonly type: 'done'; readonly id: number; readonly items: number; readonly outcome: PartitionOutcome; readonly stop: StopSnapshot }
  /** `id` absent: the thread itself failed (its start), not one partition. */
  | { readonly type: 'failed'; readonly id?: number; readonly error: ThreadError }
  | { readonly type: 'closed' };

/** An error as data: enough to rebuild what the CLI tells the user (a SondageError's message, a storage failure's code). */
export interface ThreadError {
  readonly name: string;
  readonly message: string;
  readonly stack?: string | undefined;
  readonly kind: 'storage' | 'sondage' | 'other';
  readonly code?: string | undefined;
  readonly path?: string | undefined;
}

export function snapshotOf(stop: StopState): StopSnapshot {
  return { reason: stop.reason, keyFailures: [...(stop.keyFailures ?? new Map<string, string>())], ...(stop.overruns ? { overruns: [...stop.overruns] } : {}) };
}

/** Merges a snapshot into a StopState (a reason, once set, stays; key failures add up). */
export function mergeStop(into: StopState, from: StopSnapshot): boolean {
  let changed = false;
  if (from.reason !== undefined && into.reason === undefined) {
    into.reason = from.reason;
    changed = true;
  }
  // A snapshot holds a thread's overruns so far: the largest seen per model is kept, not a sum of snapshots.
  for (const [model, usd] of from.overruns ?? []) {
    const overruns = (into.overruns ??= new Map<string, number>());
    if ((overruns.get(model) ?? 0) < usd) {
      overruns.set(model, usd);
      changed = true;
    }
  }
  for (const [scope, message] of from.keyFailures) {
    const failures = (into.keyFailures ??= new Map<string, string>());
    if (!failures.has(scope)) {
      failures.set(scope, message);
      changed = true;
    }
  }
  return changed;
}

export function threadError(err: unknown): ThreadError {
  const e = err instanceof Error ? err : new Error(String(err));
  const fields = e as Error & { code?: unknown; path?: unknown };
  return {
    name: e.name,
    message: e.message,
    stack: e.stack,
    kind: e instanceof StorageError ? 'storage' : e instanceof SondageError ? 'sondage' : 'other',
    code: typeof fields.code === 'string' ? fields.code : undefined,
    path: typeof fields.path === 'string' ? fields.path : undefined,
  };
}

/** The error a thread reported, as the classes the CLI recognises (its message and exit code unchanged). */
export function rebuiltError(e: ThreadError): Error {
  const err = e.kind === 'storage' ? new StorageError(e.message, e.path, e.code) : e.kind === 'sondage' ? new SondageError(e.message) : new Error(e.message);
  err.name = e.name;
  if (e.kind === 'other') Object.assign(err, { ...(e.code !== undefined ? { code: e.code } : {}), ...(e.path !== undefined ? { path: e.path } : {}) });
  if (e.stack !== undefined) err.stack = e.stack;
  return err;
}
