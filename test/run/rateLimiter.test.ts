import { describe, expect, it } from 'vitest';
import { ProviderCallError } from '../../lib/providers/errors.js';
import { classifyProviderError } from '../../lib/providers/sdkErrors.js';
import type { GenerateRequest, ModelProvider } from '../../lib/providers/types.js';
import { callWithRetry } from '../../lib/run/callWithRetry.js';
import type { Attempt } from '../../lib/run/callWithRetry.js';
import { RateLimiter, RateLimiters, withRateLimit } from '../../lib/run/RateLimiter.js';
import type { RateLimiterOptions } from '../../lib/run/RateLimiter.js';
import { FakeClock, flush } from '../helpers/fakeClock.js';

function setup(limits: ConstructorParameters<typeof RateLimiter>[0], options: RateLimiterOptions = {}) {
  const clock = new FakeClock();
  const limiter = new RateLimiter(limits, { utilization: 1, initialFill: 1, now: clock.now, sleep: clock.sleep, ...options });
  const done: number[] = [];
  const start = (n: number, tokens = 0, signal?: AbortSignal) => {
    const ps: Promise<void>[] = [];
    for (let i = 0; i < n; i++) ps.push(limiter.acquire(tokens, signal).then(() => void done.push(clock.t)));
    return ps;
  };
  return { clock, limiter, done, start };
}

describe('RateLimiter', () => {
  it('lets a one-second burst through, then paces requests at the RPM', async () => {
    const { clock, done, start } = setup({ rpm: 600 });
    void start(25);
    await clock.advance(0);
    expect(done).toHaveLength(10);
    await clock.advance(1000);
    expect(done).toHaveLength(20);
    // one request every 100 ms after the burst
    expect(done.slice(10)).toEqual([100, 200, 300, 400, 500, 600, 700, 800, 900, 1000]);
    await clock.advance(500);
    expect(done).toHaveLength(25);
  });

  it('starts empty by default: what is admitted before the first calls land is at most one burst', async () => {
    const { clock, done, start } = setup({ rpm: 600 }, { initialFill: undefined });
    void start(25);
    await clock.advance(0);
    expect(done).toHaveLength(0);
    await clock.advance(1000);
    // 10 a second from the start, never the 10 of a full bucket on top
    expect(done).toEqual([100, 200, 300, 400, 500, 600, 700, 800, 900, 1000]);
    expect(() => new RateLimiter({ rpm: 1 }, { initialFill: 2 })).toThrow(/initialFill/);
  });

  it('aims below the limit by the utilization factor', async () => {
    const { clock, done, start } = setup({ rpm: 600 }, { utilization: 0.5 });
    void start(10);
    await clock.advance(0);
    expect(done).toHaveLength(5);
    await clock.advance(1000);
    expect(done).toHaveLength(10);
  });

  it('paces tokens per minute, and lets a request larger than the bucket go once it is full', async () => {
    const { clock, done, start } = setup({ tpm: 6000 }); // 100 tokens a second, bucket of 100
    void start(1, 60);
    void start(1, 60);
    await clock.advance(0);
    expect(done).toEqual([0]);
    await clock.advance(199);
    expect(done).toEqual([0]);
    await clock.advance(1);
    expect(done).toEqual([0, 200]);
    void start(1, 500);
    await clock.advance(999);
    expect(done).toHaveLength(2);
    await clock.advance(1);
    expect(done).toEqual([0, 200, 1200]);
    // the big request left the bucket in debt: 400 tokens to pay back before the next 10
    void start(1, 10);
    await clock.advance(4099);
    expect(done).toHaveLength(3);
    await clock.advance(1);
    expect(done).toEqual([0, 200, 1200, 5300]);
  });

  it('serves callers in order: small requests do not overtake a large one', async () => {
    const { clock, limiter } = setup({ tpm: 6000 });
    const order: string[] = [];
    await limiter.acquire(100);
    void limiter.acquire(80).then(() => order.push('big'));
    void limiter.acquire(1).then(() => order.push('small'));
    await clock.advance(799);
    expect(order).toEqual([]);
    await clock.advance(1);
    expect(order).toEqual(['big']);
    await clock.advance(10);
    expect(order).toEqual(['big', 'small']);
  });

  it('with no limits admits everything at once', async () => {
    const { clock, done, start } = setup({});
    void start(1000, 1e6);
    await clock.advance(0);
    expect(done).toHaveLength(1000);
  });

  it("lowers the allowance to what the provider's headers say remains, and the rate to the announced limit", async () => {
    const { clock, limiter, done, start } = setup({ rpm: 600 });
    limiter.observe({ remainingRequests: 0 });
    void start(1);
    await clock.advance(99);
    expect(done).toHaveLength(0);
    await clock.advance(1);
    expect(done).toEqual([100]);

    limiter.observe({ limitRequests: 60 }); // lower than the campaign's 600: one a second
    expect(limiter.limits).toEqual({ rpm: 60 });
    void start(2);
    await clock.advance(0);
    // the bucket was cut to the new capacity (1) and refilled over 0 ms: nothing left yet
    expect(done).toHaveLength(1);
    await clock.advance(1000);
    expect(done).toHaveLength(2);
    await clock.advance(1000);
    expect(done).toHaveLength(3);

    limiter.observe({ limitRequests: 6000 }); // a higher announced limit does not raise the campaign's
    expect(limiter.limits).toEqual({ rpm: 600 });
  });

  it('paces by an announced limit when the campaign set none', async () => {
    const { clock, limiter, done, start } = setup({});
    limiter.observe({ limitTokens: 60_000, remainingTokens: 0 });
    expect(limiter.limits).toEqual({ tpm: 60_000 });
    void start(1, 500);
    await clock.advance(499);
    expect(done).toHaveLength(0);
    await clock.advance(1);
    expect(done).toEqual([500]);
  });

  it('pause() holds every caller for a retry-after', async () => {
    const { clock, limiter, done, start } = setup({ rpm: 600 });
    limiter.pause(2000);
    void start(3);
    await clock.advance(1999);
    expect(done).toHaveLength(0);
    await clock.advance(1);
    expect(done).toEqual([2000, 2000, 2000]);
  });

  it('a caller that aborts while queued is rejected with the reason and leaves the queue', async () => {
    const { clock, limiter, done, start } = setup({ rpm: 60 });
    await limiter.acquire(0);
    const controller = new AbortController();
    const [aborted] = start(1, 0, controller.signal);
    void start(1);
    expect(limiter.queued).toBe(2);
    controller.abort(new Error('run stopped'));
    await expect(aborted).rejects.toThrow('run stopped');
    expect(limiter.queued).toBe(1);
    await clock.advance(1000);
    expect(done).toEqual([1000]);
    await expect(limiter.acquire(0, AbortSignal.abort(new Error('already')))).rejects.toThrow('already');
  });

  it('rejects bad limits and token counts', async () => {
    expect(() => new RateLimiter({ rpm: 0 })).toThrow(/rpm must be a positive number, got 0/);
    expect(() => new RateLimiter({ tpm: Number.NaN })).toThrow(/tpm must be a positive number/);
    expect(() => new RateLimiter({}, { utilization: 1.5 })).toThrow(/utilization/);
    await expect(new RateLimiter({}).acquire(-1)).rejects.toThrow(/estimatedTokens must be a finite count/);
  });
});

