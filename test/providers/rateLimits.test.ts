import { describe, expect, it } from 'vitest';
import { parseDurationMs, parseRateLimitHeaders, retryAfterMs } from '../../lib/providers/rateLimits.js';
import { redactSecret, scrubError } from '../../lib/providers/sdkErrors.js';

const NOW = Date.parse('2026-01-01T00:00:00Z');

describe('parseDurationMs', () => {
  it("reads OpenAI's reset durations", () => {
    expect(parseDurationMs('1s')).toBe(1000);
    expect(parseDurationMs('6m0s')).toBe(360_000);
    expect(parseDurationMs('20ms')).toBe(20);
    expect(parseDurationMs('1h2m3.5s')).toBe(3_723_500);
    expect(parseDurationMs('0.5')).toBe(500);
    expect(parseDurationMs('soon')).toBeUndefined();
    expect(parseDurationMs('5x')).toBeUndefined();
  });
});

describe('parseRateLimitHeaders', () => {
  it('reads the x-ratelimit headers', () => {
    const h = new Headers({
      'x-ratelimit-limit-requests': '10000',
      'x-ratelimit-remaining-requests': '9999',
      'x-ratelimit-reset-requests': '6ms',
      'x-ratelimit-limit-tokens': '30000000',
      'x-ratelimit-remaining-tokens': '29999955',
      'x-ratelimit-reset-tokens': '0s',
    });
    expect(parseRateLimitHeaders(h, NOW)).toEqual({
      limitRequests: 10000,
      remainingRequests: 9999,
      resetRequestsMs: 6,
      limitTokens: 30_000_000,
      remainingTokens: 29_999_955,
      resetTokensMs: 0,
    });
  });

  it("reads Anthropic's headers, resets given as instants", () => {
    const h = { 'anthropic-ratelimit-requests-remaining': '3', 'anthropic-ratelimit-requests-reset': '2026-01-01T00:00:30Z', 'anthropic-ratelimit-tokens-limit': '80000' };
    expect(parseRateLimitHeaders(h, NOW)).toEqual({ remainingRequests: 3, resetRequestsMs: 30_000, limitTokens: 80_000 });
  });

  it('is undefined without rate-limit headers and ignores values that are not counts', () => {
    expect(parseRateLimitHeaders(new Headers({ 'content-type': 'application/json' }), NOW)).toBeUndefined();
    expect(parseRateLimitHeaders({ 'x-ratelimit-remaining-requests': 'lots', 'x-ratelimit-limit-requests': '-1' }, NOW)).toBeUndefined();
  });
});

describe('retryAfterMs', () => {
  it('prefers retry-after-ms, then retry-after as seconds or as an HTTP date', () => {
    expect(retryAfterMs(new Headers({ 'retry-after-ms': '250', 'retry-after': '9' }), NOW)).toBe(250);
    expect(retryAfterMs(new Headers({ 'retry-after': '2' }), NOW)).toBe(2000);
    expect(retryAfterMs(new Headers({ 'retry-after': 'Thu, 01 Jan 2026 00:00:05 GMT' }), NOW)).toBe(5000);
    expect(retryAfterMs(new Headers({ 'retry-after': 'Wed, 31 Dec 2025 00:00:05 GMT' }), NOW)).toBe(0);
    expect(retryAfterMs(new Headers({ 'retry-after': 'later' }), NOW)).toBeUndefined();
    expect(retryAfterMs(new Headers(), NOW)).toBeUndefined();
  });
});

describe('redaction', () => {
  it('removes a secret from text and from an error, its body, its headers and its causes', () => {
    expect(redactSecret('Bearer abcd1234 and abcd1234', ['abcd1234'])).toBe('Bearer [redacted] and [redacted]');
    // too short to redact safely
    expect(redactSecret('abc', ['abc'])).toBe('abc');
    const inner = new Error('inner abcd1234');
    const err = Object.assign(new Error('outer abcd1234', { cause: inner }), {
      error: { message: ['x abcd1234'] },
      headers: new Headers({ 'x-echo': 'abcd1234' }),
    });
    scrubError(err, ['abcd1234']);
    expect(err.message).toBe('outer [redacted]');
    expect(err.stack).not.toContain('abcd1234');
    expect(err.error).toEqual({ message: ['x [redacted]'] });
    expect(err.headers.get('x-echo')).toBe('[redacted]');
    expect((err.cause as Error).message).toBe('inner [redacted]');
  });
});
