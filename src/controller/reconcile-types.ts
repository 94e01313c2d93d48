// The reconcile's inputs and its report (SPEC §3, §6): shared by reconcile.ts, its steps
// (reconcile-steps.ts) and the run that builds the report (reconcile-run.ts), which would
// otherwise import each other.
import type { Cidr } from '../core/cidr.ts';
import type { Clock } from '../core/clock.ts';
import type { ErrorKind } from '../core/errors.ts';
import type { ConditionExpectations } from '../core/expectations.ts';
import type { ReconcilePlan } from '../core/plan.ts';
import type { PlanFocus } from '../core/plan-focus.ts';
import type { EventRecorder, Logger, NodeStatusWriter } from '../core/ports.ts';
import type { RouteCache } from '../core/route-cache.ts';
import type { NodeLister, Routes } from '../core/types.ts';
import type { WritePacer } from '../core/write-pacer.ts';
import type { CloudCaller } from './cloud-call.ts';
import type { CreationLatencyTracker } from './creation-latency.ts';
import type { ThrottleProbe } from './executor.ts';
import type { Outcome, RouteControllerMetrics, Trigger } from './metrics.ts';
import type { OncePerNode } from './once-per-node.ts';

export interface ReconcileDeps {
  readonly routes: Routes;
  readonly caller: CloudCaller;
  readonly nodes: NodeLister;
  readonly statusWriter: NodeStatusWriter;
  readonly recorder: EventRecorder;
  readonly logger: Logger;
  readonly clock: Clock;
  readonly random: () => number;
  readonly metrics: RouteControllerMetrics | undefined;
  readonly clusterName: string;
  readonly clusterCIDRs: readonly Cidr[];
  readonly maxConcurrent: number;
  /** R68–R70 (--cloud-write-qps/--cloud-write-burst); undefined: unpaced, as upstream. */
  readonly writeLimiter: WritePacer | undefined;
  /** R65: the route cache; undefined when the fast path is off (periodic mode, dry run, --route-cache=false). */
  readonly cache: RouteCache | undefined;
  /** R103: set with the route cache: a cached reconcile plans only around what changed. */
  readonly focus?: PlanFocus | undefined;
  /** R86: set with the route cache when no write pacer runs. */
  readonly throttleProbe?: ThrottleProbe | undefined;
  readonly dryRun: boolean;
  readonly expectations: ConditionExpectations;
  readonly latency: CreationLatencyTracker;
  /** Process-wide "once per (UID, CIDR)" memory for E3 events and R16 logs. */
  readonly reported: OncePerNode;
}

export interface ReconcileReport {
  readonly id: string;
  readonly trigger: Trigger;
  readonly outcome: Outcome;
  readonly created: number;
  readonly deleted: number;
  readonly failed: number;
  readonly deferred: number;
  readonly conditions: number;
  readonly durationMs: number;
  /** R47 deadline (absolute ms). */
  readonly throttleUntil: number | undefined;
  /** R47 fired, and nothing but throttling (and permanent failures, R85) went wrong (R70: no R46 escalation). */
  readonly throttleOnly: boolean;
  /** Where the routes came from: a listRoutes call, or the route cache (R66). */
  readonly source: RouteSource;
  /** R109: its listRoutes was throttled (the cloud told nothing; the cache stays as it was). */
  readonly listThrottled: boolean;
  /** R67: a cached reconcile that needs a listing one after it (the cache was dropped). */
  readonly handover: boolean;
  /** Kinds of the failures behind an `error` outcome (R46 decides the retry from them). */
  readonly failureKinds: ReadonlySet<ErrorKind | 'timeout' | 'list' | 'condition'>;
  readonly plan: ReconcilePlan | undefined;
  /** Set when the reconcile failed as a whole (R11). */
  readonly error?: string;
}

export type RouteSource = 'list' | 'cache';
