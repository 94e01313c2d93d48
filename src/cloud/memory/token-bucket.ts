import type { Clock } from '../../core/clock.ts';

/** A cloud-side API rate limit: `ratePerSec` refill, `burst` capacity. */
export class TokenBucket {
  private tokens: number;
  private last: number;
  private readonly clock: Clock;
  readonly ratePerSec: number;
  readonly burst: number;

  constructor(clock: Clock, ratePerSec: number, burst: number) {
    this.clock = clock;
    this.ratePerSec = ratePerSec;
    this.burst = burst;
    this.tokens = burst;
    this.last = clock.now();
  }

  /** Takes a token, or returns the milliseconds until one is available. */
  take(): { ok: true } | { ok: false; retryAfterMs: number } {
    const now = this.clock.now();
    this.tokens = Math.min(this.burst, this.tokens + ((now - this.last) / 1000) * this.ratePerSec);
    this.last = now;
    if (this.tokens >= 1) {
      this.tokens -= 1;
      return { ok: true };
    }
    return { ok: false, retryAfterMs: Math.ceil(((1 - this.tokens) / this.ratePerSec) * 1000) };
  }
}
