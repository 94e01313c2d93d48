// The single-key coalescing queue of watch mode (SPEC R43–R45, R48): a pending
// flag plus pending triggers, one worker. Unlike client-go's token-bucket rate
// limiter nothing accrues per event: a trigger waits at most until
// max(lastListStart + I, end of the running reconcile, throttle deadline), and
// a reconcile that may run against the route cache (R66) skips the interval.
import type { Clock, TimerHandle } from './clock.ts';
import { labelOf, type Trigger } from './trigger-filter.ts';

export interface WorkQueueHooks {
  /** A trigger set the pending flag (client-go's "add" that inserts). */
  onAdd?(trigger: Trigger): void;
  /** A reconcile starts; `queuedMs` since the first pending trigger. */
  onStart?(trigger: Trigger, queuedMs: number): void;
  onDone?(trigger: Trigger, workMs: number): void;
}

export class RouteWorkQueue {
  private readonly clock: Clock;
  private readonly minIntervalMs: number;
  private readonly process: (trigger: Trigger, cached: boolean) => Promise<void>;
  private readonly hooks: WorkQueueHooks;
  private readonly cacheUsable: (pending: ReadonlySet<Trigger>) => boolean;
  private readonly pending = new Set<Trigger>();
  private pendingSince = 0;
  private running: Promise<void> | undefined;
  private runningSince = 0;
  /** Start of the last listing reconcile: R44 spaces lists, not cached reconciles. */
  private lastListStart: number | undefined;
  private throttleUntil = 0;
  private timer: TimerHandle | undefined;
  private timerAt = 0;
  private started = false;
  private stopped = false;

  constructor(
    clock: Clock,
    minIntervalMs: number,
    process: (trigger: Trigger, cached: boolean) => Promise<void>,
    hooks: WorkQueueHooks = {},
    /** R66: whether these pending triggers may run against the route cache now. */
    cacheUsable: (pending: ReadonlySet<Trigger>) => boolean = () => false,
  ) {
    this.clock = clock;
    this.minIntervalMs = minIntervalMs;
    this.process = process;
    this.hooks = hooks;
    this.cacheUsable = cacheUsable;
  }

  /** R45: triggers before start() are held. */
  start(): void {
    if (this.stopped) return;
    this.started = true;
    this.schedule();
  }

  add(trigger: Trigger): void {
    if (this.stopped) return;
    if (this.pending.size === 0) {
      this.pendingSince = this.clock.now();
      this.hooks.onAdd?.(trigger);
    }
    this.pending.add(trigger);
    this.schedule();
  }

  /** R47: no reconcile starts before `at` (latest wins). */
  setThrottleDeadline(at: number): void {
    this.throttleUntil = at;
    this.schedule();
  }

  get depth(): number {
    return this.pending.size > 0 ? 1 : 0;
  }

  get isRunning(): boolean {
    return this.running !== undefined;
  }

  /** Milliseconds the current reconcile has been running (0 when idle). */
  runningMs(): number {
    return this.running ? this.clock.now() - this.runningSince : 0;
  }

  /** When the pending reconcile may start, or undefined if nothing is pending. */
  nextStartAt(): number | undefined {
    if (this.pending.size === 0 || !this.started) return undefined;
    const earliest =
      this.lastListStart === undefined || this.cacheUsable(this.pending)
        ? 0
        : this.lastListStart + this.minIntervalMs;
    return Math.max(this.clock.now(), earliest, this.throttleUntil);
  }

  /** Stops scheduling; resolves when a running reconcile has finished. */
  async stop(): Promise<void> {
    this.stopped = true;
    this.clock.clearTimeout(this.timer);
    this.timer = undefined;
    await this.running;
  }

  private schedule(): void {
    if (this.stopped || this.running) return;
    const at = this.nextStartAt();
    if (at === undefined) return;
    if (this.timer && this.timerAt === at) return;
    this.clock.clearTimeout(this.timer);
    this.timerAt = at;
    this.timer = this.clock.setTimeout(() => {
      this.timer = undefined;
      this.fire();
    }, at - this.clock.now());
  }

  private fire(): void {
    if (this.stopped || this.running || this.pending.size === 0) return;
    const at = this.nextStartAt()!;
    if (at > this.clock.now()) {
      this.schedule();
      return;
    }
    // R43: pending state is cleared when the reconcile starts, before it reads the cache.
    const trigger = labelOf(this.pending);
    const cached = this.cacheUsable(this.pending);
    const queuedMs = this.clock.now() - this.pendingSince;
    this.pending.clear();
    this.runningSince = this.clock.now();
    if (!cached) this.lastListStart = this.runningSince;
    this.hooks.onStart?.(trigger, queuedMs);
    this.running = this.process(trigger, cached)
      .catch(() => {})
      .finally(() => {
        this.running = undefined;
        this.hooks.onDone?.(trigger, this.clock.now() - this.runningSince);
        this.schedule();
      });
  }
}
