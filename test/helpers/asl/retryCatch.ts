/**
 * Retry and Catch (states-language.net, "Error Handling"): the first Retrier whose ErrorEquals
 * names the error applies, with its own attempt count; once its MaxAttempts are used up, the
 * Catchers are scanned in order and the first that names the error sends the machine to its Next
 * with `{ Error, Cause }` at its ResultPath. States.ALL names every error, States.TaskFailed every
 * error but States.Timeout; neither names a terminal error (States.Runtime,
 * States.DataLimitExceeded), which no Retrier or Catcher handles. Retry intervals are computed
 * and recorded, never slept.
 */
import { UnsupportedAslError } from './errors.js';
import type { StatesError } from './errors.js';

export interface Retrier {
  readonly ErrorEquals: readonly string[];
  readonly IntervalSeconds?: number;
  readonly MaxAttempts?: number;
  readonly BackoffRate?: number;
  readonly MaxDelaySeconds?: number;
  readonly JitterStrategy?: 'FULL' | 'NONE';
  readonly Comment?: string;
}

export interface Catcher {
  readonly ErrorEquals: readonly string[];
  readonly Next: string;
  readonly ResultPath?: string | null;
  readonly Comment?: string;
}

const RETRIER_FIELDS = new Set(['ErrorEquals', 'IntervalSeconds', 'MaxAttempts', 'BackoffRate', 'MaxDelaySeconds', 'JitterStrategy', 'Comment']);
const CATCHER_FIELDS = new Set(['ErrorEquals', 'Next', 'ResultPath', 'Comment']);

function checkErrorEquals(list: unknown, where: string, last: boolean): void {
  if (!Array.isArray(list) || list.length === 0 || !list.every((e) => typeof e === 'string')) throw new UnsupportedAslError(`${where}: ErrorEquals must be a non-empty array of error names`);
  if (list.includes('States.ALL') && (list.length > 1 || !last)) throw new UnsupportedAslError(`${where}: States.ALL must appear alone, in the last entry`);
}

/** Checks Retry and Catch fields: known keys, sane numbers, States.ALL alone and last. */
export function checkRetryCatch(retry: unknown, catchers: unknown): void {
  if (retry !== undefined) {
    if (!Array.isArray(retry)) throw new UnsupportedAslError('Retry must be an array');
    retry.forEach((r: Record<string, unknown>, i) => {
      for (const k of Object.keys(r)) if (!RETRIER_FIELDS.has(k)) throw new UnsupportedAslError(`Retry[${i}].${k} is not implemented`);
      checkErrorEquals(r.ErrorEquals, `Retry[${i}]`, i === retry.length - 1);
      if (r.MaxAttempts !== undefined && !(Number.isInteger(r.MaxAttempts) && (r.MaxAttempts as number) >= 0)) throw new UnsupportedAslError(`Retry[${i}].MaxAttempts must be an integer ≥ 0`);
      if (r.BackoffRate !== undefined && !(typeof r.BackoffRate === 'number' && r.BackoffRate >= 1)) throw new UnsupportedAslError(`Retry[${i}].BackoffRate must be ≥ 1`);
      if (r.JitterStrategy !== undefined && r.JitterStrategy !== 'FULL' && r.JitterStrategy !== 'NONE') throw new UnsupportedAslError(`Retry[${i}].JitterStrategy must be FULL or NONE`);
    });
  }
  if (catchers !== undefined) {
    if (!Array.isArray(catchers)) throw new UnsupportedAslError('Catch must be an array');
    catchers.forEach((c: Record<string, unknown>, i) => {
      for (const k of Object.keys(c)) if (!CATCHER_FIELDS.has(k)) throw new UnsupportedAslError(`Catch[${i}].${k} is not implemented`);
      checkErrorEquals(c.ErrorEquals, `Catch[${i}]`, i === catchers.length - 1);
      if (typeof c.Next !== 'string') throw new UnsupportedAslError(`Catch[${i}] needs a Next`);
    });
  }
}

/** Whether an ErrorEquals list names the error. */
export function errorMatches(errorEquals: readonly string[], err: StatesError): boolean {
  if (err.terminal) return false;
  return errorEquals.some((name) => name === err.error || name === 'States.ALL' || (name === 'States.TaskFailed' && err.error !== 'States.Timeout'));
}

/** The seconds before retry `attempt` (1 for the first retry) of a Retrier, before jitter. */
export function retryDelaySeconds(r: Retrier, attempt: number): number {
  const interval = r.IntervalSeconds ?? 1;
  const rate = r.BackoffRate ?? 2;
  const delay = interval * rate ** (attempt - 1);
  return r.MaxDelaySeconds === undefined ? delay : Math.min(delay, r.MaxDelaySeconds);
}

/** Attempt counts of one state's Retriers, by Retrier index. */
export class RetryCounter {
  private readonly used: number[];
  constructor(private readonly retriers: readonly Retrier[]) {
    this.used = retriers.map(() => 0);
  }

  /** Retries so far, over all Retriers (`$$.State.RetryCount`). */
  get total(): number {
    return this.used.reduce((a, b) => a + b, 0);
  }

  /** The retry to make for this error (its Retrier counted), or undefined: the first matching Retrier is used up, or none matches. */
  next(err: StatesError): { attempt: number; delaySeconds: number; jitter: 'FULL' | 'NONE' } | undefined {
    const i = this.retriers.findIndex((r) => errorMatches(r.ErrorEquals, err));
    if (i < 0) return undefined;
    const r = this.retriers[i]!;
    if (this.used[i]! >= (r.MaxAttempts ?? 3)) return undefined;
    const attempt = ++this.used[i]!;
    return { attempt, delaySeconds: retryDelaySeconds(r, attempt), jitter: r.JitterStrategy ?? 'NONE' };
  }
}

/** The first Catcher that names the error. */
export function findCatcher(catchers: readonly Catcher[] | undefined, err: StatesError): Catcher | undefined {
  return catchers?.find((c) => errorMatches(c.ErrorEquals, err));
}
