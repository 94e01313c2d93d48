// RouteController options (R10): the daemon's flags plus library-only knobs.
import type { Registry } from 'prom-client';
import type { Clock } from '../core/clock.ts';
import type { EventRecorder, Logger, NodeSource, NodeStatusWriter } from '../core/ports.ts';
import type { Routes } from '../core/types.ts';
import type { WriteLimit } from '../core/write-pacer.ts';
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
  /** --route-resync-period, watch-mode safety resync (default 30 min; 0 disables). */
  readonly routeResyncPeriodMs?: number;
  /** --min-resync-period, upstream's informer resync (default 12 h). */
  readonly minResyncPeriodMs?: number;
  /** Minimum interval between reconcile starts in watch mode (default 10 s). */
  readonly minReconcileIntervalMs?: number;
  /** Create+delete calls in flight per reconcile (default 200). */
  readonly maxConcurrentRouteOperations?: number;
  /**
   * --cloud-write-qps: client-side budget for route writes (create, delete,
   * applyRoutes) across reconciles (R68–R70). `'auto'` (default): adaptive,
   * starting from `cloudWriteLimit`, in watch mode; unpaced in periodic mode or
   * when the provider declares no limit. 0: unpaced, as upstream. N > 0: a
   * fixed budget of N writes per second in both modes.
   */
  readonly cloudWriteQPS?: number | 'auto';
  /** --cloud-write-burst (default: the budget's own; for a fixed N, max(1, ⌈2 × N⌉)). */
  readonly cloudWriteBurst?: number;
  /**
   * The cloud's documented write limit (`CloudProvider.writeLimit`); the adaptive
   * budget starts a little under it. `'unlimited'` or absent: unpaced under 'auto'.
   */
  readonly cloudWriteLimit?: WriteLimit | 'unlimited';
  /**
   * --route-cache (default true): watch-mode node changes reconcile against the
   * route cache instead of a fresh listRoutes (R65–R67). false: every reconcile lists.
   */
  readonly routeCache?: boolean;
  /**
   * (default true) A cached reconcile plans only the nodes that changed and what
   * they touch (R103–R105). false: it plans every node, as a listing one does;
   * the writes are the same (a property test holds them equal), only the CPU differs.
   */
  readonly incrementalPlanning?: boolean;
  /** The provider's `routeTargetKeys` (R67); default: uid, providerID and addresses. */
  readonly routeTargetKeys?: readonly ('uid' | 'providerID' | 'addresses')[];
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
  routeResyncPeriodMs: 1_800_000,
  minResyncPeriodMs: 12 * 3_600_000,
  minReconcileIntervalMs: 10_000,
  maxConcurrentRouteOperations: 200,
  cloudCallTimeoutMs: 5 * 60_000,
} as const;

/** The write burst when only the rate is given: two seconds' worth, like the bench's clouds. */
export const defaultWriteBurst = (qps: number): number => Math.max(1, Math.ceil(2 * qps));
