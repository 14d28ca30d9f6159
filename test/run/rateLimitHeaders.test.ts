import { describe, expect, it } from 'vitest';
import { seededRandom } from '../../lib/core/hash.js';
import { estimatePromptTokens } from '../../lib/pricing/pricing.js';
import { ProviderCallError } from '../../lib/providers/errors.js';
import type { RateLimitHints } from '../../lib/providers/rateLimits.js';
import { classifyProviderError } from '../../lib/providers/sdkErrors.js';
import type { GenerateRequest, GenerateResult, ModelProvider } from '../../lib/providers/types.js';
import { RateLimiters, withRateLimit } from '../../lib/run/RateLimiter.js';
import { FakeClock, flush } from '../helpers/fakeClock.js';

// The admission discount (lib/run/admissionOffset.ts) as withRateLimit applies it: the headers a
// reply reports through the shared onRateLimitHints callback, matched to their call.

const ID = 'openai/m';
const LIMIT = 1_000_000;
const ok: GenerateResult = { text: 'Yes.', finish_reason: 'stop', usage: { input_tokens: 1, output_tokens: 1 } };
const req = (estimate: number): GenerateRequest => ({ messages: [{ role: 'user', content: String(estimate) }], settings: {} });
const estimateOf = (r: GenerateRequest) => Number(r.messages[0]!.content);
const hints = (deficit: number): RateLimitHints => ({ limitTokens: LIMIT, remainingTokens: LIMIT - deficit });

describe('withRateLimit and the admission headers', () => {
  it("matches each reply's headers to its own call, whatever order the replies come back in", async () => {
    const clock = new FakeClock();
    const pool = new RateLimiters({ initialFill: 1, now: clock.now, sleep: clock.sleep });
    const limiter = pool.get(ID, { tpm: 1e9 });
    // The server counts 10 under an estimate of 1,000 and 5 under one of 500. Swapped between
    // the two calls, the headers would show a deficit of 495 for a call estimated at 1,000.
    const answer: (() => void)[] = [];
    const inner: ModelProvider = {
      id: ID,
      simulated: false,
      classifyError: classifyProviderError,
      generate: async (r) => {
        await new Promise<void>((resolve) => answer.push(resolve));
        const e = estimateOf(r);
        pool.observe(ID, hints(e - (e === 1000 ? 10 : 5)));
        return ok;
      },
    };
    const p = withRateLimit(inner, limiter, estimateOf);
    for (let i = 0; i < 40; i++) {
      const both = [p.generate(req(1000)), p.generate(req(500))];
      await flush();
      answer.splice(0).reverse().forEach((a) => a());
      await Promise.all(both);
      await clock.advance(500);
    }
    expect(limiter.admissionDiscount(1000)).toBe(10);
    expect(limiter.admissionDiscount(500)).toBe(10);
    const taken: number[] = [];
    const acquire = limiter.acquire.bind(limiter);
    limiter.acquire = (tokens, signal) => (taken.push(tokens), acquire(tokens, signal));
    const last = p.generate(req(1000));
    await flush();
    answer.splice(0).forEach((a) => a());
    await last;
    expect(taken).toEqual([990]);
  });

  it('learns nothing from a call that failed or sent several requests', async () => {
    const clock = new FakeClock();
    const pool = new RateLimiters({ initialFill: 1, now: clock.now, sleep: clock.sleep });
    const limiter = pool.get(ID, { tpm: 1e9 });
    let mode: 'fail' | 'twice' = 'fail';
    const inner: ModelProvider = {
      id: ID,
      simulated: false,
      classifyError: classifyProviderError,
      generate: async () => {
        await flush();
        // Both would show a margin of 10 if they were taken as one admitted call.
        pool.observe(ID, hints(990));
        if (mode === 'fail') throw new ProviderCallError(`${ID}: HTTP 500`, ID, 'server_error', true, 500);
        pool.observe(ID, hints(990));
        return ok;
      },
    };
    const p = withRateLimit(inner, limiter, estimateOf);
    for (let i = 0; i < 40; i++) {
      await p.generate(req(1000)).catch(() => undefined);
      mode = mode === 'fail' ? 'twice' : 'fail';
      await clock.advance(500);
    }
    expect(limiter.admissionDiscount(1000)).toBe(0);
  });

  it("paces a server that admits by characters near its ceiling without a 429, when the calls' margins differ", async () => {
    // A server in the bench's image (bench/rate-limit.ts): TPM enforced over one second, a call
    // costing its characters / 4 + max_tokens, headers taken at admission, answers after
    // 0.3-1.5 s. The estimate adds 3 + 4 tokens a message: the margin of a one-message call is 7,
    // that of a six-message call 27. The discount follows the largest margin seen, so one-message
    // calls, four in five, are undercounted by 20 tokens, more than the 0.5 % the utilization
    // leaves: only the feedback (the discount falls once the server's deficit stays up) keeps the
    // server's allowance from running out.
    const TPM = 240_000;
    const rate = TPM / 60_000;
    const clock = new FakeClock();
    const pool = new RateLimiters({ now: clock.now, sleep: clock.sleep });
    const limiter = pool.get(ID, { tpm: TPM });
    const rand = seededRandom(7);
    let deficit = 0;
    let last = 0;
    let admittedTokens = 0;
    let rejected = 0;
    const serverCost = (r: GenerateRequest) => r.messages.reduce((n, m) => n + Math.ceil(m.content.length / 4), 0) + (r.settings.max_tokens ?? 0);
    const estimate = (r: GenerateRequest) => estimatePromptTokens(r.messages, 'en') + (r.settings.max_tokens ?? 0);
    const inner: ModelProvider = {
      id: ID,
      simulated: false,
      classifyError: classifyProviderError,
      generate: async (r) => {
        deficit = Math.max(0, deficit - (clock.t - last) * rate);
        last = clock.t;
        const cost = serverCost(r);
        if (TPM / 60 - deficit < Math.min(cost, TPM / 60)) rejected++;
        else {
          deficit += cost;
          admittedTokens += cost;
        }
        const atAdmission = hints(Math.ceil(deficit));
        await clock.sleep(300 + 1200 * rand(), new AbortController().signal);
        pool.observe(ID, atAdmission);
        return ok;
      },
    };
    const p = withRateLimit(inner, limiter, estimate);
    let discounted = 0;
    const call = (): GenerateRequest => {
      const text = 'word '.repeat(1000 + Math.floor(rand() * 800));
      const turns = rand() < 0.8 ? 1 : 6;
      return { messages: Array.from({ length: turns }, (_, i) => ({ role: 'user' as const, content: i === turns - 1 ? text : 'Yes.' })), settings: { max_tokens: 256 } };
    };
    let undercounted = 0;
    let running = true;
    const worker = async () => {
      while (running) {
        const r = call();
        if (estimate(r) - 27 < serverCost(r)) undercounted++;
        if (limiter.admissionDiscount(estimate(r)) > 0) discounted++;
        await p.generate(r);
      }
    };
    const workers = Promise.all(Array.from({ length: 16 }, worker));
    await clock.advance(60_000);
    const afterFirstMinute = admittedTokens;
    const minutes = 20;
    await clock.advance((minutes - 1) * 60_000);
    const steady = (admittedTokens - afterFirstMinute) / (minutes - 1) / TPM;
    running = false;
    await clock.advance(60_000);
    await workers;

    expect(undercounted).toBeGreaterThan(500);
    expect(discounted).toBeGreaterThan(500);
    expect({ rejected, steady }).toEqual({ rejected: 0, steady: expect.closeTo(0.995, 2) });
  });
});
