import { AsyncLocalStorage } from 'node:async_hooks';
import type { RateLimitHints } from '../providers/rateLimits.js';
import type { GenerateRequest, ModelProvider } from '../providers/types.js';
import { AdmissionOffset } from './admissionOffset.js';
import { onAbort } from './sleep.js';

/** A model's limits, as the campaign file gives them (`models[].rpm`, `models[].tpm`). */
export interface RateLimits {
  /** Requests per minute. */
  readonly rpm?: number;
  /** Tokens per minute, counted as the providers count them at admission: prompt + max_tokens. */
  readonly tpm?: number;
}

export interface RateLimiterOptions {
  /**
   * Seconds of allowance a bucket may hold, i.e. the largest burst. Default 1: providers enforce
   * per-minute limits in shorter windows (OpenAI: "60,000 RPM may be enforced as 1,000 requests
   * per second"), so a full minute's burst at start would be refused.
   */
  readonly burstSeconds?: number;
  /**
   * Share of the limit to aim at (default 0.995). The client counts a request when it sends it,
   * the server when it arrives; the headroom absorbs jitter in between. Once the client saturates
   * its limit, its bucket stays near empty while the server's fills with the headroom (0.5 % of
   * the rate per second, up to the burst), so jitter is absorbed after the first seconds; 0.97,
   * the earlier default, left 3 % of the ceiling unused for a margin needed only at the start
   * (bench/rate-limit.ts: 96 % of the ceiling, now ≥ 99 % in steady state, 0 × 429).
   */
  readonly utilization?: number;
  /**
   * How full the buckets start, as a share of the burst (default 0: empty). The client counts a
   * call when it admits it; the server when it arrives. Calls admitted while the first connections
   * are still being set up (bench/rate-limit.ts: the first ones land ~0.75 s late) arrive together,
   * and a bucket that started full would have admitted a full burst more than the server can take:
   * the one 429 of each run. Started empty, what lands together is at most one burst.
   */
  readonly initialFill?: number;
  /** Clock and timer, replaced by a fake clock in tests. */
  readonly now?: () => number;
  readonly sleep?: (ms: number, signal: AbortSignal) => Promise<void>;
}

interface Waiter {
  readonly tokens: number;
  readonly resolve: () => void;
  readonly reject: (reason: unknown) => void;
  /** Unregisters the waiter's abort callback (one listener on a shared signal, lib/run/sleep.ts). */
  off: () => void;
}

/** Estimated prompt tokens seen before the estimate is corrected (RateLimiter.promptScale). */
const CALIBRATION_MIN_TOKENS = 5_000;
/** Past this many estimated tokens the calibration sums halve, so that it follows the recent replies. */
const CALIBRATION_WINDOW_TOKENS = 500_000;
const MAX_PROMPT_SCALE = 1.25;

/**
 * The hints reported while one call of withRateLimit is in flight. The adapters report headers
 * through a callback shared by all calls (`onRateLimitHints`, routed by RateLimiters.observe);
 * the call's async context tells which call a reply's headers belong to.
 */
interface ReplyScope {
  readonly limiter: RateLimiter;
  readonly hints: RateLimitHints[];
}
const replyScope = new AsyncLocalStorage<ReplyScope>();

const realSleep = (ms: number, signal: AbortSignal) =>
  new Promise<void>((resolve) => {
    if (signal.aborted) return resolve();
    const t = setTimeout(done, ms);
    function done() {
      clearTimeout(t);
      signal.removeEventListener('abort', done);
      resolve();
    }
    signal.addEventListener('abort', done, { once: true });
  });

/** A token bucket: `level` units, refilled at `rate` per ms up to `capacity`. Unlimited when rate is Infinity. */
class Bucket {
  level: number;
  constructor(
    public rate: number,
    public capacity: number,
  ) {
    this.level = capacity;
  }
  refill(elapsedMs: number): void {
    if (Number.isFinite(this.rate)) this.level = Math.min(this.capacity, this.level + elapsedMs * this.rate);
  }
  /**
   * Ms until `amount` can be taken. A request larger than the whole bucket goes once the bucket is
   * full (and leaves it in debt), so that no request waits forever.
   */
  waitFor(amount: number): number {
    if (!Number.isFinite(this.rate)) return 0;
    const need = Math.min(amount, this.capacity);
    return this.level >= need ? 0 : (need - this.level) / this.rate;
  }
  take(amount: number): void {
    if (Number.isFinite(this.rate)) this.level -= amount;
  }
}

/**
 * Paces the calls to one provider model under its requests-per-minute and tokens-per-minute
 * limits: two token buckets, refined by the provider's
 * `x-ratelimit-*` headers (`observe`, and the admission discount: `noteReply`) and paused by a
 * 429's `retry-after` (`pause`). Callers are served first come, first served, so a large request
 * is not starved by small ones. Concurrency is bounded elsewhere (Semaphore); this only decides
 * when a call may start.
 */
