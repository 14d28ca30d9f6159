/**
 * What one attempt, or a journal's rows, mean for the ledger: done, failed (asked again by the
 * next run), failed for good (asked again only with `--retry-failed`), or pending (a rejected key,
 * an abort). The synchronous runner, the batch runner, journal adoption and the ledger rebuild all
 * judge attempts here, so that they cannot disagree about an item.
 */
import type { GenerateResult } from '../providers/types.js';
import type { ReplyRow } from '../store/types.js';

/**
 * Error classes about the API key or the account, not the item: every further call with
 * the key fails the same way, so the partition stops and its items stay pending for the next run.
 */
export const KEY_ERROR_CLASSES: ReadonlySet<string> = new Set(['auth', 'permission', 'payment_required']);

/**
 * Error classes that a journal row (which does not keep the retry decision) shows to be permanent:
 * the item's request itself is refused. Used when adopting a killed run's journal.
 */
const PERMANENT_ERROR_CLASSES: ReadonlySet<string> = new Set(['bad_request', 'not_found', 'refusal', 'content_filter', 'simulated_bad_request']);

/**
 * A reply that says nothing: no text (or only white space) and no logprobs. It is paid for and
 * stored as `empty`, never scored as an answer nor sent on to a judge or verifier, and recorded
 * failed for good like a refusal (`--retry-failed` asks it again). A one-token probe whose token is
 * end-of-text still has logprobs, and stays `ok`.
 */
export function isEmptyReply(r: Pick<GenerateResult, 'text' | 'logprobs'>): boolean {
  return (r.text ?? '').trim() === '' && (r.logprobs === undefined || r.logprobs === null || Object.keys(r.logprobs).length === 0);
}

/** What an item's last attempt means for the ledger. */
export type AttemptVerdict = 'done' | 'failed' | 'failed_permanently' | 'key' | 'pending';

/**
 * The ledger state an item's final attempt leads to ("permanent errors … recorded once,
 * not retried forever"): a success is done; a key or account error leaves the item pending (the
 * key is at fault, not the item); any other error a retry cannot fix fails the item for good
 * (`--retry-failed` asks it again); a transient error after the last retry fails it until the next
 * run; an attempt cut short by an abort leaves it pending.
 */
export function attemptVerdict(
  final: { readonly ok: boolean; readonly errorClass?: string; readonly retryable?: boolean; readonly result?: Pick<GenerateResult, 'text' | 'logprobs'> },
  aborted: boolean,
): AttemptVerdict {
  if (final.ok) return final.result !== undefined && isEmptyReply(final.result) ? 'failed_permanently' : 'done';
  if (aborted) return 'pending';
  if (final.errorClass !== undefined && KEY_ERROR_CLASSES.has(final.errorClass)) return 'key';
  // A call cut short without the run being stopped says nothing about the item: asked again.
  if (final.errorClass === 'aborted') return 'failed';
  return final.retryable === false ? 'failed_permanently' : 'failed';
}

/** Items (not done) whose last journaled attempt failed with a permanent error class. */
export function permanentlyFailed(rows: readonly Pick<ReplyRow, "item_id" | "attempt" | "status" | "error_class">[], done: ReadonlySet<string>): string[] {
  const last = new Map<string, (typeof rows)[number]>();
  for (const r of rows) {
    const seen = last.get(r.item_id);
    if (!seen || r.attempt >= seen.attempt) last.set(r.item_id, r);
  }
  const out: string[] = [];
  for (const [id, r] of last) {
    if (done.has(id)) continue;
    if (r.status === 'empty' || (r.status === 'error' && r.error_class !== null && PERMANENT_ERROR_CLASSES.has(r.error_class))) out.push(id);
  }
  return out;
}

/**
 * Whether an item's last journaled attempt ended its call, so that no attempt of it can have been
 * in flight when the run that wrote the journal died: a reply (even an empty one), the policy's last
 * attempt, or an error a retry cannot fix. An attempt sent and never answered (`unanswered`), or an
 * answered failure a retry could follow (a 429, a 500), ends nothing: a retry may have been on the
 * wire at the kill, so its reservation is counted (lib/store/orphans.ts).
 */
export function callEnded(
  last: Pick<ReplyRow, 'attempt' | 'status' | 'error_class'>,
  unanswered: boolean,
  maxAttempts: number,
): boolean {
  if (last.status !== 'error' || last.attempt >= maxAttempts) return true;
  if (unanswered) return false;
  return last.error_class !== null && (PERMANENT_ERROR_CLASSES.has(last.error_class) || KEY_ERROR_CLASSES.has(last.error_class));
}
