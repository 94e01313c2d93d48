// Client-side token buckets (client-go flowcontrol semantics): the apiserver
// request limiter (--kube-api-qps/--kube-api-burst), the cloud write pacer
// (--cloud-write-qps/--cloud-write-burst) and the per-object bucket of the
// event spam filter. All time comes from an injected Clock.
import { sleep, type Clock } from './clock.ts';

export class TokenBucket {
  readonly qps: number;
  readonly burst: number;
  private readonly clock: Clock;
  private tokens: number;
  private last: number;

  constructor(clock: Clock, qps: number, burst: number) {
    if (!(qps > 0) || !(burst >= 1)) throw new RangeError(`invalid token bucket qps=${qps} burst=${burst}`);
    this.clock = clock;
    this.qps = qps;
    this.burst = burst;
    this.tokens = burst;
    this.last = clock.now();
  }

  private refill(): void {
    const now = this.clock.now();
    if (now > this.last) {
      this.tokens = Math.min(this.burst, this.tokens + ((now - this.last) / 1000) * this.qps);
      this.last = now;
    }
  }

  /** Takes a token if one is available now (client-go TryAccept). */
  tryAccept(): boolean {
    this.refill();
    if (this.tokens >= 1) {
      this.tokens -= 1;
      return true;
    }
    return false;
  }

  /**
   * Reserves a token, possibly going into debt, and returns how long the caller
   * must wait before using it. Reservations keep FIFO fairness without a queue:
   * each waiter pays for the debt of those before it.
   */
  reserve(): number {
    this.refill();
    this.tokens -= 1;
    return this.tokens >= 0 ? 0 : Math.ceil((-this.tokens / this.qps) * 1000);
  }

  /** Gives back a reservation that was not used (its waiter was aborted). */
  cancel(): void {
    this.refill();
    this.tokens = Math.min(this.burst, this.tokens + 1);
  }

  /** Tokens available now (may be negative while reservations are pending). */
  available(): number {
    this.refill();
    return this.tokens;
  }
}

/** Blocks callers until the bucket allows them; abortable. */
export class RequestRateLimiter {
  readonly bucket: TokenBucket;
  private readonly clock: Clock;

  constructor(clock: Clock, qps: number, burst: number) {
    this.clock = clock;
    this.bucket = new TokenBucket(clock, qps, burst);
  }

  async wait(signal?: AbortSignal): Promise<void> {
    if (signal?.aborted) await sleep(this.clock, 0, signal);
    const ms = this.bucket.reserve();
    if (ms <= 0) return;
    try {
      await sleep(this.clock, ms, signal);
    } catch (err) {
      this.bucket.cancel();
      throw err;
    }
  }
}