export class RateLimiter {
  #configured: RateLimits;
  readonly #burstSeconds: number;
  readonly #utilization: number;
  readonly #initialFill: number;
  readonly #now: () => number;
  readonly #sleep: (ms: number, signal: AbortSignal) => Promise<void>;
  readonly #requests: Bucket;
  readonly #tokens: Bucket;
  readonly #queue: Waiter[] = [];
  #last: number;
  #pausedUntil = 0;
  #pumping = false;
  #wake = new AbortController();
  #limits: RateLimits;
  #promptEstimated = 0;
  #promptActual = 0;
  readonly #offset: AdmissionOffset;

  constructor(limits: RateLimits, options: RateLimiterOptions = {}) {
    for (const [name, v] of Object.entries(limits))
      if (v !== undefined && !(Number.isFinite(v) && v > 0)) throw new RangeError(`RateLimiter: ${name} must be a positive number, got ${v}`);
    this.#configured = limits;
    this.#limits = limits;
    this.#burstSeconds = options.burstSeconds ?? 1;
    this.#utilization = options.utilization ?? 0.995;
    this.#initialFill = options.initialFill ?? 0;
    if (!(this.#initialFill >= 0 && this.#initialFill <= 1)) throw new RangeError(`RateLimiter: initialFill must be in [0, 1], got ${this.#initialFill}`);
    if (!(this.#burstSeconds > 0)) throw new RangeError(`RateLimiter: burstSeconds must be positive, got ${this.#burstSeconds}`);
    if (!(this.#utilization > 0 && this.#utilization <= 1)) throw new RangeError(`RateLimiter: utilization must be in (0, 1], got ${this.#utilization}`);
    this.#now = options.now ?? (() => performance.now());
    this.#sleep = options.sleep ?? realSleep;
    this.#last = this.#now();
    this.#offset = new AdmissionOffset(this.#last);
    this.#requests = new Bucket(Infinity, Infinity);
    this.#tokens = new Bucket(Infinity, Infinity);
    this.#configure(this.#requests, limits.rpm);
    this.#configure(this.#tokens, limits.tpm);
  }

  /** The limits in force: the campaign's, lowered by what the provider's headers announced. */
  get limits(): RateLimits {
    return this.#limits;
  }

  /**
   * How many tokens a prompt the estimate put at one token really has, learnt from the usage of
   * the replies (`calibrate`): 1 until a few thousand tokens have been seen, then their ratio,
   * within [1, 1.25]. Only upwards: where the provider counts more than the estimate (about four
   * characters a token; scripts that tokenise densely), admitting at the estimate draws 429s.
   * Never downwards: providers that admit by an estimate of their own count characters too
   * (OpenAI: "based on character count"), and their reported prompt_tokens, usually fewer, would
   * then undercount what they admit. The bound keeps a strange reply from throwing the pacing off.
   */
  get promptScale(): number {
    if (this.#promptEstimated < CALIBRATION_MIN_TOKENS) return 1;
    return Math.min(MAX_PROMPT_SCALE, Math.max(1, this.#promptActual / this.#promptEstimated));
  }

  /**
   * Notes a reply's prompt tokens as the provider counted them beside the estimate for its prompt.
   * Recent replies weigh most: the sums halve past CALIBRATION_WINDOW_TOKENS.
   */
  calibrate(estimatedPromptTokens: number, actualPromptTokens: number): void {
    if (!(estimatedPromptTokens > 0 && actualPromptTokens > 0 && Number.isFinite(actualPromptTokens))) return;
    this.#promptEstimated += estimatedPromptTokens;
    this.#promptActual += actualPromptTokens;
    if (this.#promptEstimated > CALIBRATION_WINDOW_TOKENS) {
      this.#promptEstimated /= 2;
      this.#promptActual /= 2;
    }
  }

  /**
   * Tokens to take off the admission cost of a call estimated at `estimate` (prompt + max_tokens):
   * how many fewer the provider's `x-ratelimit-*-tokens` headers showed it counting at admission
   * (lib/run/admissionOffset.ts); 0 until ten seconds of replies have shown it, at most 2 %.
   */
  admissionDiscount(estimate: number): number {
    return this.#offset.discount(estimate, this.#now());
  }

  /**
   * Notes the headers of one successful call estimated at `estimate`, for admissionDiscount. Only a
   * call that reported exactly one set of headers with both the token limit and the remaining
   * tokens tells what the server counted for it.
   */
  noteReply(estimate: number, hints: readonly RateLimitHints[]): void {
    const h = hints.length === 1 ? hints[0]! : undefined;
    if (h?.limitTokens === undefined || h.remainingTokens === undefined) return;
    this.#offset.note(estimate, h.limitTokens - h.remainingTokens, this.#now());
  }

  /** Callers waiting for their turn. */
  get queued(): number {
    return this.#queue.length;
  }

  /**
   * Resolves when a call estimated at `estimatedTokens` (prompt + max_tokens) may start; the call
   * is counted then. Rejects with the signal's reason if it aborts first.
   */
  acquire(estimatedTokens: number, signal?: AbortSignal): Promise<void> {
    if (!(Number.isFinite(estimatedTokens) && estimatedTokens >= 0)) {
      return Promise.reject(new RangeError(`RateLimiter.acquire: estimatedTokens must be a finite count ≥ 0, got ${estimatedTokens}`));
    }
    if (signal?.aborted) return Promise.reject(signal.reason);
    return new Promise<void>((resolve, reject) => {
      const waiter: Waiter = { tokens: estimatedTokens, resolve, reject, off: () => {} };
      // Hundreds of callers wait on the run's one signal at high concurrency: one listener for all.
      if (signal) {
        waiter.off = onAbort(signal, () => {
          const i = this.#queue.indexOf(waiter);
          if (i >= 0) this.#queue.splice(i, 1);
          reject(signal.reason);
          this.#wake.abort();
        });
      }
      this.#queue.push(waiter);
      void this.#pump();
    });
  }

  /**
   * Refines the buckets from a response's rate-limit headers: a lower announced limit lowers the
   * rate, and the allowance left is never above what the server says remains (another process
   * sharing the key, or token counts above the estimates, show up here). OpenAI's remaining
   * counts down from the per-minute limit, so this bites only once less than one burst is left.
   * Headers that come back inside a call of withRateLimit are also kept for that call (noteReply).
   */
  observe(hints: RateLimitHints): void {
    const scope = replyScope.getStore();
    if (scope?.limiter === this) scope.hints.push(hints);
    this.#refill();
    const rpm = lower(this.#configured.rpm, hints.limitRequests);
    const tpm = lower(this.#configured.tpm, hints.limitTokens);
    if (rpm !== this.#limits.rpm) this.#configure(this.#requests, rpm);
    if (tpm !== this.#limits.tpm) this.#configure(this.#tokens, tpm);
    this.#limits = lowerLimits(this.#configured, { ...(rpm !== undefined ? { rpm } : {}), ...(tpm !== undefined ? { tpm } : {}) });
    if (hints.remainingRequests !== undefined) this.#requests.level = Math.min(this.#requests.level, hints.remainingRequests);
    if (hints.remainingTokens !== undefined) this.#tokens.level = Math.min(this.#tokens.level, hints.remainingTokens);
    this.#wake.abort();
  }

  /** Lowers the configured limits (a second campaign entry on the same model with tighter ones). */
  tighten(limits: RateLimits): void {
    this.#configured = { ...lowerLimits(this.#configured, limits) };
    this.observe({});
  }

  /** Holds every caller for `ms` (a 429's retry-after): the provider has asked the whole key to wait. */
  pause(ms: number): void {
    if (!(ms > 0)) return;
    this.#pausedUntil = Math.max(this.#pausedUntil, this.#now() + ms);
    this.#wake.abort();
  }

  #configure(bucket: Bucket, perMinute: number | undefined): void {
    if (perMinute === undefined) {
      bucket.rate = Infinity;
      bucket.capacity = Infinity;
      bucket.level = Infinity;
      return;
    }
    const wasUnlimited = !Number.isFinite(bucket.rate);
    bucket.rate = (perMinute * this.#utilization) / 60_000;
    bucket.capacity = Math.max(1, bucket.rate * this.#burstSeconds * 1000);
    bucket.level = wasUnlimited ? bucket.capacity * this.#initialFill : Math.min(bucket.level, bucket.capacity);
  }

  #refill(): void {
    const now = this.#now();
    const elapsed = Math.max(0, now - this.#last);
    this.#last = now;
    this.#requests.refill(elapsed);
    this.#tokens.refill(elapsed);
  }

  async #pump(): Promise<void> {
    if (this.#pumping) return;
    this.#pumping = true;
    try {
      while (this.#queue.length > 0) {
        const head = this.#queue[0]!;
        this.#refill();
        const wait = Math.max(this.#pausedUntil - this.#last, this.#requests.waitFor(1), this.#tokens.waitFor(head.tokens));
        if (wait <= 0) {
          this.#queue.shift();
          this.#requests.take(1);
          this.#tokens.take(head.tokens);
          head.off();
          head.resolve();
          continue;
        }
        if (this.#wake.signal.aborted) this.#wake = new AbortController();
        await this.#sleep(Math.ceil(wait), this.#wake.signal);
      }
    } finally {
      this.#pumping = false;
    }
  }
}

function lowerLimits(a: RateLimits, b: RateLimits): RateLimits {
  const rpm = lower(a.rpm, b.rpm);
  const tpm = lower(a.tpm, b.tpm);
  return { ...(rpm !== undefined ? { rpm } : {}), ...(tpm !== undefined ? { tpm } : {}) };
}

function lower(configured: number | undefined, announced: number | undefined): number | undefined {
  if (announced === undefined || !(announced > 0)) return configured;
  return configured === undefined ? announced : Math.min(configured, announced);
}

/**
 * A provider whose calls wait for their turn in a queue. `admit` takes the turn on its own, so
 * that `callWithRetry` starts an attempt's timeout only once the call may go: time spent queued
 * behind a rate limit is not the provider being slow.
 */
export interface AdmittingProvider extends ModelProvider {
  /** Resolves when one call of `req` may start; the next `generate(req)` then goes without waiting. */
  admit(req: GenerateRequest, signal?: AbortSignal): Promise<void>;
}

/** Whether `provider` takes its turn through `admit` (see withRateLimit). */
export function isAdmitting(provider: ModelProvider): provider is AdmittingProvider {
  return typeof (provider as Partial<AdmittingProvider>).admit === 'function';
}

/**
 * Wraps a provider so that every attempt, retries included, first takes its turn from `limiter`
 * (`callWithRetry` calls `admit`, then `generate`, once per attempt; a bare `generate` takes its
 * own turn), and a 429's retry-after pauses the whole model rather than the one call.
 * `estimateTokens` gives a request's admission cost, prompt + max_tokens (`estimatePromptTokens`
 * of lib/providers/pricing.ts plus `settings.max_tokens`).
 */
export function withRateLimit(provider: ModelProvider, limiter: RateLimiter, estimateTokens: (req: GenerateRequest) => number): AdmittingProvider {
  // Turns taken by `admit` and not yet used by `generate`, per request object.
  const admitted = new WeakMap<GenerateRequest, number>();
  // The admission cost: the prompt estimate raised by what the replies' usage counted so far, plus
  // max_tokens, less what the headers showed the provider counts fewer at admission.
  // The estimate scans the prompt: once per request object, however many attempts and turns.
  const estimates = new WeakMap<GenerateRequest, { prompt: number; maxOut: number }>();
  const admission = (req: GenerateRequest): { cost: number; prompt: number; estimate: number } => {
    let e = estimates.get(req);
    if (e === undefined) {
      const estimate = estimateTokens(req);
      const maxOut = Math.min(estimate, req.settings.max_tokens ?? 0);
      e = { prompt: estimate - maxOut, maxOut };
      estimates.set(req, e);
    }
    const estimate = e.prompt + e.maxOut;
    return { cost: e.prompt * limiter.promptScale + e.maxOut - limiter.admissionDiscount(estimate), prompt: e.prompt, estimate };
  };
  return {
    id: provider.id,
    simulated: provider.simulated,
    ...(provider.endpoint !== undefined ? { endpoint: provider.endpoint } : {}),
    classifyError: (err) => provider.classifyError(err),
    async admit(req, signal) {
      await limiter.acquire(admission(req).cost, signal);
      admitted.set(req, (admitted.get(req) ?? 0) + 1);
    },
    async generate(req, signal) {
      const turns = admitted.get(req) ?? 0;
      if (turns > 0) admitted.set(req, turns - 1);
      else await limiter.acquire(admission(req).cost, signal);
      try {
        const scope: ReplyScope = { limiter, hints: [] };
        const result = await replyScope.run(scope, () => provider.generate(req, signal));
        const { prompt, estimate } = admission(req);
        limiter.calibrate(prompt, result.usage.input_tokens);
        limiter.noteReply(estimate, scope.hints);
        return result;
      } catch (err) {
        const decision = provider.classifyError(err);
        if (decision.retry && decision.kind === 'rate_limit' && decision.retryAfterMs !== undefined) limiter.pause(decision.retryAfterMs);
        throw err;
      }
    },
  };
}

/**
 * One RateLimiter per provider model, keyed by provider id (`openai/gpt-4.1-mini`): two campaign
 * entries on the same model share the provider's limit. `observe` has the signature of the
 * registry's `onRateLimitHints`, so it can be passed as is.
 */
export class RateLimiters {
  readonly #byKey = new Map<string, RateLimiter>();
  constructor(private readonly options: RateLimiterOptions = {}) {}

  /** The limiter for `key`, created with `limits` the first time (the lower limits win when entries disagree). */
  get(key: string, limits: RateLimits = {}): RateLimiter {
    const existing = this.#byKey.get(key);
    if (existing) {
      existing.tighten(limits);
      return existing;
    }
    const limiter = new RateLimiter(limits, this.options);
    this.#byKey.set(key, limiter);
    return limiter;
  }

  readonly observe = (key: string, hints: RateLimitHints): void => {
    this.#byKey.get(key)?.observe(hints);
  };
}
