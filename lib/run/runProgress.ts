/**
 * The local run's progress line: replies counted as they arrive (from the main thread and from the
 * partition threads), the money spent, and what the calls are doing, so that a bar that does not
 * move says why. One wave of phases at a time (runWave.ts).
 */
import type { CallWatch } from './CallWatch.js';
import type { ProgressSink } from './progress.js';

/** How often the progress line is redrawn while no reply arrives (calls in flight, waits). */
const PROGRESS_REDRAW_MS = 1000;

export class RunProgress {
  /** USD spent by the campaign: the ledger's figure when the run starts, plus every reply since. */
  spent = 0;
  /** Replies of the current wave's phases that are done (the ledger's count at the wave's start, plus every success since). */
  private replied = 0;
  private redraw: ReturnType<typeof setInterval> | undefined;

  constructor(
    private readonly sink: ProgressSink,
    private readonly watch: CallWatch,
    private readonly budgetUsd: number,
  ) {}

  /** Counts `ok` successful replies that cost `costUsd` in all (failed attempts cost money too). */
  readonly tick = (ok: number, costUsd: number): void => {
    this.spent += costUsd;
    if (ok === 0) return;
    this.replied += ok;
    this.sink.tick(this.replied, this.extra());
  };

  /** Starts the bar of a wave whose phases have `done` replies already, of `total` items planned. */
  startWave(label: string, total: number, done: number): void {
    this.replied = done;
    this.sink.start(label, total);
    // Redrawn while no reply arrives, so that the calls in flight and the waits show.
    this.redraw = setInterval(() => this.sink.tick(this.replied, this.extra()), PROGRESS_REDRAW_MS);
    this.redraw.unref();
  }

  /** The wave's total once its dependent phases' items are built (the plan had an estimate). */
  retotal(total: number): void {
    this.sink.retotal?.(total);
  }

  /** Stops redrawing (the wave's calls are over, or failed). */
  stopRedraw(): void {
    clearInterval(this.redraw);
  }

  /** Ends the wave's bar with its closing line. */
  finishWave(line: string): void {
    this.sink.finish(line);
  }

  // Spend, and what the calls are doing: a bar that does not move says why (calls in flight for
  // long, a provider's Retry-After).
  private extra(): string {
    const calls = this.watch.describe();
    return `$${this.spent.toFixed(4)} of $${this.budgetUsd}${calls === '' ? '' : ` · ${calls}`}`;
  }
}
