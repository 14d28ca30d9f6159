/** A progress line on stderr: a bar on a terminal, a plain line every few seconds otherwise. */
export interface ProgressSink {
  start(label: string, total: number): void;
  tick(done: number, extra?: string): void;
  finish(extra?: string): void;
  /** The total learnt since `start` (a dependent phase's planned count was an estimate). */
  retotal?(total: number): void;
}

export class ProgressBar implements ProgressSink {
  private label = '';
  private total = 0;
  private done = 0;
  private started = 0;
  private lastDraw = 0;

  constructor(
    private readonly out: NodeJS.WriteStream = process.stderr,
    private readonly interactive = Boolean(process.stderr.isTTY),
  ) {}

  start(label: string, total: number): void {
    this.label = label;
    this.total = total;
    this.done = 0;
    this.started = performance.now();
    this.lastDraw = 0;
  }

  retotal(total: number): void {
    this.total = total;
  }

  tick(done: number, extra = ''): void {
    this.done = done;
    const now = performance.now();
    if (now - this.lastDraw < (this.interactive ? 100 : 5000)) return;
    this.lastDraw = now;
    this.draw(extra, false);
  }

  finish(extra = ''): void {
    this.draw(extra, true);
  }

  private draw(extra: string, final: boolean): void {
    const secs = (performance.now() - this.started) / 1000;
    const rate = secs > 0 ? this.done / secs : 0;
    const frac = this.total > 0 ? Math.min(1, this.done / this.total) : 1;
    const eta = rate > 0 && this.total > this.done ? `${Math.ceil((this.total - this.done) / rate)}s left` : '';
    const width = 24;
    const bar = '█'.repeat(Math.round(frac * width)).padEnd(width, '░');
    const line = `${this.label} ${bar} ${this.done}/${this.total} ${(frac * 100).toFixed(0)}% ${Math.round(rate)}/s ${eta} ${extra}`.trimEnd();
    if (this.interactive) this.out.write(`\r\x1b[2K${line}${final ? '\n' : ''}`);
    else this.out.write(`${line}\n`);
  }
}

export const silentProgress: ProgressSink = { start() {}, tick() {}, finish() {} };
