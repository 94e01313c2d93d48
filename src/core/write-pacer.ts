// The cloud write pacer (SPEC R68–R70, R111, R112): every route write (create,
// delete, applyRoutes call) takes a token first, from one bucket shared by all
// reconciles. Three flavours:
// - adaptive: starts at the provider's documented write limit; a throttled
//   answer cuts the rate once per congestion episode (answers to writes that
//   started before the last cut do not cut again) and honours the answer's
//   retry time; the rate then recovers with elapsed time, never above the start.
// - learning: until the cloud first throttles, a slow start (R137: 10 writes
//   at once, the rate doubling every second, again after a pause) or unpaced
//   (a provider that declares 'unlimited'); then adaptive from the rate the
//   cloud had just accepted (R111): a provider that declares no limit still
//   never retries a throttling cloud at full concurrency.
// - fixed (--cloud-write-qps N): keeps its rate and only honours retry times.
// A hand-written AIMD limiter: the token-bucket libraries on npm have fixed
// rates and no notion of a cloud's throttle signal.
import { sleep, type Clock } from './clock.ts';
import { SlowStart } from './slow-start.ts';

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
  /** A write that started at `startedAt` (ms) and the cloud accepted. */
  onSuccess(startedAt: number): void;
  /** A write that started at `startedAt` and was throttled; `retryAfterMs` if the cloud said when to come back. */
  onThrottle(retryAfterMs: number | undefined, startedAt: number): void;
  /** Milliseconds until the next write may start (0: now). */
  nextWriteInMs(): number;
  /** The current rate (writes per second); undefined while a learning pacer has not engaged. */
  readonly qps: number | undefined;
}

/**
 * The budget an adaptive pacer starts from for a documented limit: a little
 * under it, since the bucket cannot see other clients of the account and the
 * cloud's clock runs apart from ours.
 */
export function budgetForLimit(limit: WriteLimit): WriteLimit {
  return { qps: limit.qps * 0.95, burst: Math.max(1, Math.floor(limit.burst * 0.9)) };
}

/** Multiplicative decrease per congestion episode (R69). */
export const PACER_DECREASE = 0.7;
/**
 * R69: after a cut the rate climbs back to where it was over this many of its
 * own write intervals: seconds at 5 writes/s, minutes at one write every few
 * seconds, so a slow cloud is probed as often, per write, as a fast one.
 */
export const PACER_RECOVERY_WRITES = 20;
/** The rate never falls below ceiling / PACER_FLOOR_DIVISOR. */
export const PACER_FLOOR_DIVISOR = 64;
/** R111: the window over which a learning pacer measures the rate the cloud accepted. */
export const LEARNING_WINDOW_MS = 1000;
/** R111: the least rate a learning pacer engages at (writes/s), when the cloud accepted fewer. */
export const LEARNING_MIN_QPS = 1;
/**
 * R111: how long a learning pacer stays engaged after the cloud's last throttle. Within a
 * congestion episode the rate climbs back to its start in seconds; disengaging then would send the
 * rest of a burst unpaced into the same throttle.
 */
export const LEARNING_QUIET_MS = 300_000;

/**
 * R69: the least recovery per second, as a share of the ceiling: a rate cut near the floor (every
 * write refused for a while) climbs back within minutes once the cloud takes writes again.
 */
export const PACER_MIN_RECOVERY_SHARE = 0.005;

/**
 * R69: the least time a recovery takes: the cloud's answer to a rate comes a round trip and a retry
 * time later, so a rate that climbed back faster than that would be cut from the same height again
 * and again instead of finding the cloud's.
 */
export const PACER_MIN_RECOVERY_MS = 2000;

/**
 * R69: qps per second that brings a cut from `from` back to it within PACER_RECOVERY_WRITES
 * intervals (at least PACER_MIN_RECOVERY_MS), at least PACER_MIN_RECOVERY_SHARE of the ceiling.
 */
export function recoverySlope(from: number, ceiling: number): number {
  const seconds = Math.max(PACER_RECOVERY_WRITES / from, PACER_MIN_RECOVERY_MS / 1000);
  return Math.max(((1 - PACER_DECREASE) * from) / seconds, PACER_MIN_RECOVERY_SHARE * ceiling);
}

