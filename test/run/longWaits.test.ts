/**
 * What a run says while its calls wait, and what it does when a provider asks for a wait no run
 * should sit out: the progress line names the calls in flight (and the oldest one's age) and the
 * waits before retries; a Retry-After above the ceiling (`--max-wait`, five minutes by default)
 * stops that model's calls at once, keeps what was collected, leaves its items pending and says
 * when to resume (exit 6).
 */
import { afterEach, describe, expect, it } from 'vitest';
import { runCampaign } from '../../lib/run/runCampaign.js';
import { CallWatch, formatDuration } from '../../lib/run/CallWatch.js';
import type { ProgressSink } from '../../lib/run/progress.js';
import { runMain } from '../helpers/cli.js';
import { loadContext } from '../helpers/campaigns.js';
import { ledgerSnapshot } from '../helpers/runData.js';
import { wireCampaign, type WireCampaign } from '../helpers/wireCampaign.js';
import { chatCompletion } from '../providers/helpers/wireServer.js';

const error429 = { error: { message: 'Rate limit reached; try again tomorrow', type: 'requests', code: 'rate_limit_exceeded' } };

/** A progress sink that keeps every tick's text and can wait for one that matches. */
function recordingProgress(): ProgressSink & { readonly lines: string[]; until(re: RegExp): Promise<string> } {
  const lines: string[] = [];
  const waiters: { re: RegExp; resolve: (s: string) => void }[] = [];
  const see = (s: string) => {
    lines.push(s);
    for (const w of [...waiters]) {
      if (!w.re.test(s)) continue;
      waiters.splice(waiters.indexOf(w), 1);
      w.resolve(s);
    }
  };
  return {
    lines,
    start: (label) => see(`start ${label}`),
    tick: (done, extra = '') => see(`${done} ${extra}`),
    finish: (extra = '') => see(`finish ${extra}`),
    until: (re) => new Promise((resolve) => {
      const seen = lines.find((l) => re.test(l));
      if (seen !== undefined) resolve(seen);
      else waiters.push({ re, resolve });
    }),
  };
}

