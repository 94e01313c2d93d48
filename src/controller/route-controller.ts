// RouteController: wires the reconcile to a node source in periodic mode
// (SPEC §4) or watch mode (SPEC §5–6).
import { parseCIDR, type Cidr } from '../core/cidr.ts';
import { RealClock, type Clock } from '../core/clock.ts';
import { ConditionExpectations } from '../core/expectations.ts';
import { PlanFocus } from '../core/plan-focus.ts';
import { RouteCache } from '../core/route-cache.ts';
import { AdaptiveWritePacer, budgetForLimit, type WritePacer } from '../core/write-pacer.ts';
import { nopLogger, noopRecorder, type Logger } from '../core/ports.ts';
import type { Trigger } from '../core/trigger-filter.ts';
import { CloudCaller } from './cloud-call.ts';
import { CreationLatencyTracker } from './creation-latency.ts';
import { RouteControllerMetrics } from './metrics.ts';
import { SecondWriterDetector } from './second-writer.ts';
import { OncePerNode } from './once-per-node.ts';
import { DEFAULTS, defaultWriteBurst, type RouteControllerOptions } from './options.ts';
import { runPeriodic } from './periodic-mode.ts';
import { reconcile, type ReconcileDeps, type ReconcileReport, type RouteSource } from './reconcile.ts';
import { RouteTableRoomTracker, withRouteTableRoom, type RoomView } from './route-table-room.ts';
import { WatchMode } from './watch-mode.ts';

export class RouteControllerConfigError extends Error {
  override readonly name = 'RouteControllerConfigError';
}

export interface RouteControllerStatus {
  readonly synced: boolean;
  /** Start time (ms) of the running reconcile, if any. */
  readonly reconcileStartedAt: number | undefined;
  /** Last time a provider call or condition write settled (ms). */
  readonly lastProgressAt: number;
}

export class RouteController {
  readonly metrics: RouteControllerMetrics | undefined;
  readonly clusterCIDRs: readonly Cidr[];
  private readonly opts: RouteControllerOptions;
  private readonly clock: Clock;
  private readonly logger: Logger;
  private readonly deps: ReconcileDeps;
  private readonly room: RouteTableRoomTracker;
  private reconcileStartedAt: number | undefined;
  private lastProgressAt: number;

  constructor(options: RouteControllerOptions) {
    if (options.clusterCIDRs.length === 0)
      throw new RouteControllerConfigError('RouteController: Must specify clusterCIDR.');
    this.opts = options;
    this.clock = options.clock ?? new RealClock();
    this.logger = options.logger ?? nopLogger;
    this.clusterCIDRs = options.clusterCIDRs.map((c) => parseCIDR(c));
    this.metrics =
      options.metrics ?? (options.registry ? new RouteControllerMetrics(options.registry) : undefined);
    this.lastProgressAt = this.clock.now();
    const progress = (): void => {
      this.lastProgressAt = this.clock.now();
    };
    const caller = new CloudCaller({
      clock: this.clock,
      logger: this.logger,
      metrics: this.metrics,
      timeoutMs: options.cloudCallTimeoutMs ?? DEFAULTS.cloudCallTimeoutMs,
      onProgress: progress,
    });
    const writer = options.statusWriter;
    const writeLimiter = writePacer(options, this.clock, this.metrics);
    const cache = routeCache(options);
    this.room = new RouteTableRoomTracker({
      clusterCIDRs: this.clusterCIDRs,
      metrics: this.metrics,
      logger: this.logger,
    });
    const recorder = options.dryRun ? noopRecorder : (options.recorder ?? noopRecorder);
    // R123: every list is checked for route changes that were not ours.
    const writers = new SecondWriterDetector({
      clusterCIDRs: this.clusterCIDRs,
      nodes: options.nodes,
      recorder,
      logger: this.logger,
      clock: this.clock,
      metrics: this.metrics,
    });
    this.deps = {
      // R115–R117: the room is read with each list and kept by the writes (innermost: it asks the
      // provider's own routeTableRoom); R123: every list is checked for changes that were not ours.
      routes: writers.wrap(withRouteTableRoom(options.routes, this.room, this.logger)),
      caller,
      nodes: options.nodes,
      statusWriter: {
        patchNodeCondition: (node, condition, signal) =>
          writer.patchNodeCondition(node, condition, signal).finally(progress),
      },
      recorder,
      logger: this.logger,
      clock: this.clock,
      random: options.random ?? Math.random,
      metrics: this.metrics,
      clusterName: options.clusterName ?? DEFAULTS.clusterName,
      clusterCIDRs: this.clusterCIDRs,
      maxConcurrent: options.maxConcurrentRouteOperations ?? DEFAULTS.maxConcurrentRouteOperations,
      writeLimiter,
      cache,
      focus: cache === undefined || options.incrementalPlanning === false ? undefined : new PlanFocus(),
      // R86: with the route cache and no pacer, nothing else remembers a throttle between reconciles.
      throttleProbe: cache !== undefined && writeLimiter === undefined ? { throttled: false } : undefined,
      dryRun: options.dryRun ?? false,
      expectations: new ConditionExpectations(),
      latency: new CreationLatencyTracker(this.clock.now()),
      reported: new OncePerNode(),
    };
  }

  get watchMode(): boolean {
    return this.opts.watchBasedReconciliation ?? false;
  }

  status(): RouteControllerStatus {
    return {
      synced: this.opts.nodes.hasSynced(),
      reconcileStartedAt: this.reconcileStartedAt,
      lastProgressAt: this.lastProgressAt,
    };
  }