export type PacerKind = 'adaptive' | 'learning' | 'fixed';

export interface WritePacerOptions {
  readonly kind: PacerKind;
  /** Start rate (adaptive, fixed); ignored by a learning pacer, which learns it. */
  readonly qps?: number;
  /** Bucket size (adaptive, fixed); a learning pacer takes what the cloud accepted in its window. */
  readonly burst?: number;
  /** Observer of rate changes (the budget gauge). */
  readonly onRate?: (qps: number) => void;
  /** Learning only: slow start until the first throttle (R137); false: unpaced until then. */
  readonly slowStart?: boolean;
}

export class AdaptiveWritePacer implements WritePacer {
  private readonly clock: Clock;
  private readonly kind: PacerKind;
  private readonly onRate: ((qps: number) => void) | undefined;
  /** false: a learning pacer that has not engaged yet (every write starts at once). */
  private engaged: boolean;
  private ceiling = 0;
  private burst = 1;
  /** The rate right after the last cut, when it was, and the recovery slope (qps per second). */
  private cutRate = 0;
  private cutAt = Number.NEGATIVE_INFINITY;
  private slope = 0;
  private tokens = 0;
  private last: number;
  private blockedUntil = 0;
  private lastThrottleAt = Number.NEGATIVE_INFINITY;
  private reported: number | undefined;
  /** Bumped when a throttle empties the bucket: older reservations are refunded only up to empty. */
  private epoch = 0;
  /** R111: completion times of recent accepted writes (learning, before it engages). */
  private readonly accepted: number[] = [];
  /** R137: the slow start of a learning pacer before it engages (undefined: unpaced). */
  private readonly slow: SlowStart | undefined;

  constructor(clock: Clock, opts: WritePacerOptions) {
    this.clock = clock;
    this.kind = opts.kind;
    this.onRate = opts.onRate;
    this.last = clock.now();
    this.engaged = opts.kind !== 'learning';
    this.slow = opts.kind === 'learning' && opts.slowStart === true ? new SlowStart(clock) : undefined;
    if (this.engaged) {
      const qps = opts.qps ?? Number.NaN;
      const burst = opts.burst ?? Number.NaN;
      if (!(qps > 0) || !Number.isFinite(qps) || !(burst >= 1))
        throw new RangeError(`invalid write budget qps=${qps} burst=${burst}`);
      this.start(qps, Math.floor(burst), Math.floor(burst));
    }
  }

  get qps(): number | undefined {
    return this.engaged ? this.rateAt(this.clock.now()) : undefined;
  }

  async wait(signal: AbortSignal): Promise<void> {
    if (signal.aborted) await sleep(this.clock, 0, signal);
    this.settleLearning();
    if (!this.engaged && this.slow !== undefined) {
      const ms = this.slow.reserve();
      if (ms > 0) await sleep(this.clock, ms, signal);
    }
    // Unpaced, or through the slow start; a throttle while this write waited engaged the pacer,
    // and the write then takes its turn there.
    if (!this.engaged) return;
    await this.waitEngaged(signal);
  }

  private async waitEngaged(signal: AbortSignal): Promise<void> {
    this.refill();
    this.tokens -= 1;
    const epoch = this.epoch;
    const rate = this.rateAt(this.clock.now());
    const debt = this.tokens >= 0 ? 0 : Math.ceil((-this.tokens / rate) * 1000);
    const ms = Math.max(debt, this.blockedUntil - this.clock.now());
    if (ms <= 0) return;
    try {
      await sleep(this.clock, ms, signal);
    } catch (err) {
      // A write that never started gives its reservation back; after a throttle only up to an
      // empty bucket (the cloud's is empty too), so the deferred writes leave no debt behind.
      this.refill();
      this.tokens = Math.min(epoch === this.epoch ? this.burst : 0, this.tokens + 1);
      throw err;
    }
  }

  onSuccess(_startedAt: number): void {
    this.settleLearning();
    if (this.engaged) return void this.refill();
    const now = this.clock.now();
    this.accepted.push(now);
    while (this.accepted.length > 0 && this.accepted[0]! <= now - LEARNING_WINDOW_MS) this.accepted.shift();
  }

