// R137: the slow start of a learning write pacer (src/core/write-pacer.ts) before
// the cloud has throttled anything: how many writes a controller that knows
// nothing of its cloud's pace lets through, as TCP's initial window and restart
// after idle do for a path of unknown capacity. Hand-written for the same reason
// as the pacer: the token-bucket libraries on npm have fixed rates.
import type { Clock } from './clock.ts';

/**
 * R137: what a learning pacer that knows nothing of its cloud starts at once, as TCP's initial
 * window (RFC 6928): the first contact with a cloud whose burst is unknown must not be a whole
 * join wave, which a small bucket answers throttled all but its size.
 */
export const SLOW_START_WRITES = 10;
/** R137: the slow start's rate (writes/s) and bucket double every this many ms. */
export const SLOW_START_DOUBLING_MS = 1000;
/** R137: a pause this long without a write starts the slow start again (TCP's restart after idle). */
export const SLOW_START_IDLE_MS = 1000;
/** The slow start's rate stops doubling here: unpaced in all but name. */
export const SLOW_START_MAX_QPS = 1e6;

/**
 * R137: a token bucket whose rate and size start at SLOW_START_WRITES and double every
 * SLOW_START_DOUBLING_MS, from the first write after a pause of SLOW_START_IDLE_MS. A write that
 * finds no token reserves one and waits for it.
 */
export class SlowStart {
  private readonly clock: Clock;
  private base = SLOW_START_WRITES;
  private startedAt = Number.NEGATIVE_INFINITY;
  private tokens = 0;
  private last = Number.NEGATIVE_INFINITY;
  private lastWriteAt = Number.NEGATIVE_INFINITY;

  constructor(clock: Clock) {
    this.clock = clock;
  }

  /** Takes a token; the ms until it is there (0: now). */
  reserve(): number {
    const now = this.clock.now();
    if (now - this.lastWriteAt >= SLOW_START_IDLE_MS) this.restart(now, SLOW_START_WRITES);
    this.refill(now);
    this.tokens -= 1;
    const ms = this.tokens >= 0 ? 0 : this.msUntil(now, -this.tokens);
    // The pause runs from the last write's start, not from when it asked.
    this.lastWriteAt = Math.max(this.lastWriteAt, now + ms);
    return ms;
  }

  nextWriteInMs(): number {
    const now = this.clock.now();
    if (now - this.lastWriteAt >= SLOW_START_IDLE_MS) return 0;
    this.refill(now);
    return this.tokens >= 1 ? 0 : this.msUntil(now, 1 - this.tokens);
  }

  /** When the rising rate will have added `tokens`: the integral of its exponential, solved for time. */
  private msUntil(now: number, tokens: number): number {
    const rate = this.rateAt(now);
    // Past the cap the rate is flat (and 2 ** elapsed may no longer be finite).
    if (rate >= SLOW_START_MAX_QPS) return Math.ceil((tokens / rate) * 1000);
    const D = SLOW_START_DOUBLING_MS;
    const grown = 2 ** ((now - this.startedAt) / D) + (tokens * Math.LN2 * 1000) / (this.base * D);
    return Math.max(0, Math.ceil(this.startedAt + D * Math.log2(grown) - now));
  }

  /** Carries on at `qps` (a learning pacer that disengaged), until the next pause. */
  restartAt(qps: number): void {
    const now = this.clock.now();
    this.restart(now, Math.max(SLOW_START_WRITES, qps));
    this.lastWriteAt = now;
  }

  private restart(now: number, base: number): void {
    this.base = base;
    this.startedAt = now;
    this.tokens = base;
    this.last = now;
  }

  private rateAt(t: number): number {
    return Math.min(SLOW_START_MAX_QPS, this.base * 2 ** ((t - this.startedAt) / SLOW_START_DOUBLING_MS));
  }

  /** Adds the integral of the exponential rate over [last, now], up to the bucket's size. */
  private refill(now: number): void {
    if (now <= this.last) return;
    const added = ((this.rateAt(now) - this.rateAt(this.last)) * SLOW_START_DOUBLING_MS) / 1000 / Math.LN2;
    this.tokens = Math.min(this.rateAt(now), this.tokens + added);
    this.last = now;
  }
}
