// Watch mode (SPEC §5–6): node events → trigger filter → single-key queue →
// reconcile (against the route cache when it may, R66), plus retry (R46–R47,
// R70), safety resync (R49) and informer-style resync (R50).
import type { Clock, TimerHandle } from '../core/clock.ts';
import { informerResyncMs, resyncDelayMs, retryDelayMs, safetyResyncPeriodMs } from '../core/backoff.ts';
import { nodeUpdateTrigger, type Trigger } from '../core/trigger-filter.ts';
import { RouteWorkQueue } from '../core/work-queue.ts';
import { currentNetworkCondition } from '../core/condition.ts';
import type { NodeEventHandler } from '../core/ports.ts';
import { DEFAULTS, type RouteControllerOptions } from './options.ts';
import type { ReconcileDeps, ReconcileReport, RouteSource } from './reconcile.ts';
import { RouteControllerMetrics, type RouteControllerMetrics as Metrics } from './metrics.ts';
import { cacheMaintenanceHandler } from './periodic-mode.ts';

const Q = { name: RouteControllerMetrics.queueName };

export class WatchMode {
  private readonly opts: RouteControllerOptions;
  private readonly deps: ReconcileDeps;
  private readonly clock: Clock;
  private readonly metrics: Metrics | undefined;
  private readonly reconcileOnce: (
    trigger: Trigger,
    signal: AbortSignal,
    source: RouteSource,
  ) => Promise<ReconcileReport>;
  private readonly queue: RouteWorkQueue;
  private retryTimer: TimerHandle | undefined;
  private resyncTimer: TimerHandle | undefined;
  private informerResyncTimer: TimerHandle | undefined;
  private consecutiveErrors = 0;
  /** R109: listing reconciles in a row whose list was throttled. */
  private throttledLists = 0;
  private hardStop: AbortSignal = new AbortController().signal;
  private readonly minIntervalMs: number;

  constructor(
    opts: RouteControllerOptions,
    deps: ReconcileDeps,
    clock: Clock,
    metrics: Metrics | undefined,
    reconcileOnce: (trigger: Trigger, signal: AbortSignal, source: RouteSource) => Promise<ReconcileReport>,
  ) {
    this.opts = opts;
    this.deps = deps;
    this.clock = clock;
    this.metrics = metrics;
    this.reconcileOnce = reconcileOnce;
    this.minIntervalMs = opts.minReconcileIntervalMs ?? DEFAULTS.minReconcileIntervalMs;
    this.queue = new RouteWorkQueue(
      clock,
      this.minIntervalMs,
      (t, cached) => this.process(t, cached),
      {
        onAdd: (t) => {
          metrics?.queueAdds.inc(Q);
          metrics?.queueDepth.set(Q, 1);
          if (t === 'retry') metrics?.queueRetries.inc(Q);
        },
        onStart: (_t, queuedMs) => {
          metrics?.queueDepth.set(Q, 0);
          metrics?.queueDuration.observe(Q, queuedMs / 1000);
          // R44: a pending retry timer is cancelled when any reconcile starts.
          clock.clearTimeout(this.retryTimer);
          this.retryTimer = undefined;
        },
        onDone: (_t, workMs) => metrics?.workDuration.observe(Q, workMs / 1000),
      },
      // R66: node changes, condition drift and retries may use a valid cache; the safety resync always lists.
      // A retry finds it valid only after known outcomes (R85): anything else dropped it (R65).
      (pending) =>
        deps.cache !== undefined &&
        [...pending].every((t) => t === 'node_change' || t === 'condition_drift' || t === 'retry') &&
        deps.cache.isValid(clock.now()),
    );
    metrics?.setQueueProbe({ runningSeconds: () => this.queue.runningMs() / 1000 });
  }

  /** Exposed for tests: the queue's depth (0 or 1). */
  get depth(): number {
    return this.queue.depth;
  }

  handler(): NodeEventHandler {
    const maintain = cacheMaintenanceHandler(this.deps, this.clock);
    return {
      onAdd: (n) => {
        maintain.onAdd(n);
        this.deps.focus?.nodeChanged(undefined, n);
        this.queue.add('node_change');
      },
      onUpdate: (o, n) => {
        maintain.onUpdate(o, n);
        const t = nodeUpdateTrigger(o, n, this.deps.expectations);
        if (t === 'condition_drift') {
          const c = currentNetworkCondition(n);
          this.deps.logger.info(`NetworkUnavailable of node ${n.metadata?.name} changed by another writer`, {
            status: c?.status,
            reason: c?.reason,
          });
        }
        // R104: what the trigger filter saw change is planned again; so is a new cloud identity (R67).
        if (t === 'node_change' || t === 'condition_drift' || o.spec?.providerID !== n.spec?.providerID)
          this.deps.focus?.nodeChanged(o, n);
        if (t) this.queue.add(t);
      },
      onDelete: (n, tombstone) => {
        maintain.onDelete(n, tombstone);
        this.deps.focus?.nodeChanged(n, undefined);
        this.queue.add('node_change');
      },
    };
  }

  async run(stop: AbortSignal, hardStop: AbortSignal = stop): Promise<void> {
    this.hardStop = hardStop;
    const unsubscribe = this.opts.nodes.addEventHandler(this.handler());
    this.deps.focus?.track(true);
    try {
      // R45: triggers before the initial sync are held; the first reconcile starts at sync.
      if (!(await this.opts.nodes.waitForSync(stop))) return;
      this.queue.add('node_change');
      this.queue.start();
      this.armInformerResync();
      await new Promise<void>((resolve) => {
        if (stop.aborted) resolve();
        else stop.addEventListener('abort', () => resolve(), { once: true });
      });
    } finally {
      unsubscribe();
      this.deps.focus?.track(false);
      for (const t of [this.retryTimer, this.resyncTimer, this.informerResyncTimer])
        this.clock.clearTimeout(t);
      await this.queue.stop();
    }
  }

