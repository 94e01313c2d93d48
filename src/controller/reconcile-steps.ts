// The steps of one reconcile (SPEC §3), in the order reconcile.ts runs them.
// Each has one job; the rules it implements are named beside it.
import { dryRunConditionPatches } from '../core/condition.ts';
import { formatDuration } from '../core/duration.ts';
import { errorMessage } from '../core/errors.ts';
import type { FocusMarks } from '../core/plan-focus.ts';
import { planReconcile, type PlannedCreate, type PlannedDelete, type ReconcilePlan } from '../core/plan.ts';
import type { CachedRoute } from '../core/route-cache.ts';
import type { Node, Route } from '../core/types.ts';
import type { CallResult } from './cloud-call.ts';
import { executePlan, type ExecutionResult, type OpResult } from './executor.ts';
import type { Outcome } from './metrics.ts';
import type { ConditionResult, NodeConditions } from './node-conditions.ts';
import { logDryRunPlan, logNodeActions, reportPlanProblems } from './plan-report.ts';
import type { ReconcileDeps, ReconcileReport } from './reconcile-types.ts';
import { NOTHING_DONE, type ReconcileCounts, type ReconcileRun } from './reconcile-run.ts';

/** The writes one reconcile makes: its plan less the deletes only a list may make (R67). */
export interface Work {
  readonly plan: ReconcilePlan;
  readonly deletes: readonly PlannedDelete[];
  readonly creates: readonly PlannedCreate[];
  /** R105: creates to plan again even when they succeed. */
  readonly again: ReadonlySet<PlannedCreate>;
}

/** R11: list once, first (R66: unless the cache's snapshot stands in for the list). */
export async function listRoutes(
  deps: ReconcileDeps,
  run: ReconcileRun,
  snapshot: readonly CachedRoute[] | undefined,
  signal: AbortSignal,
): Promise<CallResult<Route[]>> {
  if (snapshot !== undefined) return { ok: true, value: snapshot.map((e) => e.route), durationMs: 0 };
  return deps.caller.call('list', deps.clusterName, run.scope, signal, (opts) =>
    deps.routes.listRoutes(deps.clusterName, opts),
  );
}

/** R11: a reconcile whose list failed does nothing more; R47 honours the cloud's Retry-After. */
export function listFailed(
  deps: ReconcileDeps,
  run: ReconcileRun,
  listed: Extract<CallResult<Route[]>, { ok: false }>,
): ReconcileReport {
  run.failureKinds.add('list');
  run.listThrottled = listed.outcome === 'throttled' || listed.retryAfterMs !== undefined;
  // R109: a throttled list told nothing new, so what the cache knew still holds; any other failure
  // may hide a change the cache missed.
  if (!run.listThrottled) deps.cache?.invalidate();
  const exec: ExecutionResult = {
    deletes: [],
    creates: [],
    throttled: listed.outcome === 'throttled',
    stateKnown: false,
    throttleUntil: listed.retryAfterMs === undefined ? undefined : deps.clock.now() + listed.retryAfterMs,
  };
  return run.finish(
    'error',
    NOTHING_DONE,
    undefined,
    exec,
    `error listing routes: ${errorMessage(listed.error)}`,
  );
}

/**
 * R65: a listing reconcile fills the route cache. R67: a cached one whose node changed its cloud
 * identity or addresses drops the cache instead (only a list can tell); false then.
 */
export function refreshCache(
  deps: ReconcileDeps,
  run: ReconcileRun,
  snapshot: readonly CachedRoute[] | undefined,
  routes: Route[],
  nodes: readonly Node[],
): boolean {
  if (snapshot === undefined) {
    deps.cache?.fill(routes, run.start, nodes);
    deps.focus?.reset(nodes);
    return true;
  }
  const changed = deps.cache?.changedTarget(nodes);
  if (changed === undefined) return true;
  deps.logger.info(`Node ${changed} changed identity or addresses; the next reconcile lists routes`);
  deps.cache?.invalidate();
  deps.metrics?.cacheInvalidations.inc({ reason: 'target_changed' });
  run.handover = true;
  return false;
}

