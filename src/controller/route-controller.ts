// RouteController: wires the reconcile to a node source in periodic mode
// (SPEC §4) or watch mode (SPEC §5–6).
import { parseCIDR, type Cidr } from '../core/cidr.ts';
import { RealClock, type Clock } from '../core/clock.ts';
import { ConditionExpectations } from '../core/expectations.ts';
import { RequestRateLimiter } from '../core/rate-limiter.ts';
import { nopLogger, noopRecorder, type Logger } from '../core/ports.ts';
import type { Trigger } from '../core/trigger-filter.ts';
import { CloudCaller } from './cloud-call.ts';
import { CreationLatencyTracker } from './creation-latency.ts';
import { RouteControllerMetrics } from './metrics.ts';
import { OncePerNode } from './once-per-node.ts';
import { DEFAULTS, defaultWriteBurst, type RouteControllerOptions } from './options.ts';
import { runPeriodic } from './periodic-mode.ts';
import { reconcile, type ReconcileDeps, type ReconcileReport } from './reconcile.ts';
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
    this.deps = {
      routes: options.routes,
      caller,
      nodes: options.nodes,
      statusWriter: {
        patchNodeCondition: (node, condition, signal) =>
          writer.patchNodeCondition(node, condition, signal).finally(progress),
      },
      recorder: options.dryRun ? noopRecorder : (options.recorder ?? noopRecorder),
      logger: this.logger,
      clock: this.clock,
      random: options.random ?? Math.random,
      metrics: this.metrics,
      clusterName: options.clusterName ?? DEFAULTS.clusterName,
      clusterCIDRs: this.clusterCIDRs,
      maxConcurrent: options.maxConcurrentRouteOperations ?? DEFAULTS.maxConcurrentRouteOperations,
      writeLimiter: writeLimiter(options, this.clock),
      dryRun: options.dryRun ?? false,
      expectations: new ConditionExpectations(),
      latency: new CreationLatencyTracker(),
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

  /** One reconcile now, whatever the mode (used by `plan` and tests). */
  async reconcileOnce(trigger: Trigger, signal: AbortSignal): Promise<ReconcileReport> {
    this.reconcileStartedAt = this.clock.now();
    const start = this.reconcileStartedAt;
    try {
      const report = await reconcile(this.deps, trigger, signal);
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
    try {
      if (this.watchMode) {
        await new WatchMode(this.opts, this.deps, this.clock, this.metrics, (t, s) =>
          this.reconcileOnce(t, s),
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

/** The shared cloud write budget, or undefined when unpaced (qps 0 or absent). */
function writeLimiter(options: RouteControllerOptions, clock: Clock): RequestRateLimiter | undefined {
  const qps = options.cloudWriteQPS ?? 0;
  if (!Number.isFinite(qps) || qps < 0)
    throw new RouteControllerConfigError(`RouteController: cloudWriteQPS must be >= 0, got ${qps}`);
  if (qps === 0) return undefined;
  const burst = options.cloudWriteBurst ?? defaultWriteBurst(qps);
  if (!Number.isInteger(burst) || burst < 1)
    throw new RouteControllerConfigError(
      `RouteController: cloudWriteBurst must be an integer >= 1, got ${burst}`,
    );
  return new RequestRateLimiter(clock, qps, burst);
}
