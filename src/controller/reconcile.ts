// One reconcile (SPEC §3): list routes (or read the route cache, R66), plan,
// execute while writing conditions as nodes become routed (R106), report.
// reconcileFrom reads as its steps; each lives in reconcile-steps.ts, and the
// report they build in reconcile-run.ts.
import type { Cidr } from '../core/cidr.ts';
import type { Clock } from '../core/clock.ts';
import type { ErrorKind } from '../core/errors.ts';
import type { ConditionExpectations } from '../core/expectations.ts';
import type { ReconcilePlan } from '../core/plan.ts';
import type { FocusMarks, PlanFocus } from '../core/plan-focus.ts';
import type { EventRecorder, Logger, NodeStatusWriter } from '../core/ports.ts';
import type { RouteCache } from '../core/route-cache.ts';
import type { NodeLister, Routes } from '../core/types.ts';
import type { WritePacer } from '../core/write-pacer.ts';
import type { CloudCaller } from './cloud-call.ts';
import type { CreationLatencyTracker } from './creation-latency.ts';
import type { ThrottleProbe } from './executor.ts';
import type { Outcome, RouteControllerMetrics, Trigger } from './metrics.ts';
import { NodeConditions } from './node-conditions.ts';
import type { OncePerNode } from './once-per-node.ts';
import { NOTHING_DONE, ReconcileRun } from './reconcile-run.ts';
import {
  dryRun,
  execute,
  finishConditions,
  listFailed,
  listRoutes,
  outcomeOf,
  planWork,
  refreshCache,
  settleCache,
  tally,
} from './reconcile-steps.ts';

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

export async function reconcile(
  deps: ReconcileDeps,
  trigger: Trigger,
  signal: AbortSignal,
  requested: RouteSource = 'list',
): Promise<ReconcileReport> {
  const start = deps.clock.now();
  const cached = requested === 'cache' && deps.cache?.isValid(start) === true;
  // R103: a cached reconcile with a focus reads only the closure of the marked nodes.
  const marks = cached && deps.focus?.ready === true ? deps.focus.take() : undefined;
  try {
    return await reconcileFrom(deps, trigger, signal, start, cached, marks);
  } catch (err) {
    // R105: whatever stopped this reconcile, its marks are planned again.
    if (marks !== undefined) deps.focus?.restore(marks);
    throw err;
  }
}

// R103: a focused reconcile reads the marked nodes' closure and their routes from the cache.
async function reconcileFrom(
  deps: ReconcileDeps,
  trigger: Trigger,
  signal: AbortSignal,
  start: number,
  cached: boolean,
  marks: FocusMarks | undefined,
): Promise<ReconcileReport> {
  const focused = marks === undefined ? undefined : deps.focus!.view(marks, deps.nodes, deps.cache!);
  const snapshot = focused?.routes ?? (cached ? deps.cache!.snapshot(start) : undefined);
  const run = new ReconcileRun(deps, trigger, start, snapshot === undefined ? 'list' : 'cache');

  const listed = await listRoutes(deps, run, snapshot, signal);
  if (!listed.ok) return listFailed(deps, run, listed);
  // R12: one read of the node cache, used throughout.
  const nodes = focused?.nodes ?? deps.nodes.list();
  if (!refreshCache(deps, run, snapshot, listed.value, nodes))
    return run.finish('noop', NOTHING_DONE, undefined);
  const work = planWork(deps, run, nodes, listed.value, snapshot);
  if (deps.dryRun) return dryRun(deps, run, work.plan);

  // R106: a node whose routes all exist is written now, the others as their creates succeed.
  const conditions = new NodeConditions(work.plan, deps, signal);
  conditions.start();
  const exec = await execute(deps, run, work, conditions, signal);
  const counts = tally(deps, run, work, exec);
  settleCache(deps, run, work.plan, exec);
  const cond = await finishConditions(deps, run, work, exec, conditions);
  return run.finish(outcomeOf(counts, cond), { ...counts, conditions: cond.written }, work.plan, exec);
}
