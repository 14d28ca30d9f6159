import { afterEach, describe, expect, it } from 'vitest';
import { runCampaign } from '../../lib/run/runCampaign.js';
import { onAbort, sleep } from '../../lib/run/sleep.js';
import { chatCompletion, type RecordedRequest } from '../providers/helpers/wireServer.js';
import { loadContext } from '../helpers/campaigns.js';
import { wireCampaign, type WireCampaign } from '../helpers/wireCampaign.js';

// At concurrency 256 on a real provider, hundreds of calls wait on the run's one abort signal at
// once — in the rate limiter's queue, in backoff sleeps — and one listener each set off Node's
// MaxListenersExceededWarning (a leak warning for what was no leak). One listener per signal now.

const completion = (req: RecordedRequest) => chatCompletion(req, 'Yes.', { prompt_tokens: 100, completion_tokens: 5 });

describe('a run at concurrency 256', () => {
  let wire: WireCampaign | undefined;
  afterEach(async () => wire?.close());

  it('queues and retries hundreds of calls on one signal without a MaxListenersExceededWarning', async () => {
    // Each item's first request gets a 503 (a backoff sleep on the run's signal for every item at
    // once); the RPM makes the rest queue in the rate limiter.
    const seen = new Set<string>();
    wire = await wireCampaign(
      [
        {
          from: (req) => {
            const key = JSON.stringify((req.body as { messages: unknown }).messages);
            if (!seen.has(key)) {
              seen.add(key);
              return { status: 503, json: { error: { message: 'overloaded', type: 'server_error' } } };
            }
            return completion(req);
          },
        },
      ],
      { rpm: 12_000, price: { input_per_mtok: 1, output_per_mtok: 2 } },
      (doc) => {
        doc.concurrency = 256;
        doc.design['languages'] = ['en'];
        doc.design['forms'] = ['plain', 'negint'];
        doc.design['constraints'] = ['yesno', 'label'];
      },
    );
    const ctx = await loadContext(wire.file);
    const warnings: Error[] = [];
    const onWarning = (w: Error) => warnings.push(w);
    process.on('warning', onWarning);

    try {
      const summary = await runCampaign(ctx, {
        signal: new AbortController().signal,
        retry: { maxAttempts: 4, baseDelayMs: 200, maxDelayMs: 400, timeoutMs: 10_000 },
        skipAnalysis: true,
      });
      const generate = summary.phases.find((p) => p.phase === 'generate')!;
      expect(generate.items).toBeGreaterThan(64);
      expect(generate.done).toBe(generate.items);
    } finally {
      process.off('warning', onWarning);
    }

    expect(warnings.filter((w) => w.name === 'MaxListenersExceededWarning').map((w) => w.message)).toEqual([]);
  });

  it('one listener per signal, however many wait; each waiter is called once on abort, none after it left', async () => {
    const controller = new AbortController();
    const calls: number[] = [];
    const offs = Array.from({ length: 300 }, (_, i) => onAbort(controller.signal, () => calls.push(i)));
    offs[7]!();
    const sleeping = sleep(60_000, controller.signal);

    controller.abort();
    await sleeping;

    expect(calls).toHaveLength(299);
    expect(calls).not.toContain(7);
  });
});