  private async process(trigger: Trigger, cached: boolean): Promise<void> {
    const report = await this.reconcileOnce(trigger, this.hardStop, cached ? 'cache' : 'list');
    // R49: the resync bounds the age of the last *list*, so every listing reconcile re-arms it, whatever
    // its outcome (a permanent failure, which nothing retries, must not leave the cluster without it);
    // cached reconciles do not postpone it.
    if (report.source === 'list') {
      this.throttledLists = report.listThrottled ? this.throttledLists + 1 : 0;
      this.armSafetyResync();
    }
    const deadline = this.throttleDeadline(report);
    if (deadline !== undefined) this.queue.setThrottleDeadline(deadline);
    if (report.handover) {
      // R67: the cache is gone; a listing reconcile takes over under R44/R47 (R46 if it fails too).
      this.queue.add('node_change');
      return;
    }
    // R85: a permanent failure is a known outcome no retry changes: it neither counts towards n nor
    // decides the retry; a reconcile that failed only so is, for R46, a success.
    const kinds = [...report.failureKinds];
    const onlyPermanent = kinds.length > 0 && kinds.every((k) => k === 'permanent');
    const others = new Set(kinds.filter((k) => k !== 'permanent'));
    if (report.outcome === 'error' && report.throttleOnly) {
      // R70: throttling is no failure to back off from: retry when the cloud and the pacer allow.
      let wait = Math.max(
        0,
        (report.throttleUntil ?? 0) - this.clock.now(),
        this.deps.writeLimiter?.nextWriteInMs() ?? 0,
      );
      // R70: with neither a retry time still ahead nor a pacer, the retry, now cached (R85), keeps the
      // spacing R44 gave it when every retry listed, so an unpaced controller does not hammer the cloud.
      if ((report.throttleUntil ?? 0) <= this.clock.now() && this.deps.writeLimiter === undefined)
        wait = Math.max(wait, this.minIntervalMs - report.durationMs);
      this.armRetry(wait);
    } else if (report.outcome === 'error' && !onlyPermanent) {
      this.consecutiveErrors++;
      const delay = retryDelayMs(this.consecutiveErrors, others, this.deps.random);
      if (delay !== undefined) {
        // R47: in watch mode the retry comes after max(dₙ, retryAfterMs).
        this.armRetry(Math.max(delay, (report.throttleUntil ?? 0) - this.clock.now()));
      }
    } else {
      // changed, noop, or only permanent failures (R46, R85): the next failure starts again at 10 s.
      this.consecutiveErrors = 0;
    }
  }

  /**
   * R47: no reconcile before the cloud's retry time. R112: unpaced (--cloud-write-qps=0), nothing
   * learns the cloud's pace, so after a throttle no reconcile, cached or not, starts sooner than
   * upstream's watch mode would send again: I after the throttled one started.
   */
  private throttleDeadline(report: ReconcileReport): number | undefined {
    const throttled = report.throttleUntil !== undefined || report.failureKinds.has('throttled');
    if (!throttled || this.deps.writeLimiter !== undefined) return report.throttleUntil;
    return Math.max(report.throttleUntil ?? 0, this.clock.now() - report.durationMs + this.minIntervalMs);
  }

  private armRetry(waitMs: number): void {
    this.clock.clearTimeout(this.retryTimer);
    this.retryTimer = this.clock.setTimeout(() => {
      this.retryTimer = undefined;
      this.queue.add('retry');
    }, waitMs);
  }

  /**
   * R49: re-armed after each listing reconcile, whatever its outcome; failures do not cancel it.
   * R109: after a throttled list, 0.1 P, doubling with each one in a row, up to P: the cloud's
   * capacity goes to writes meanwhile (they plan against the cache the throttled list left as it
   * was), and the resync still comes within a fraction of P of the throttle's end.
   */
  private armSafetyResync(): void {
    const p = this.opts.routeResyncPeriodMs ?? DEFAULTS.routeResyncPeriodMs;
    if (p <= 0) return;
    const period = safetyResyncPeriodMs(p, this.throttledLists);
    this.clock.clearTimeout(this.resyncTimer);
    this.resyncTimer = this.clock.setTimeout(
      () => {
        this.resyncTimer = undefined;
        this.queue.add('periodic');
      },
      resyncDelayMs(period, this.deps.random),
    );
  }

  /**
   * R50: upstream's informer resync notifies an update(n, n) for every cached
   * node every R; R41(a) folds them into one `periodic` reconcile, so one
   * trigger when the cache is non-empty is the same.
   */
  private armInformerResync(): void {
    const m = this.opts.minResyncPeriodMs ?? DEFAULTS.minResyncPeriodMs;
    if (m <= 0) return;
    const r = informerResyncMs(m, this.deps.random);
    const tick = (): void => {
      const nodes = this.opts.nodes.list();
      const h = this.handler();
      for (const n of nodes) h.onUpdate(n, n);
      this.informerResyncTimer = this.clock.setTimeout(tick, r);
    };
    this.informerResyncTimer = this.clock.setTimeout(tick, r);
  }
}
