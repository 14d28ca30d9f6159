/**
 * What the calls of a run are doing right now, for the progress line: how many are sent and not
 * yet answered (and how long the oldest has waited), and how many sleep before a retry (and when
 * the next one wakes). A server that accepts and never answers, or a provider that asks for a long
 * Retry-After, otherwise leaves an unchanging bar with no word of why.
 * @example const settled = watch.sent(); try { await call() } finally { settled() }
 */
export class CallWatch {
  // Insertion order is start order: the first entry is the oldest call.
  readonly #sent = new Map<number, number>();
  readonly #waits = new Map<number, number>();
  #next = 0;

  constructor(private readonly now: () => number = Date.now) {}

  /** A request is on the wire; the returned function says it settled. */
  sent(): () => void {
    const id = this.#next++;
    this.#sent.set(id, this.now());
    return () => void this.#sent.delete(id);
  }

  /** A call sleeps `ms` before its retry; the returned function says the sleep ended. */
  waiting(ms: number): () => void {
    const id = this.#next++;
    this.#waits.set(id, this.now() + ms);
    return () => void this.#waits.delete(id);
  }

  /** `"3 in flight, oldest 42s; 2 waiting to retry, next in 1m05s"`, or '' when nothing is in flight or waiting. */
  describe(): string {
    const now = this.now();
    const parts: string[] = [];
    const oldest = this.#sent.values().next();
    if (!oldest.done) parts.push(`${this.#sent.size} in flight, oldest ${formatDuration(now - oldest.value)}`);
    if (this.#waits.size > 0) {
      let soonest = Infinity;
      for (const until of this.#waits.values()) soonest = Math.min(soonest, until);
      parts.push(`${this.#waits.size} waiting to retry, next in ${formatDuration(soonest - now)}`);
    }
    return parts.join('; ');
  }
}

/**
 * A duration for people: seconds up to two minutes, then minutes, then hours and minutes.
 * @example formatDuration(86_400_000) // '24h00m'
 */
export function formatDuration(ms: number): string {
  const s = Math.max(0, Math.round(ms / 1000));
  if (s < 120) return `${s}s`;
  const m = Math.floor(s / 60);
  if (m < 120) return `${m}m${String(s % 60).padStart(2, '0')}s`;
  return `${Math.floor(m / 60)}h${String(m % 60).padStart(2, '0')}m`;
}