/** R12–R27: the plan, less what the cache may not delete (R67); logged and reported (R16, E3). */
export function planWork(
  deps: ReconcileDeps,
  run: ReconcileRun,
  nodes: readonly Node[],
  routes: Route[],
  snapshot: readonly CachedRoute[] | undefined,
): Work {
  const plan = planReconcile(nodes, routes, deps.clusterCIDRs);
  // R67: a route the cache holds only as requested is deleted after a list, never from the cache.
  const unlisted = new Set(snapshot?.filter((e) => !e.listed).map((e) => e.route));
  const held = new Set(plan.deletes.filter((d) => unlisted.has(d.route)).map((d) => d.canonical));
  if (held.size > 0) {
    run.handover = true;
    deps.cache?.invalidate();
    deps.metrics?.cacheInvalidations.inc({ reason: 'unlisted_delete' });
  }
  const deletes = plan.deletes.filter((d) => !held.has(d.canonical));
  const creates = plan.creates.filter((c) => !held.has(c.cidr.canonical!));
  for (const np of plan.nodes) deps.latency.observePlanned(np.uid, np.podCIDRs, run.start);
  reportPlanProblems(plan, deps);
  logNodeActions(plan, deps.logger);
  // R105: an update of a pod CIDR outside the cluster CIDRs leaves the old route (never ours to
  // delete, R13) first in line, so a full plan would update it again: the focused one does too.
  const again = new Set(creates.filter((c) => c.cidr.action === 'update' && c.cidr.outsideClusterCIDRs));
  return { plan, deletes, creates, again };
}

/** --dry-run: log the plan and the condition patches it would write; write nothing. */
export function dryRun(deps: ReconcileDeps, run: ReconcileRun, plan: ReconcilePlan): ReconcileReport {
  const patches = dryRunConditionPatches(plan);
  logDryRunPlan(plan, patches, deps.logger);
  return run.finish('dry_run', { ...NOTHING_DONE, conditions: patches.length }, plan);
}

/** §3.3: the deletes and creates (R8, R24–R27, R47, R68–R70); a node is written as its creates succeed (R106). */
export function execute(
  deps: ReconcileDeps,
  run: ReconcileRun,
  work: Work,
  conditions: NodeConditions,
  signal: AbortSignal,
): Promise<ExecutionResult> {
  const { creates } = work;
  // The executor calls this once for each create that succeeded, as soon as it did.
  const onCreated = (i: number, r: OpResult): void => {
    const c = creates[i]!;
    deps.cache?.created(c.route, r.listedAs, c.node.node);
    c.cidr.action = 'keep';
    deps.logger.info(
      `Created route for node ${c.node.name} ${c.route.destinationCIDR} with hint ${c.nameHint} after ${formatDuration(r.durationMs)}`,
    );
    if (run.trigger === 'periodic') deps.metrics?.corrections.inc({ operation: 'create' });
    const secs = deps.latency.created(c.node.uid, c.cidr.canonical!, deps.clock.now());
    if (secs !== undefined) deps.metrics?.creationLatency.observe({ ip_family: `IPv${c.cidr.family}` }, secs);
    conditions.routed(c.node);
  };
  return executePlan(work.deletes, creates, {
    routes: deps.routes,
    caller: deps.caller,
    clock: deps.clock,
    random: deps.random,
    clusterName: deps.clusterName,
    maxConcurrent: deps.maxConcurrent,
    scope: run.scope,
    signal,
    writeLimiter: deps.writeLimiter,
    throttleProbe: deps.throttleProbe,
    onPaced: (seconds) => deps.metrics?.cloudWriteWait.inc(seconds),
    onCreated,
  });
}