  onThrottle(retryAfterMs: number | undefined, startedAt: number): void {
    const now = this.clock.now();
    this.lastThrottleAt = now;
    if (!this.engaged) this.engage(now);
    this.refill();
    // R69: one cut per congestion episode: writes that started before the last cut were sent at the
    // old rate, so their throttled answers tell nothing new.
    if (this.kind !== 'fixed' && startedAt > this.cutAt) this.cut(now);
    // The cloud's bucket is empty: so is ours, and waiters from before do not get their tokens back.
    this.tokens = Math.min(this.tokens, 0);
    this.epoch++;
    const until = now + (retryAfterMs ?? Math.ceil(1000 / this.rateAt(now)));
    this.blockedUntil = Math.max(this.blockedUntil, until);
    this.report(now);
  }

  nextWriteInMs(): number {
    this.settleLearning();
    if (!this.engaged) return this.slow?.nextWriteInMs() ?? 0;
    this.refill();
    const rate = this.rateAt(this.clock.now());
    const debt = this.tokens >= 1 ? 0 : Math.ceil(((1 - this.tokens) / rate) * 1000);
    return Math.max(0, debt, this.blockedUntil - this.clock.now());
  }

  /**
   * R111: a learning pacer's first throttle: what the cloud accepted in the last second is both
   * the rate it sustains at most and, as a bucket, what it takes at once. The cut then follows.
   */
  private engage(now: number): void {
    while (this.accepted.length > 0 && this.accepted[0]! <= now - LEARNING_WINDOW_MS) this.accepted.shift();
    const accepted = this.accepted.length;
    this.accepted.length = 0;
    const qps = Math.max(LEARNING_MIN_QPS, (accepted * 1000) / LEARNING_WINDOW_MS);
    this.engaged = true;
    this.last = now;
    this.start(qps, Math.max(1, accepted), 0);
  }

  /**
   * R111: a learning pacer that has recovered to the rate it engaged at and seen no throttle for
   * LEARNING_QUIET_MS disengages, so a throttle caused by others once does not pace this
   * controller for good. The next throttle engages it again.
   */
  private settleLearning(): void {
    if (this.kind !== 'learning' || !this.engaged) return;
    const now = this.clock.now();
    if (now - this.lastThrottleAt < LEARNING_QUIET_MS || this.rateAt(now) < this.ceiling) return;
    this.engaged = false;
    this.accepted.length = 0;
    // R137: writes that keep flowing carry on from the rate learnt, not from the first 10.
    this.slow?.restartAt(this.ceiling);
  }

  private start(qps: number, burst: number, tokens: number): void {
    this.ceiling = qps;
    this.cutRate = qps;
    this.slope = recoverySlope(qps, qps);
    this.burst = burst;
    this.tokens = tokens;
    this.report(this.clock.now());
  }

  private cut(now: number): void {
    const from = this.rateAt(now);
    this.cutRate = Math.max(this.ceiling / PACER_FLOOR_DIVISOR, from * PACER_DECREASE);
    this.slope = recoverySlope(from, this.ceiling);
    this.cutAt = now;
  }

  /** R69: the rate recovers linearly with the time since the last cut, up to the ceiling. */
  private rateAt(t: number): number {
    if (this.kind === 'fixed' || t <= this.cutAt) return this.cutRate;
    return Math.min(this.ceiling, this.cutRate + (this.slope * (t - this.cutAt)) / 1000);
  }

  private refill(): void {
    const now = this.clock.now();
    if (now <= this.last) return;
    // The rate is piecewise linear in time: the mean of its ends is exact within one piece.
    const mid = (this.rateAt(this.last) + this.rateAt(now)) / 2;
    this.tokens = Math.min(this.burst, this.tokens + ((now - this.last) / 1000) * mid);
    this.last = now;
    this.report(now);
  }

  private report(now: number): void {
    const rate = this.rateAt(now);
    if (rate === this.reported) return;
    this.reported = rate;
    this.onRate?.(rate);
  }
}
