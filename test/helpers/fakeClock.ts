/** Fake time for the rate limiter's tests: RateLimiterOptions' `now` and `sleep`. */

/** A clock that moves only when the test says so; timers fire in order as it passes them. */
export class FakeClock {
  t = 0;
  private timers: { at: number; fire: () => void }[] = [];
  readonly now = () => this.t;
  readonly sleep = (ms: number, signal: AbortSignal) =>
    new Promise<void>((resolve) => {
      const timer = { at: this.t + ms, fire: resolve };
      this.timers.push(timer);
      signal.addEventListener(
        'abort',
        () => {
          this.timers = this.timers.filter((x) => x !== timer);
          resolve();
        },
        { once: true },
      );
    });
  async advance(ms: number): Promise<void> {
    const end = this.t + ms;
    await flush();
    for (;;) {
      const due = this.timers.filter((x) => x.at <= end).sort((a, b) => a.at - b.at)[0];
      if (!due) break;
      this.timers = this.timers.filter((x) => x !== due);
      this.t = Math.max(this.t, due.at);
      due.fire();
      await flush();
    }
    this.t = end;
    await flush();
  }
}

/** Lets pending promise callbacks and immediates run. */
export const flush = () => new Promise<void>((r) => setImmediate(r));