  /** R116: the route table's room as last read and kept since; undefined if the provider cannot tell. */
  routeTableRoom(): RoomView | undefined {
    return this.room.view();
  }

  /** One reconcile now, whatever the mode (used by `plan` and tests). */
  async reconcileOnce(
    trigger: Trigger,
    signal: AbortSignal,
    source: RouteSource = 'list',
  ): Promise<ReconcileReport> {
    this.reconcileStartedAt = this.clock.now();
    const start = this.reconcileStartedAt;
    try {
      const report = await reconcile(this.deps, trigger, signal, source);
      if (report.source === 'cache') this.metrics?.cachedReconciles.inc();
      if (report.error !== undefined) this.logger.error(`Couldn't reconcile node routes: ${report.error}`);
      this.metrics?.routeSync.inc({ trigger, outcome: report.outcome });
      this.metrics?.reconcileDuration.observe({ trigger }, report.durationMs / 1000);
      if (report.outcome === 'changed' || report.outcome === 'noop') {
        this.metrics?.lastSuccess.set(this.clock.now() / 1000);
      }
      this.opts.onReconcile?.(report);
      return report;
    } finally {
      if (this.reconcileStartedAt === start) this.reconcileStartedAt = undefined;
    }
  }

  /**
   * Runs until `signal` aborts: no new reconcile starts after that. In-flight
   * cloud calls are aborted by `hardStop` (default: the same signal); the
   * daemon passes a later one to let a running reconcile finish (R63).
   */
  async run(signal: AbortSignal, hardStop: AbortSignal = signal): Promise<void> {
    const mode = this.watchMode ? 'watch' : 'periodic';
    this.logger.info('Starting route controller', {
      mode,
      clusterName: this.deps.clusterName,
      clusterCIDRs: this.clusterCIDRs.map((c) => c.canonical),
    });
    this.metrics?.runningControllers.set({ name: 'route' }, 1);
    // R65: a new run (start, or leadership won again) trusts no earlier view of the cloud.
    this.deps.cache?.invalidate();
    try {
      if (this.watchMode) {
        await new WatchMode(this.opts, this.deps, this.clock, this.metrics, (t, s, src) =>
          this.reconcileOnce(t, s, src),
        ).run(signal, hardStop);
      } else {
        await runPeriodic(
          this.opts,
          this.deps,
          this.clock,
          (t, s) => this.reconcileOnce(t, s),
          signal,
          hardStop,
        );
      }
    } finally {
      this.metrics?.runningControllers.set({ name: 'route' }, 0);
      this.logger.info('Shutting down route controller');
    }
  }
}

/**
 * R68: the shared cloud write pacer, or undefined when unpaced (`0`). 'auto' is
 * adaptive from the provider's documented limit in watch mode; without one, and
 * in periodic mode (upstream's pace until the cloud objects), it learns the
 * cloud's pace from its first throttle (R111).
 */
function writePacer(
  options: RouteControllerOptions,
  clock: Clock,
  metrics: RouteControllerMetrics | undefined,
): WritePacer | undefined {
  const qps = options.cloudWriteQPS ?? 'auto';
  const burstFlag = options.cloudWriteBurst;
  if (burstFlag !== undefined && burstFlag !== 0 && (!Number.isInteger(burstFlag) || burstFlag < 1))
    throw new RouteControllerConfigError(
      `RouteController: cloudWriteBurst must be an integer >= 1, got ${burstFlag}`,
    );
  const onRate = (r: number): void => metrics?.cloudWriteBudget.set(r);
  if (qps === 'auto') {
    const limit = options.cloudWriteLimit;
    const watch = options.watchBasedReconciliation ?? false;
    if (!watch || limit === undefined || limit === 'unlimited') {
      // R137: a cloud that says it has no limit is not probed slowly, nor is one in periodic mode,
      // whose period already spaces the retries and where a throttle costs a whole period.
      const slowStart = watch && limit !== 'unlimited';
      return new AdaptiveWritePacer(clock, { kind: 'learning', onRate, slowStart });
    }
    const budget = budgetForLimit(limit);
    const burst = burstFlag || budget.burst;
    return new AdaptiveWritePacer(clock, { kind: 'adaptive', qps: budget.qps, burst, onRate });
  }
  if (!Number.isFinite(qps) || qps < 0)
    throw new RouteControllerConfigError(`RouteController: cloudWriteQPS must be >= 0 or 'auto', got ${qps}`);
  if (qps === 0) return undefined;
  const burst = burstFlag || defaultWriteBurst(qps);
  return new AdaptiveWritePacer(clock, { kind: 'fixed', qps, burst, onRate });
}

/**
 * R65: the route cache of watch mode. It expires after twice the safety
 * resync period P (the resync, 0.9–1.1 P after the last list, refills it
 * first unless the cloud throttled its list, R109), or after the
 * informer-style period when P is 0, so the cache that node changes plan
 * against stays within a small multiple of the drift bound an operator chose.
 */
function routeCache(options: RouteControllerOptions): RouteCache | undefined {
  if (!(options.watchBasedReconciliation ?? false) || options.dryRun || options.routeCache === false)
    return undefined;
  const p = options.routeResyncPeriodMs ?? DEFAULTS.routeResyncPeriodMs;
  return new RouteCache(
    // R65: past the latest resync (1.1 P) and the deferrals of a throttled one (R109).
    p > 0 ? 2 * p : (options.minResyncPeriodMs ?? DEFAULTS.minResyncPeriodMs),
    options.routeTargetKeys,
  );
}
