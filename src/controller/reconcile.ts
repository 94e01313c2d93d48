// One reconcile (SPEC §3): list routes (or read the route cache, R66), plan,
// execute while writing conditions as nodes become routed (R106), report.
// reconcileFrom reads as its steps; each lives in reconcile-steps.ts, and the
// report they build in reconcile-run.ts.
import type { FocusMarks } from '../core/plan-focus.ts';
import type { Trigger } from './metrics.ts';
import { NodeConditions } from './node-conditions.ts';
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

export type { ReconcileDeps, ReconcileReport, RouteSource } from './reconcile-types.ts';
import type { ReconcileDeps, ReconcileReport, RouteSource } from './reconcile-types.ts';

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
