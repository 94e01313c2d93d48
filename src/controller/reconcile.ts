// One reconcile (SPEC §3): list routes (or read the route cache, R66), plan,
// execute while writing conditions as nodes become routed (R106), report.
import type { Cidr } from '../core/cidr.ts';
import type { Clock } from '../core/clock.ts';
import { dryRunConditionPatches } from '../core/condition.ts';
import { formatDuration } from '../core/duration.ts';
import { errorMessage, type ErrorKind } from '../core/errors.ts';
import type { ConditionExpectations } from '../core/expectations.ts';
import { planReconcile, type PlannedCreate, type PlannedDelete, type ReconcilePlan } from '../core/plan.ts';
import type { FocusMarks, PlanFocus } from '../core/plan-focus.ts';
import type { EventRecorder, Logger, NodeStatusWriter } from '../core/ports.ts';
import type { RouteCache } from '../core/route-cache.ts';
import type { NodeLister, Routes } from '../core/types.ts';
import type { WritePacer } from '../core/write-pacer.ts';
import type { CloudCaller } from './cloud-call.ts';
import type { CreationLatencyTracker } from './creation-latency.ts';
import { executePlan, type ExecutionResult, type OpResult, type ThrottleProbe } from './executor.ts';
import type { Outcome, RouteControllerMetrics, Trigger } from './metrics.ts';
import { logDryRunPlan, logNodeActions, reportPlanProblems } from './plan-report.ts';
import { NodeConditions } from './node-conditions.ts';
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

let seq = 0;

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

