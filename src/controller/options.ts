// RouteController options (R10): the daemon's flags plus library-only knobs.
import type { Registry } from 'prom-client';
import type { Clock } from '../core/clock.ts';
import type { EventRecorder, Logger, NodeSource, NodeStatusWriter } from '../core/ports.ts';
import type { Routes } from '../core/types.ts';
import type { RouteControllerMetrics } from './metrics.ts';
import type { ReconcileReport } from './reconcile.ts';

export interface RouteControllerOptions {
  readonly routes: Routes;
  readonly nodes: NodeSource;
  readonly statusWriter: NodeStatusWriter;
  readonly recorder?: EventRecorder;
  readonly logger?: Logger;
  /** --cluster-cidr: 1–2 CIDRs, one per family. */
  readonly clusterCIDRs: readonly string[];
  /** --cluster-name (default `kubernetes`). */
  readonly clusterName?: string;
  /** Feature gate CloudControllerManagerWatchBasedRoutesReconciliation (default false). */
  readonly watchBasedReconciliation?: boolean;
  /** --route-reconciliation-period, periodic mode (default 10 s). */
  readonly routeReconciliationPeriodMs?: number;
  /** --route-resync-period, watch-mode safety resync (default 1 h; 0 disables). */
  readonly routeResyncPeriodMs?: number;
  /** --min-resync-period, upstream's informer resync (default 12 h). */
  readonly minResyncPeriodMs?: number;
  /** Minimum interval between reconcile starts in watch mode (default 10 s). */
  readonly minReconcileIntervalMs?: number;
  /** Create+delete calls in flight per reconcile (default 200). */
  readonly maxConcurrentRouteOperations?: number;
  /**
   * --cloud-write-qps: client-side budget for route writes (create, delete,
   * applyRoutes) across reconciles; 0 or absent: unpaced, as upstream.
   */
  readonly cloudWriteQPS?: number;
  /** --cloud-write-burst (default: max(1, ⌈2 × qps⌉)). */
  readonly cloudWriteBurst?: number;
  /** Timeout of every provider call (default 5 min). */
  readonly cloudCallTimeoutMs?: number;
  readonly dryRun?: boolean;
  readonly clock?: Clock;
  readonly random?: () => number;
  /** Metrics are registered here (or pass ready-made `metrics`). */
  readonly registry?: Registry;
  readonly metrics?: RouteControllerMetrics;
  /** Observer for each finished reconcile (tests, simulator, `plan`). */
  readonly onReconcile?: (report: ReconcileReport) => void;
}

export const DEFAULTS = {
  clusterName: 'kubernetes',
  routeReconciliationPeriodMs: 10_000,
  routeResyncPeriodMs: 3_600_000,
  minResyncPeriodMs: 12 * 3_600_000,
  minReconcileIntervalMs: 10_000,
  maxConcurrentRouteOperations: 200,
  cloudCallTimeoutMs: 5 * 60_000,
} as const;

/** The write burst when only the rate is given: two seconds' worth, like the bench's clouds. */
export const defaultWriteBurst = (qps: number): number => Math.max(1, Math.ceil(2 * qps));