describe('RateLimiters', () => {
  it('shares one limiter per provider model, routes hints by key, and keeps the tighter limits', async () => {
    const clock = new FakeClock();
    const pool = new RateLimiters({ utilization: 1, initialFill: 1, now: clock.now, sleep: clock.sleep });
    const a = pool.get('openai/gpt-4.1-mini', { rpm: 600 });
    expect(pool.get('openai/gpt-4.1-mini', { rpm: 300, tpm: 1000 })).toBe(a);
    expect(a.limits).toEqual({ rpm: 300, tpm: 1000 });
    const b = pool.get('anthropic/claude-haiku-4-5', { rpm: 50 });
    pool.observe('anthropic/claude-haiku-4-5', { limitRequests: 40 });
    pool.observe('unknown/model', { limitRequests: 1 });
    expect(b.limits).toEqual({ rpm: 40 });
    expect(a.limits).toEqual({ rpm: 300, tpm: 1000 });
  });
});

describe('withRateLimit', () => {
  it('takes a turn for every attempt and pauses the model on a 429 retry-after', async () => {
    const clock = new FakeClock();
    const limiter = new RateLimiter({ rpm: 600, tpm: 60_000 }, { utilization: 1, initialFill: 1, now: clock.now, sleep: clock.sleep });
    const calls: number[] = [];
    const inner: ModelProvider = {
      id: 'openai/m',
      simulated: false,
      classifyError: classifyProviderError,
      generate: async () => {
        calls.push(clock.t);
        if (calls.length === 1) throw new ProviderCallError('openai/m: HTTP 429', 'openai/m', 'rate_limit', true, 429, 3000);
        return { text: 'Yes.', finish_reason: 'stop', usage: { input_tokens: 10, output_tokens: 2 } };
      },
    };
    const estimates: number[] = [];
    const p = withRateLimit(inner, limiter, (req: GenerateRequest) => {
      const n = 10 + (req.settings.max_tokens ?? 0);
      estimates.push(n);
      return n;
    });
    expect([p.id, p.simulated]).toEqual(['openai/m', false]);
    const req: GenerateRequest = { messages: [{ role: 'user', content: 'hi' }], settings: { max_tokens: 90 } };
    const err = await p.generate(req).catch((e: unknown) => e);
    expect(p.classifyError(err)).toMatchObject({ retry: true, kind: 'rate_limit', retryAfterMs: 3000 });
    let done = false;
    void p.generate(req).then(() => (done = true));
    await clock.advance(2999);
    expect(done).toBe(false);
    await clock.advance(1);
    expect(done).toBe(true);
    expect(calls).toEqual([0, 3000]);
    // The prompt is estimated once per request object, however many attempts.
    expect(estimates).toEqual([100]);
  });

  it('learns from the replies when the provider counts more prompt tokens than estimated, never fewer', async () => {
    // prepare: the provider counts 10 % more prompt tokens than estimated (1,000 → 1,100)
    const limiter = new RateLimiter({ tpm: 600_000 }, { utilization: 1, initialFill: 1 });
    const inner: ModelProvider = {
      id: 'openai/m',
      simulated: false,
      classifyError: classifyProviderError,
      generate: async () => ({ text: 'Yes.', finish_reason: 'stop', usage: { input_tokens: 1100, output_tokens: 2 } }),
    };
    const p = withRateLimit(inner, limiter, (req) => 1000 + (req.settings.max_tokens ?? 0));
    // act: four replies (4,000 estimated tokens: under the 5,000 the correction waits for), then two more
    for (let i = 0; i < 4; i++) await p.generate({ messages: [{ role: 'user', content: 'hi' }], settings: { max_tokens: 50 } });
    const before = limiter.promptScale;
    for (let i = 0; i < 2; i++) await p.generate({ messages: [{ role: 'user', content: 'hi' }], settings: { max_tokens: 50 } });
    // assess: max_tokens is not part of the ratio; the scale is bounded above
    expect(before).toBe(1);
    expect(limiter.promptScale).toBeCloseTo(1.1, 12);
    limiter.calibrate(10, 1_000_000);
    expect(limiter.promptScale).toBe(1.25);
    // A provider counting fewer than the estimate (its admission counts characters too) never lowers it.
    const lower = new RateLimiter({ tpm: 600_000 });
    lower.calibrate(10_000, 5_000);
    expect(lower.promptScale).toBe(1);
    lower.calibrate(1, Number.NaN);
    expect(lower.promptScale).toBe(1);
  });

  it("does not count the time a call waits in the limiter's queue against its attempt timeout", async () => {
    // One request per minute: the second call queues for a minute of the fake clock, while the
    // real clock runs past the attempt timeout before the test lets it through.
    const clock = new FakeClock();
    const limiter = new RateLimiter({ rpm: 1 }, { utilization: 1, initialFill: 1, now: clock.now, sleep: clock.sleep });
    const abortedAtSend: boolean[] = [];
    const inner: ModelProvider = {
      id: 'openai/m',
      simulated: false,
      classifyError: classifyProviderError,
      generate: async (_req, signal) => {
        abortedAtSend.push(signal?.aborted ?? false);
        if (signal?.aborted) throw new Error('sent with an expired timeout');
        return { text: 'Yes.', finish_reason: 'stop', usage: { input_tokens: 1, output_tokens: 1 } };
      },
    };
    const p = withRateLimit(inner, limiter, () => 1);
    const policy = { maxAttempts: 2, baseDelayMs: 1, maxDelayMs: 1, timeoutMs: 5 };
    const req = (): GenerateRequest => ({ messages: [{ role: 'user', content: 'hi' }], settings: {} });
    const seen: Attempt[] = [];

    const first = await callWithRetry(p, req(), policy, (a) => seen.push(a));
    let second: Attempt | undefined;
    // Created after callWithRetry's timer with the same delay, so it fires after it.
    const later = AbortSignal.timeout(policy.timeoutMs);
    void callWithRetry(p, req(), policy, (a) => seen.push(a)).then((a) => (second = a));
    await new Promise((resolve) => later.addEventListener('abort', resolve, { once: true }));
    await flush();
    expect(second).toBeUndefined();
    expect(limiter.queued).toBe(1);
    await clock.advance(60_000);
    await flush();

    expect(first).toMatchObject({ ok: true, attempt: 1 });
    expect(second).toMatchObject({ ok: true, attempt: 1 });
    expect(seen.map((a) => a.ok)).toEqual([true, true]);
    expect(abortedAtSend).toEqual([false, false]);
  });

  it('returns an unsent aborted attempt when the run aborts while the call is queued', async () => {
    const clock = new FakeClock();
    const limiter = new RateLimiter({ rpm: 1 }, { utilization: 1, initialFill: 1, now: clock.now, sleep: clock.sleep });
    let calls = 0;
    const inner: ModelProvider = {
      id: 'openai/m',
      simulated: false,
      classifyError: classifyProviderError,
      generate: async () => {
        calls++;
        return { text: 'Yes.', finish_reason: 'stop', usage: { input_tokens: 1, output_tokens: 1 } };
      },
    };
    const p = withRateLimit(inner, limiter, () => 1);
    const policy = { maxAttempts: 3, baseDelayMs: 1, maxDelayMs: 1, timeoutMs: 60_000 };
    const req: GenerateRequest = { messages: [{ role: 'user', content: 'hi' }], settings: {} };
    await p.generate(req);
    const controller = new AbortController();
    const seen: Attempt[] = [];
    const pending = callWithRetry(p, req, policy, (a) => seen.push(a), controller.signal);
    await flush();
    controller.abort(new Error('stopped'));

    const a = await pending;
    expect(a).toMatchObject({ ok: false, attempt: 1, errorClass: 'aborted', retryable: true });
    expect(seen).toEqual([]);
    expect(calls).toBe(1);
    expect(limiter.queued).toBe(0);
  });
});
