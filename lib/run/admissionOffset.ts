/**
 * How many tokens fewer than sondage's estimate a provider counts when it admits a call, read from
 * the rate-limit headers of the replies. Unlike the usage of the replies (tokens as the
 * model counts them, usually fewer than a provider that admits by characters takes off), these are
 * the server's own admission count.
 *
 * OpenAI computes `x-ratelimit-remaining-tokens` when it admits a request, once the request's cost
 * is taken off: `limit - remaining`, the server's deficit then, is that cost plus what earlier
 * calls left unrefilled. So `estimate - deficit`, the call's margin, is at most how far the estimate
 * was above the server's count, and equal to it when the server's bucket was full as the call
 * arrived, which happens to many calls while the client stays under the limit. The largest margin
 * of recent replies is what is taken off each estimate.
 *
 * That is a guess for the calls to come (their margins may be smaller than the largest seen), and
 * its safety rests on feedback: a discount too large makes the client admit more than the server
 * refills, the server's deficit grows and stays up, every margin goes below zero, and within two
 * windows (WINDOW_MS) the discount is gone. Bounded by MAX_SHARE of an estimate, the excess cannot
 * pile up more than about a third of a second's allowance in that time, short of the one-second
 * burst a provider lets through. A server that counts by characters, shares the key with others (a
 * larger deficit) or reports a stale deficit only makes the margins smaller.
 *
 * A deficit below (1 - DISTRUST_SHARE) of the call's estimate means the headers are not what this
 * assumes: taken when the server answered, after its bucket refilled for the call's latency;
 * rounded to the nearest thousand (Anthropic); or a count far from the estimate. Learning stops
 * for good then, and no discount is made.
 */

/** Replies are grouped in windows of this length; the discount comes from the last full one and the current one. */
const WINDOW_MS = 10_000;
/** Replies a window needs before its margins are used. */
const MIN_REPLIES = 10;
/** The largest share of an estimate taken off. */
const MAX_SHARE = 0.02;
/** A deficit this much below its call's estimate stops the learning. */
const DISTRUST_SHARE = 0.1;

export class AdmissionOffset {
  /** Largest margin of the last full window; undefined when it had too few replies. */
  #previous: number | undefined;
  #current = -Infinity;
  #seen = 0;
  #start: number;
  #distrusted = false;

  constructor(now: number) {
    this.#start = now;
  }

  /**
   * Notes one successful reply: `estimate`, sondage's estimate of the call (prompt + max_tokens,
   * before any correction), and `deficit`, the provider's token limit minus the remaining tokens
   * it reported for that call.
   */
  note(estimate: number, deficit: number, now: number): void {
    if (this.#distrusted || !(estimate > 0 && Number.isFinite(deficit) && deficit >= 0)) return;
    if (deficit < (1 - DISTRUST_SHARE) * estimate) {
      this.#distrusted = true;
      return;
    }
    this.#roll(now);
    this.#current = Math.max(this.#current, estimate - deficit);
    this.#seen++;
  }

  /** Tokens to take off an estimate of `estimate` (≥ 0, at most MAX_SHARE of it). */
  discount(estimate: number, now: number): number {
    if (this.#distrusted) return 0;
    this.#roll(now);
    if (this.#previous === undefined) return 0;
    return Math.max(0, Math.min(Math.max(this.#previous, this.#current), MAX_SHARE * estimate));
  }

  /** Whether a reply showed headers that this cannot read a margin from (see the class comment). */
  get distrusted(): boolean {
    return this.#distrusted;
  }

  #roll(now: number): void {
    const age = now - this.#start;
    if (age < WINDOW_MS) return;
    // A window more than one window old says nothing about now.
    this.#previous = age < 2 * WINDOW_MS && this.#seen >= MIN_REPLIES ? this.#current : undefined;
    this.#current = -Infinity;
    this.#seen = 0;
    this.#start = now;
  }
}
