import { mkdir, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { setImmediate as tick } from 'node:timers/promises';
import { describe, expect, it } from 'vitest';
import type { PromptItem } from '../../lib/core/types.js';
import { ProviderCallError, type ProviderErrorClass } from '../../lib/providers/errors.js';
import type { GenerateRequest, GenerateResult, ModelProvider, Price, RetryDecision } from '../../lib/providers/types.js';
import type { RetryPolicy } from '../../lib/run/callWithRetry.js';
import { attemptVerdict } from '../../lib/run/attemptVerdict.js';
import { runPartition } from '../../lib/run/runPartition.js';
import { keyScope, type StopState } from '../../lib/run/stopState.js';
import type { ReplyRow } from '../../lib/store/types.js';
import { localPartitionSpec, MemoryPartSink, partitionLedger, usePartitionCases, type PartitionBench, type PartitionOver } from '../helpers/partitionSpec.js';
import { replyRow } from '../helpers/replyRow.js';

// A resume re-asks items whose
// retries ran out on a transient error, never those the provider refused for good (unless
// retryFailed), and a rejected API key stops the provider's partitions with the items left pending.

const CAMPAIGN = 'permanent';
const PRICE: Price = { input_per_mtok: 2, output_per_mtok: 10 };
const RETRY: RetryPolicy = { maxAttempts: 3, baseDelayMs: 0, maxDelayMs: 0, timeoutMs: 30_000 };
const SECRET = 'sk-test-SECRET-0123456789';

const RETRYABLE: Readonly<Record<string, boolean>> = { rate_limit: true, server_error: true, refusal: false, content_filter: false, bad_request: false, auth: false, permission: false };

/**
 * Answers every item, except that `fail(itemId)` names the class of error the item gets on every
 * call (or undefined to answer). Errors are ProviderCallErrors classified as the adapters do; the
 * key never appears in their messages (adapters redact it). Counts calls per item.
 */
class ScriptedProvider implements ModelProvider {
  readonly simulated = false;
  readonly calls = new Map<string, number>();

  constructor(
    readonly id: string,
    public fail: (itemId: string) => ProviderErrorClass | undefined,
  ) {}

  async generate(req: GenerateRequest): Promise<GenerateResult> {
    const id = req.item!.item_id;
    this.calls.set(id, (this.calls.get(id) ?? 0) + 1);
    await tick();
    const errorClass = this.fail(id);
    if (errorClass) throw new ProviderCallError(`${this.id}: ${errorClass} on ${id}`, this.id, errorClass, RETRYABLE[errorClass] ?? false, 400);
    return { text: `reply to ${id}`, finish_reason: 'stop', usage: { input_tokens: 100, output_tokens: 20 } };
  }

  classifyError(err: unknown): RetryDecision {
    if (err instanceof ProviderCallError) {
      return err.retryable ? { retry: true, kind: 'transient', errorClass: err.errorClass } : { retry: false, errorClass: err.errorClass };
    }
    return { retry: false, errorClass: 'unknown' };
  }

  total(): number {
    return [...this.calls.values()].reduce((s, n) => s + n, 0);
  }
}

const cases = usePartitionCases('permanent', 60);

const BENCH: PartitionBench = { campaign: CAMPAIGN, price: PRICE, retry: RETRY, concurrency: 4, partRows: 16, readReply: () => [] };
const spec = (over: PartitionOver) => localPartitionSpec(BENCH, cases.dir, cases.items, over);
const newLedger = (runId: string) => partitionLedger(cases.dir, CAMPAIGN, runId);

const sumCost = (rows: readonly ReplyRow[]) => rows.reduce((s, r) => s + r.cost_usd, 0);
const idx = (id: string) => cases.items.findIndex((i) => i.item_id === id);

describe('attemptVerdict', () => {
  it('sorts a final attempt into done, failed (asked again), failed for good, key error or pending', () => {
    expect(attemptVerdict({ ok: true }, false)).toBe('done');
    expect(attemptVerdict({ ok: false, errorClass: 'rate_limit', retryable: true }, false)).toBe('failed');
    expect(attemptVerdict({ ok: false, errorClass: 'malformed_response', retryable: true }, false)).toBe('failed');
    for (const c of ['refusal', 'content_filter', 'bad_request', 'not_found']) expect(attemptVerdict({ ok: false, errorClass: c, retryable: false }, false)).toBe('failed_permanently');
    for (const c of ['auth', 'permission', 'payment_required']) expect(attemptVerdict({ ok: false, errorClass: c, retryable: false }, false)).toBe('key');
    expect(attemptVerdict({ ok: false, errorClass: 'refusal', retryable: false }, true)).toBe('pending');
    expect(attemptVerdict({ ok: false, errorClass: 'aborted', retryable: false }, false)).toBe('failed');
  });
});

describe('runPartition and failures on resume', () => {
  it('a resume re-asks transient failures only; retryFailed re-asks refusals; every attempt stored, paid once', async () => {
    // Items 0–5 refused, 6–8 content-filtered (permanent); 9–13 rate limited on every attempt.
    const classOf = (id: string): ProviderErrorClass | undefined => {
      const i = idx(id);
      return i < 6 ? 'refusal' : i < 9 ? 'content_filter' : i < 14 ? 'rate_limit' : undefined;
    };
    const provider = new ScriptedProvider('openai/gpt-test', classOf);
    const sink = new MemoryPartSink();
    const ledger = await newLedger('run-1');

    const first = await runPartition(spec({ runId: 'run-1', ledger, sink, provider }));
    expect(first).toMatchObject({ done: cases.items.length - 14, failed: 14, pending: 0 });
    expect(await ledger.counts(CAMPAIGN, 'generate')).toEqual({ pending: 0, done: cases.items.length - 14, failed: 14 });
    // Permanent errors are asked once, transient ones up to the retry policy.
    for (const item of cases.items.slice(0, 9)) expect(provider.calls.get(item.item_id)).toBe(1);
    for (const item of cases.items.slice(9, 14)) expect(provider.calls.get(item.item_id)).toBe(RETRY.maxAttempts);
    expect(sink.rows()).toHaveLength(provider.total());

    // The resume: the rate limit has cleared; only the rate-limited items are asked.
    const before = new Map(provider.calls);
    const second = await runPartition(spec({ runId: 'run-2', ledger, sink, provider }));
    const asked = cases.items.filter((i) => provider.calls.get(i.item_id) !== before.get(i.item_id)).map((i) => idx(i.item_id));
    expect(asked).toEqual([9, 10, 11, 12, 13]);
    expect(second).toMatchObject({ done: 0, failed: 5, pending: 0 });
    expect(sink.rows()).toHaveLength(provider.total());

    // After fixing the prompt: retryFailed asks the permanent failures (and the transient ones) again.
    provider.fail = () => undefined;
    const third = await runPartition(spec({ runId: 'run-3', ledger, sink, provider, retryFailed: true }));
    expect(third).toMatchObject({ done: 14, failed: 0, pending: 0 });
    expect(await ledger.counts(CAMPAIGN, 'generate')).toEqual({ pending: 0, done: cases.items.length, failed: 0 });
    for (const item of cases.items.slice(0, 9)) expect(provider.calls.get(item.item_id)).toBe(2);

    // Every attempt's row is stored (refusals stay counted apart from failures), and the budget
    // holds each reply's cost once.
    const rows = sink.rows();
    expect(rows).toHaveLength(provider.total());
    expect(rows.filter((r) => r.error_class === 'refusal')).toHaveLength(6);
    expect(rows.filter((r) => r.status === 'ok')).toHaveLength(cases.items.length);
    const budget = await ledger.budget(CAMPAIGN);
    expect(budget.spent_usd).toBeCloseTo(sumCost(rows), 12);
    expect(budget.reserved_usd).toBe(0);
    await ledger.close();
  });

  it('a rejected key stops every partition of that provider, leaves the items pending and names the variable, not the key', async () => {
    const provider = new ScriptedProvider('openai/gpt-test', () => 'auth');
    const sink = new MemoryPartSink();
    const ledger = await newLedger('run-1');
    const stop: StopState = {};
    const out = await runPartition(spec({ runId: 'run-1', ledger, sink, provider, stop, keyEnv: 'MY_OPENAI_KEY' }));

    // At most the calls already in flight when the first error came back (4 chunks of 4).
    expect(provider.total()).toBeGreaterThan(0);
    expect(provider.total()).toBeLessThanOrEqual(16);
    for (const n of provider.calls.values()) expect(n).toBe(1);
    // Pending in the ledger, but not for another pass of this run (the worker would loop on them).
    expect(out).toMatchObject({ done: 0, failed: 0, pending: 0, keyBlocked: cases.items.length });
    expect(await ledger.counts(CAMPAIGN, 'generate')).toEqual({ pending: cases.items.length, done: 0, failed: 0 });
    expect(out.keyFailure).toMatch(/openai\/gpt-test.*rejected the API key \(auth.*MY_OPENAI_KEY/);
    expect(out.keyFailure).not.toContain(SECRET);
    expect(stop.keyFailures?.get(keyScope({ provider, keyEnv: 'MY_OPENAI_KEY' }))).toBe(out.keyFailure);
    // The error rows are stored (the attempts happened); nothing was paid.
    expect(sink.rows().length).toBe(provider.total());
    expect((await ledger.budget(CAMPAIGN))).toMatchObject({ spent_usd: 0, reserved_usd: 0 });

    // Another partition of the same provider in this run asks nothing; another provider is not stopped.
    const calls = provider.total();
    const other = await runPartition(spec({ runId: 'run-1', ledger, sink, provider, stop, language: 'de', phase: 'judge', keyEnv: 'MY_OPENAI_KEY' }));
    expect(provider.total()).toBe(calls);
    expect(other).toMatchObject({ done: 0, pending: 0, keyBlocked: cases.items.length });
    const fine = new ScriptedProvider('anthropic/claude-test', () => undefined);
    const judged = await runPartition(spec({ runId: 'run-1', ledger, sink, provider: fine, stop, phase: 'judge' }));
    expect(judged).toMatchObject({ done: cases.items.length, failed: 0, pending: 0 });
    expect(judged.keyFailure).toBeUndefined();

    // With the key fixed, the next run asks every item.
    provider.fail = () => undefined;
    const next = await runPartition(spec({ runId: 'run-2', ledger, sink, provider, stop: {} }));
    expect(next).toMatchObject({ done: cases.items.length, failed: 0, pending: 0 });
    await ledger.close();
  });

  it("adopting a killed run's journal keeps a refusal failed for good and re-asks a rate limit", async () => {
    const journalDir = path.join(cases.dir, 'journal');
    await mkdir(journalDir, { recursive: true });
    const [a, b, c] = cases.items;
    const row = (item: PromptItem, attempt: number, errorClass: string | null): ReplyRow =>
      replyRow(
        {
          item_id: item.item_id,
          campaign: CAMPAIGN,
          attempt,
          provider: 'openai/gpt-test',
          simulated: false,
          created_at: '2026-11-30T00:00:00.000Z',
          ...(errorClass ? { input_tokens: 0 } : { text: 'an earlier reply', input_tokens: 100, output_tokens: 20, cost_usd: 0.0004 }),
        },
        errorClass ? [errorClass, errorClass] : undefined,
      );
    // a answered, b refused (after a rate limit), c rate limited (the run died mid-retry).
    const journal = [row(a!, 1, null), row(b!, 1, 'rate_limit'), row(b!, 2, 'refusal'), row(c!, 1, 'rate_limit')];
    await writeFile(path.join(journalDir, 'run-0-generate-00000.ndjson'), `${journal.map((r) => JSON.stringify(r)).join('\n')}\n`);

    const provider = new ScriptedProvider('openai/gpt-test', () => undefined);
    const sink = new MemoryPartSink();
    const ledger = await newLedger('run-1');
    const out = await runPartition(spec({ runId: 'run-1', ledger, sink, provider, items: [a!, b!, c!] }));
    expect(out.adopted).toBe(1);
    expect([...provider.calls.keys()]).toEqual([c!.item_id]);
    expect(await ledger.counts(CAMPAIGN, 'generate')).toEqual({ pending: 0, done: 2, failed: 1 });
    expect(sink.rows()).toHaveLength(journal.length + 1);
    expect((await ledger.budget(CAMPAIGN)).spent_usd).toBeCloseTo(sumCost(sink.rows()), 12);
    await ledger.close();
  });
});
