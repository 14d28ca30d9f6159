import { setTimeout as delay } from 'node:timers/promises';
import { seededRandom, seedFromKey } from '../../core/hash.js';
import { SimulatedTransientError } from '../errors.js';

/**
 * Simulated latency and transient failures of a call, shared by the simulated respondent and
 * judge. Draws are keyed by the item and its attempt number on this instance, not by time, so a
 * run is reproducible; the reply text itself never depends on them (it is keyed by the item
 * alone), so a retried item returns the same text it would have returned at the first try.
 */
export class CallEffects {
  /** Attempts seen per item; entries are dropped when a call succeeds, so the map stays small. */
  private readonly attempts = new Map<string, number>();

  constructor(
    private readonly providerId: string,
    private readonly keyBase: string,
    private readonly errorRate: number,
    private readonly latencyMs: number,
  ) {}

  /** Waits the simulated latency, then throws a SimulatedTransientError for the failing share of calls. */
  async before(itemId: string, signal?: AbortSignal): Promise<void> {
    signal?.throwIfAborted();
    if (this.errorRate <= 0 && this.latencyMs <= 0) return;
    const attempt = this.attempts.get(itemId) ?? 0;
    const rng = seededRandom(seedFromKey(`${this.keyBase}|call|${itemId}|${attempt}`));
    const uLatency = rng();
    const uError = rng();
    if (this.latencyMs > 0) {
      // Exponential with the configured mean.
      await delay(-Math.log(1 - uLatency) * this.latencyMs, undefined, signal ? { signal } : undefined);
    }
    if (uError < this.errorRate) {
      this.attempts.set(itemId, attempt + 1);
      throw new SimulatedTransientError(this.providerId, itemId, attempt);
    }
    this.attempts.delete(itemId);
  }
}
