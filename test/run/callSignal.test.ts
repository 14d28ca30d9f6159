import { getEventListeners } from 'node:events';
import { describe, expect, it } from 'vitest';
import { callSignal } from '../../lib/run/callSignal.js';

describe('callSignal', () => {
  it('aborts with the run, with the run’s reason, and says it was not a timeout', () => {
    const run = new AbortController();
    const call = callSignal(run.signal, 60_000);
    run.abort(new Error('stop'));
    expect(call.signal.aborted).toBe(true);
    expect((call.signal.reason as Error).message).toBe('stop');
    expect(call.timedOut()).toBe(false);
    call.dispose();
  });

  it('aborts when its time is up, as a TimeoutError, and says so', async () => {
    const call = callSignal(undefined, 5);
    await new Promise((resolve) => call.signal.addEventListener('abort', resolve));
    expect(call.timedOut()).toBe(true);
    expect((call.signal.reason as DOMException).name).toBe('TimeoutError');
  });

  it('is aborted from the start under a run already aborted', () => {
    const run = new AbortController();
    run.abort();
    expect(callSignal(run.signal, 60_000).signal.aborted).toBe(true);
  });

  it('is left alone by the run and the clock once disposed', async () => {
    const run = new AbortController();
    const call = callSignal(run.signal, 5);
    call.dispose();
    await new Promise((resolve) => setTimeout(resolve, 20));
    run.abort();
    expect(call.signal.aborted).toBe(false);
    expect(call.timedOut()).toBe(false);
  });

  it('hands a settled call’s controller to the next call only when nothing aborted it and nothing listens to it', () => {
    const run = new AbortController();
    const first = callSignal(run.signal, 60_000);
    const signal = first.signal;
    first.dispose();
    first.dispose();
    // Reused once, not twice: a second dispose does not offer it again.
    const second = callSignal(run.signal, 60_000);
    const third = callSignal(run.signal, 60_000);
    expect(second.signal).toBe(signal);
    expect(third.signal).not.toBe(signal);
    expect(second.signal.aborted).toBe(false);

    // A listener left behind (an SDK's): never handed out again.
    second.signal.addEventListener('abort', () => {});
    second.dispose();
    expect(callSignal(run.signal, 60_000).signal).not.toBe(signal);

    // Aborted: never handed out again.
    const aborted = callSignal(run.signal, 60_000);
    const abortedSignal = aborted.signal;
    run.abort();
    aborted.dispose();
    third.dispose();
    const next = callSignal(undefined, 60_000);
    expect(next.signal).not.toBe(abortedSignal);
    expect(next.signal.aborted).toBe(false);
    next.dispose();
  });

  it('puts one listener on the run’s signal however many calls are in flight', () => {
    const run = new AbortController();
    const calls = Array.from({ length: 300 }, () => callSignal(run.signal, 60_000));
    expect(getEventListeners(run.signal, 'abort')).toHaveLength(1);
    run.abort();
    expect(calls.every((c) => c.signal.aborted)).toBe(true);
    for (const c of calls) c.dispose();
  });
});