async function reconcileFrom(
  deps: ReconcileDeps,
  trigger: Trigger,
  signal: AbortSignal,
  start: number,
  cached: boolean,
  marks: FocusMarks | undefined,
): Promise<ReconcileReport> {
  const { clock, logger } = deps;
  const id = `${start.toString(36)}-${(++seq).toString(36)}`;
  const scope = { id, scratch: new Map<string, unknown>() };
  const failureKinds = new Set<ErrorKind | 'timeout' | 'list' | 'condition'>();
  const focused = marks === undefined ? undefined : deps.focus!.view(marks, deps.nodes, deps.cache!);
  const snapshot = focused?.routes ?? (cached ? deps.cache!.snapshot(start) : undefined);
  const source: RouteSource = snapshot === undefined ? 'list' : 'cache';
  let handover = false;
  let listThrottled = false;
  const finish = (
    outcome: Outcome,
    counts: { created: number; deleted: number; failed: number; deferred: number; conditions: number },
    plan: ReconcilePlan | undefined,
    exec?: ExecutionResult,
    error?: string,
  ): ReconcileReport => {
    const throttled = exec?.throttled === true || exec?.throttleUntil !== undefined;
    const report: ReconcileReport = {
      ...(error === undefined ? {} : { error }),
      id,
      trigger,
      outcome,
      ...counts,
      durationMs: clock.now() - start,
      throttleUntil: exec?.throttleUntil,
      // R85: permanent failures beside the throttle change nothing about when to retry.
      throttleOnly:
        throttled &&
        [...failureKinds].every(
          (k) => k === 'throttled' || k === 'permanent' || (k === 'list' && listThrottled),
        ),
      source,
      listThrottled,
      handover,
      failureKinds,
      plan,
    };
    logger.info('Route reconcile finished', {
      trigger,
      source,
      outcome,
      created: counts.created,
      deleted: counts.deleted,
      failed: counts.failed,
      deferred: counts.deferred,
      conditions: counts.conditions,
      duration: formatDuration(report.durationMs),
    });
    return report;
  };

  // R11: list once, first (R66: unless the cache stands in for the list).
  const listed =
    snapshot === undefined
      ? await deps.caller.call('list', deps.clusterName, scope, signal, (opts) =>
          deps.routes.listRoutes(deps.clusterName, opts),
        )
      : ({ ok: true, value: snapshot.map((e) => e.route) } as const);
  if (!listed.ok) {
    failureKinds.add('list');
    listThrottled = listed.outcome === 'throttled' || listed.retryAfterMs !== undefined;
    // R109: a throttled list told nothing new, so what the cache knew still holds; any other failure
    // may hide a change the cache missed.
    if (!listThrottled) deps.cache?.invalidate();
    return finish(
      'error',
      { created: 0, deleted: 0, failed: 0, deferred: 0, conditions: 0 },
      undefined,
      {
        deletes: [],
        creates: [],
        throttled: listed.outcome === 'throttled',
        stateKnown: false,
        throttleUntil: listed.retryAfterMs === undefined ? undefined : clock.now() + listed.retryAfterMs,
      },
      `error listing routes: ${errorMessage(listed.error)}`,
    );
  }

  // R12: one read of the node cache, used throughout (R103: of its focused part, when cached).
  const nodes = focused?.nodes ?? deps.nodes.list();
  if (snapshot === undefined) {
    deps.cache?.fill(listed.value, start, nodes);
    deps.focus?.reset(nodes);
  } else {
    // R67: a node's cloud identity or addresses changed since its routes were seen: only a list can tell.
    const changed = deps.cache?.changedTarget(nodes);
    if (changed !== undefined) {
      logger.info(`Node ${changed} changed identity or addresses; the next reconcile lists routes`);
      deps.cache?.invalidate();
      deps.metrics?.cacheInvalidations.inc({ reason: 'target_changed' });
      handover = true;
      return finish('noop', { created: 0, deleted: 0, failed: 0, deferred: 0, conditions: 0 }, undefined);
    }
  }
  const plan = planReconcile(nodes, listed.value, deps.clusterCIDRs);
  // R67: a route the cache holds only as requested is deleted after a list, never from the cache.
  const unlisted = new Set(snapshot?.filter((e) => !e.listed).map((e) => e.route));
  const held = new Set(plan.deletes.filter((d) => unlisted.has(d.route)).map((d) => d.canonical));
  if (held.size > 0) {
    handover = true;
    deps.cache?.invalidate();
    deps.metrics?.cacheInvalidations.inc({ reason: 'unlisted_delete' });
  }
  const deletes = plan.deletes.filter((d) => !held.has(d.canonical));
  const creates = plan.creates.filter((c) => !held.has(c.cidr.canonical!));
  for (const np of plan.nodes) deps.latency.observePlanned(np.uid, np.podCIDRs, start);
  reportPlanProblems(plan, deps);
  logNodeActions(plan, logger);

  if (deps.dryRun) {
    const patches = dryRunConditionPatches(plan);
    logDryRunPlan(plan, patches, logger);
    return finish(
      'dry_run',
      { created: 0, deleted: 0, failed: 0, deferred: 0, conditions: patches.length },
      plan,
    );
  }

  // R105: an update of a pod CIDR outside the cluster CIDRs leaves the old route (never ours to
  // delete, R13) first in line, so a full plan would update it again: the focused one does too.
  const again = new Set(creates.filter((c) => c.cidr.action === 'update' && c.cidr.outsideClusterCIDRs));
  // R106: a node whose routes all exist is written now, the others as their creates succeed.
  const conditions = new NodeConditions(plan, deps, signal);
  conditions.start();
  // The executor calls this once for each create that succeeded, as soon as it did.
  const onCreated = (i: number, r: OpResult): void => {
    const c = creates[i]!;
    deps.cache?.created(c.route, r.listedAs, c.node.node);
    c.cidr.action = 'keep';
    logger.info(
      `Created route for node ${c.node.name} ${c.route.destinationCIDR} with hint ${c.nameHint} after ${formatDuration(r.durationMs)}`,
    );
    if (trigger === 'periodic') deps.metrics?.corrections.inc({ operation: 'create' });
    const secs = deps.latency.created(c.node.uid, c.cidr.canonical!, clock.now());
    if (secs !== undefined) deps.metrics?.creationLatency.observe({ ip_family: `IPv${c.cidr.family}` }, secs);
    conditions.routed(c.node);
  };
  const exec = await executePlan(deletes, creates, {
    routes: deps.routes,
    caller: deps.caller,
    clock,
    random: deps.random,
    clusterName: deps.clusterName,
    maxConcurrent: deps.maxConcurrent,
    scope,
    signal,
    writeLimiter: deps.writeLimiter,
    throttleProbe: deps.throttleProbe,
    onPaced: (seconds) => deps.metrics?.cloudWriteWait.inc(seconds),
    onCreated,
  });

  let deleted = 0;
  let failed = 0;
  let deferred = 0;
  exec.deletes.forEach((r, i) => {
    const d = deletes[i]!;
    if (r.status === 'ok') {
      deleted++;
      deps.cache?.deleted(d.route);
      logger.info(
        `Deleted route ${d.route.name} ${d.route.destinationCIDR} after ${formatDuration(r.durationMs)}`,
        {
          reason: d.reason,
        },
      );
      if (trigger === 'periodic') deps.metrics?.corrections.inc({ operation: 'delete' });
    } else if (r.status === 'failed') {
      failed++;
      failureKinds.add(r.kind ?? 'retryable');
      logger.error(
        `Could not delete route ${d.route.name} ${d.route.destinationCIDR} after ${formatDuration(r.durationMs)}: ${errorMessage(r.error)}`,
      );
    } else if (r.status === 'deferred') deferred++;
  });

  let created = 0;
  exec.creates.forEach((r, i) => {
    const c = creates[i]!;
    const what = `${c.nameHint} ${c.route.destinationCIDR}`;
    if (r.status === 'ok')
      created++; // reported by onCreated
    else if (r.status === 'failed') {
      failed++;
      failureKinds.add(r.kind ?? 'retryable');
      const err = errorMessage(r.error);
      logger.error(`Could not create route ${what} for node ${c.node.name}: ${err}`);
      // R34: one Event per failed create per reconcile.
      deps.recorder.event(
        { name: c.node.name, uid: c.node.uid },
        'Warning',
        'FailedToCreateRoute',
        `Could not create route ${what} for node ${c.node.name} after ${formatDuration(r.durationMs)}: ${err}`,
      );
    } else if (r.status === 'deferred') deferred++;
  });
  for (const np of plan.nodes) {
    for (const pc of np.podCIDRs)
      if (pc.action === 'keep' && pc.canonical) deps.latency.kept(np.uid, pc.canonical);
  }

  // R65/R85: only a throttled or permanent answer says the cloud did not act; anything else leaves its state unknown.
  if (!exec.stateKnown && deps.cache?.isValid(start)) {
    deps.cache.invalidate();
    deps.metrics?.cacheInvalidations.inc({ reason: 'call_failed' });
  }

  // R28–R33: the remaining conditions after all route operations settled (R106).
  const cond = await conditions.finish();
  if (cond.failed > 0) failureKinds.add('condition');
  if (deps.focus?.ready === true)
    deps.focus.restore(unsettled(deletes, creates, exec, cond.failedNodes, again));

  const mutated = created + deleted;
  const outcome: Outcome =
    failed > 0 || deferred > 0 || cond.failed > 0 ? 'error' : mutated > 0 ? 'changed' : 'noop';
  return finish(outcome, { created, deleted, failed, deferred, conditions: cond.written }, plan, exec);
}

/** R105: the nodes and destinations of every write that did not succeed, to plan again. */
function unsettled(
  deletes: readonly PlannedDelete[],
  creates: readonly PlannedCreate[],
  exec: ExecutionResult,
  conditionFailures: readonly string[],
  again: ReadonlySet<PlannedCreate>,
): FocusMarks {
  const names = new Set(conditionFailures);
  const destinations = new Set<string>();
  exec.deletes.forEach((r, i) => {
    if (r.status === 'ok') return;
    const d = deletes[i]!;
    if (d.route.targetNode !== '') names.add(d.route.targetNode);
    destinations.add(d.canonical);
  });
  exec.creates.forEach((r, i) => {
    const c = creates[i]!;
    if (r.status === 'ok' && !again.has(c)) return;
    names.add(c.node.name);
    if (c.cidr.canonical !== undefined) destinations.add(c.cidr.canonical);
  });
  return { names, destinations };
}
