// The cloud write pacer (SPEC R68–R70): every route write (create, delete,
// applyRoutes call) takes a token first, from one bucket shared by all
// reconciles. Adaptive (the default in watch mode) it starts at the provider's
// documented write limit, halves its rate on every throttled answer and honours
// the answer's retry time, and regains the rate additively while writes
// succeed, never above the start. Fixed (--cloud-write-qps N) it keeps its rate
// and only honours retry times. A hand-written AIMD limiter: the token-bucket
// libraries on npm have fixed rates and no notion of a cloud's throttle signal.
import { sleep, type Clock } from './clock.ts';

/** A cloud's write limit as its documentation states it (R68). */
export interface WriteLimit {
  /** Writes per second the cloud refills. */
  readonly qps: number;
  /** Writes the cloud accepts at once. */
  readonly burst: number;
}

/** What the executor needs from a pacer. */
export interface WritePacer {
  /** Resolves when a write may start; rejects when `signal` aborts. */
  wait(signal: AbortSignal): Promise<void>;
  /** A write the cloud accepted. */
  onSuccess(): void;
  /** A write the cloud throttled; `retryAfterMs` if it said when to come back. */
  onThrottle(retryAfterMs: number | undefined): void;
  /** Milliseconds until the next write may start (0: now). */
  nextWriteInMs(): number;
  /** The current rate (writes per second). */
  readonly qps: number;
}

/**
 * The budget an adaptive pacer starts from for a documented limit: a little
 * under it, since the bucket cannot see other clients of the account and the
 * cloud's clock runs apart from ours.
 */
export function budgetForLimit(limit: WriteLimit): WriteLimit {
  return { qps: limit.qps * 0.95, burst: Math.max(1, Math.floor(limit.burst * 0.9)) };
}

/** Multiplicative decrease per throttled answer. */
export const PACER_DECREASE = 0.5;
/** Additive increase per second without a throttle, as a share of the ceiling. */
export const PACER_INCREASE_SHARE = 0.05;
/** The rate never falls below ceiling / PACER_FLOOR_DIVISOR. */
export const PACER_FLOOR_DIVISOR = 64;

export interface WritePacerOptions {
  readonly qps: number;
  readonly burst: number;
  /** true: AIMD as above; false: a fixed budget that only honours retry times. */
  readonly adaptive: boolean;
  /** Observer of rate changes (the budget gauge). */
  readonly onRate?: (qps: number) => void;
}

export class AdaptiveWritePacer implements WritePacer {
  private readonly clock: Clock;
  private readonly ceiling: number;
  private readonly burst: number;
  private readonly adaptive: boolean;
  private readonly onRate: ((qps: number) => void) | undefined;
  private rate: number;
  private tokens: number;
  private last: number;
  private blockedUntil = 0;
  private lastChange: number;
  /** Bumped when a throttle empties the bucket: older reservations are not refunded. */
  private epoch = 0;

  constructor(clock: Clock, opts: WritePacerOptions) {
    if (!(opts.qps > 0) || !Number.isFinite(opts.qps) || !(opts.burst >= 1))
      throw new RangeError(`invalid write budget qps=${opts.qps} burst=${opts.burst}`);
    this.clock = clock;
    this.ceiling = opts.qps;
    this.rate = opts.qps;
    this.burst = Math.floor(opts.burst);
    this.tokens = this.burst;
    this.adaptive = opts.adaptive;
    this.onRate = opts.onRate;
    this.last = clock.now();
    this.lastChange = this.last;
    this.onRate?.(this.rate);
  }

  get qps(): number {
    return this.rate;
  }

  async wait(signal: AbortSignal): Promise<void> {
    if (signal.aborted) await sleep(this.clock, 0, signal);
    this.refill();
    this.tokens -= 1;
    const epoch = this.epoch;
    const debt = this.tokens >= 0 ? 0 : Math.ceil((-this.tokens / this.rate) * 1000);
    const ms = Math.max(debt, this.blockedUntil - this.clock.now());
    if (ms <= 0) return;
    try {
      await sleep(this.clock, ms, signal);
    } catch (err) {
      if (epoch === this.epoch) {
        this.refill();
        this.tokens = Math.min(this.burst, this.tokens + 1);
      }
      throw err;
    }
  }

  onSuccess(): void {
    if (!this.adaptive || this.rate >= this.ceiling) return;
    const now = this.clock.now();
    const seconds = Math.floor((now - this.lastChange) / 1000);
    if (seconds < 1) return;
    this.refill();
    this.setRate(Math.min(this.ceiling, this.rate + seconds * PACER_INCREASE_SHARE * this.ceiling));
    this.lastChange += seconds * 1000;
  }

  onThrottle(retryAfterMs: number | undefined): void {
    const now = this.clock.now();
    this.refill();
    if (this.adaptive) {
      this.setRate(Math.max(this.ceiling / PACER_FLOOR_DIVISOR, this.rate * PACER_DECREASE));
      this.lastChange = now;
    }
    // The cloud's bucket is empty: so is ours, and waiters from before do not get their tokens back.
    this.tokens = Math.min(this.tokens, 0);
    this.epoch++;
    const until = now + (retryAfterMs ?? Math.ceil(1000 / this.rate));
    this.blockedUntil = Math.max(this.blockedUntil, until);
  }

  nextWriteInMs(): number {
    this.refill();
    const debt = this.tokens >= 1 ? 0 : Math.ceil(((1 - this.tokens) / this.rate) * 1000);
    return Math.max(0, debt, this.blockedUntil - this.clock.now());
  }

  private refill(): void {
    const now = this.clock.now();
    if (now > this.last) {
      this.tokens = Math.min(this.burst, this.tokens + ((now - this.last) / 1000) * this.rate);
      this.last = now;
    }
  }

  private setRate(qps: number): void {
    if (qps === this.rate) return;
    this.rate = qps;
    this.onRate?.(qps);
  }
}