/** Counts, logs (R16) and Events (R34) for each write; the kinds of failure for R46. */
export function tally(
  deps: ReconcileDeps,
  run: ReconcileRun,
  work: Work,
  exec: ExecutionResult,
): Omit<ReconcileCounts, 'conditions'> {
  const { logger } = deps;
  let deleted = 0;
  let failed = 0;
  let deferred = 0;
  exec.deletes.forEach((r, i) => {
    const d = work.deletes[i]!;
    const what = `${d.route.name} ${d.route.destinationCIDR} after ${formatDuration(r.durationMs)}`;
    if (r.status === 'ok') {
      deleted++;
      deps.cache?.deleted(d.route);
      logger.info(`Deleted route ${what}`, { reason: d.reason });
      if (run.trigger === 'periodic') deps.metrics?.corrections.inc({ operation: 'delete' });
    } else if (r.status === 'failed') {
      failed++;
      run.failureKinds.add(r.kind ?? 'retryable');
      logger.error(`Could not delete route ${what}: ${errorMessage(r.error)}`);
    } else if (r.status === 'deferred') deferred++;
  });
  let created = 0;
  exec.creates.forEach((r, i) => {
    const c = work.creates[i]!;
    const what = `${c.nameHint} ${c.route.destinationCIDR}`;
    if (r.status === 'ok')
      created++; // reported by execute's onCreated
    else if (r.status === 'failed') {
      failed++;
      run.failureKinds.add(r.kind ?? 'retryable');
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
  return { created, deleted, failed, deferred };
}

/** R65/R85: only a throttled or permanent answer says the cloud did not act; else the cache is dropped. */
export function settleCache(
  deps: ReconcileDeps,
  run: ReconcileRun,
  plan: ReconcilePlan,
  exec: ExecutionResult,
): void {
  // Creation latency: a pod CIDR whose route exists stops being timed.
  for (const np of plan.nodes) {
    for (const pc of np.podCIDRs)
      if (pc.action === 'keep' && pc.canonical) deps.latency.kept(np.uid, pc.canonical);
  }
  if (!exec.stateKnown && deps.cache?.isValid(run.start)) {
    deps.cache.invalidate();
    deps.metrics?.cacheInvalidations.inc({ reason: 'call_failed' });
  }
}

/** R28–R33: the remaining conditions, after all route operations settled (R106); R105: replan what failed. */
export async function finishConditions(
  deps: ReconcileDeps,
  run: ReconcileRun,
  work: Work,
  exec: ExecutionResult,
  conditions: NodeConditions,
): Promise<ConditionResult> {
  const cond = await conditions.finish();
  if (cond.failed > 0) run.failureKinds.add('condition');
  if (deps.focus?.ready === true) deps.focus.restore(unsettled(work, exec, cond.failedNodes));
  return cond;
}

/** R11: error when anything failed or waits; changed when something was written; else noop. */
export function outcomeOf(counts: Omit<ReconcileCounts, 'conditions'>, cond: ConditionResult): Outcome {
  if (counts.failed > 0 || counts.deferred > 0 || cond.failed > 0) return 'error';
  return counts.created + counts.deleted > 0 ? 'changed' : 'noop';
}

/** R105: the nodes and destinations of every write that did not succeed, to plan again. */
function unsettled(work: Work, exec: ExecutionResult, conditionFailures: readonly string[]): FocusMarks {
  const names = new Set(conditionFailures);
  const destinations = new Set<string>();
  exec.deletes.forEach((r, i) => {
    if (r.status === 'ok') return;
    const d = work.deletes[i]!;
    if (d.route.targetNode !== '') names.add(d.route.targetNode);
    destinations.add(d.canonical);
  });
  exec.creates.forEach((r, i) => {
    const c = work.creates[i]!;
    if (r.status === 'ok' && !work.again.has(c)) return;
    names.add(c.node.name);
    if (c.cidr.canonical !== undefined) destinations.add(c.cidr.canonical);
  });
  return { names, destinations };
}