describe('long waits', () => {
  let wire: WireCampaign | undefined;
  afterEach(async () => wire?.close());

  it('a Retry-After of a day stops the model at once with when to resume, keeps its items pending, and exits 6', async () => {
    // The first two calls are answered, every later one is refused for a day.
    let served = 0;
    wire = await wireCampaign(
      [
        {
          from: (req) => {
            served++;
            if (served <= 2) return chatCompletion(req, 'Yes. That is how the story reads to me.', { prompt_tokens: 50, completion_tokens: 3 });
            return { status: 429, headers: { 'retry-after': '86400' }, json: error429 };
          },
        },
      ],
      { price: { input_per_mtok: 1, output_per_mtok: 2 } },
      (doc) => void (doc.design['languages'] = ['en']),
    );
    const started = Date.now();
    const out = await runMain(['run', wire.file, '--quiet']);
    // Not a day, nor a single retry of a refused call: it stops as soon as the provider says so.
    expect(Date.now() - started).toBeLessThan(60_000);
    expect(out.code).toBe(6);
    expect(out.stderr).toMatch(/the provider asked to wait 24h00m before the next call \(Retry-After\).*longer than the 5m00s a run waits \(--max-wait SECONDS\)/);
    expect(out.stderr).toMatch(/Run the same command again after \d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ to resume/);
    const resumeAt = Date.parse(/after (\S+Z) to resume/.exec(out.stderr)![1]!);
    expect(Math.abs(resumeAt - (started + 86_400_000))).toBeLessThan(120_000);
    // No call starts after the first refusal: only those already sent (16 at a time) were refused.
    expect(wire.server.requests.length).toBeLessThanOrEqual(2 + 16);
    // Both answered replies are kept; the refused items stay pending for the next run.
    const ledger = (await ledgerSnapshot((await loadContext(wire.file)).dataDir, 'run-small')).generate;
    expect(ledger.done).toBe(2);
    expect(ledger.failed).toBe(0);
    expect(ledger.pending).toBeGreaterThan(0);
    expect(out.stderr).toMatch(/generate: 2 new, 0 recovered from an interrupted run, 0 failed, [1-9]\d* pending/);
  }, 90_000);

  it('--max-wait raises the ceiling: a wait under it is sat out and shown on the progress line', async () => {
    let served = 0;
    wire = await wireCampaign(
      [
        {
          from: (req) => {
            served++;
            if (served === 1) return { status: 429, headers: { 'retry-after': '3' }, json: error429 };
            return chatCompletion(req, 'Yes. That is how the story reads to me.', { prompt_tokens: 50, completion_tokens: 3 });
          },
        },
      ],
      { price: { input_per_mtok: 1, output_per_mtok: 2 } },
      (doc) => {
        doc.design['languages'] = ['en'];
        doc.concurrency = 1;
      },
    );
    const progress = recordingProgress();
    const ctx = await loadContext(wire.file);
    const run = runCampaign(ctx, { progress, skipAnalysis: true, retry: { maxAttempts: 3, baseDelayMs: 10, maxDelayMs: 100, timeoutMs: 30_000, maxWaitMs: 2_000 } });
    // Over a 2 s ceiling: stopped, not waited.
    const stopped = await run;
    expect(stopped.waitStops?.[0]).toMatch(/asked to wait 3s/);

    served = 0;
    const waited = runCampaign(await loadContext(wire.file), { progress, skipAnalysis: true, retry: { maxAttempts: 3, baseDelayMs: 10, maxDelayMs: 100, timeoutMs: 30_000, maxWaitMs: 10_000 } });
    const line = await progress.until(/1 waiting to retry, next in [1-3]s/);
    expect(line).toMatch(/\$\d+\.\d{4} of \$5 · /);
    const summary = await waited;
    expect(summary.waitStops).toBeUndefined();
    expect(summary.phases.find((p) => p.phase === 'generate')!.pending).toBe(0);
  }, 90_000);

  it('a server that accepts and never answers: the progress line shows the calls in flight and the oldest one\'s age', async () => {
    wire = await wireCampaign([{ hang: true }], { price: { input_per_mtok: 1, output_per_mtok: 2 }, timeout_s: 60 }, (doc) => {
      doc.design['languages'] = ['en'];
      doc.concurrency = 3;
    });
    const progress = recordingProgress();
    const controller = new AbortController();
    const run = runCampaign(await loadContext(wire.file), { progress, signal: controller.signal, skipAnalysis: true });
    const line = await progress.until(/3 in flight, oldest [2-9]s/);
    controller.abort();
    const summary = await run;
    expect(line).toMatch(/^0 \$0\.0000 of \$5 · 3 in flight, oldest [2-9]s$/);
    expect(summary.stopped).toBe('aborted');
  }, 60_000);
});

describe('CallWatch', () => {
  it('names the calls in flight, the oldest first, and the soonest retry', () => {
    let now = 1_000_000;
    const watch = new CallWatch(() => now);
    expect(watch.describe()).toBe('');
    const first = watch.sent();
    now += 5_000;
    const second = watch.sent();
    const woke = watch.waiting(90_000);
    watch.waiting(3_600_000);
    now += 37_000;
    expect(watch.describe()).toBe('2 in flight, oldest 42s; 2 waiting to retry, next in 53s');
    first();
    woke();
    expect(watch.describe()).toBe('1 in flight, oldest 37s; 1 waiting to retry, next in 59m23s');
    second();
    expect(formatDuration(86_400_000)).toBe('24h00m');
  });
});

describe('--max-wait', () => {
  it('takes seconds from 0 to a week and refuses anything else, naming the flag', async () => {
    const { parseMaxWait } = await import('../../lib/cli/commands/run.js');
    expect(parseMaxWait(undefined)).toBeUndefined();
    expect(parseMaxWait('600')).toBe(600_000);
    expect(parseMaxWait('0')).toBe(0);
    for (const bad of ['', '-1', 'ten', '604801', '1e3']) expect(() => parseMaxWait(bad)).toThrow(/--max-wait .* is not a valid number of seconds; give 0 to 604800/);
  });
});
