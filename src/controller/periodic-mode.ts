// Periodic mode (SPEC §4, R36–R39): a non-sliding ticker; node events only
// maintain the cache.
import { sleep, type Clock } from '../core/clock.ts';
import type { NodeEventHandler } from '../core/ports.ts';
import type { Trigger } from '../core/trigger-filter.ts';
import { DEFAULTS, type RouteControllerOptions } from './options.ts';
import type { ReconcileDeps, ReconcileReport } from './reconcile.ts';

export function cacheMaintenanceHandler(deps: ReconcileDeps, clock: Clock): NodeEventHandler {
  return {
    onAdd: (n) => deps.latency.observe(n, clock.now()),
    onUpdate: (_o, n) => deps.latency.observe(n, clock.now()),
    onDelete: (n) => {
      const uid = n.metadata?.uid;
      if (uid) {
        deps.expectations.delete(uid);
        deps.latency.forget(uid);
        deps.reported.forget(uid);
      }
    },
  };
}

export async function runPeriodic(
  opts: RouteControllerOptions,
  deps: ReconcileDeps,
  clock: Clock,
  reconcileOnce: (trigger: Trigger, signal: AbortSignal) => Promise<ReconcileReport>,
  stop: AbortSignal,
  hardStop: AbortSignal = stop,
): Promise<void> {
  const period = opts.routeReconciliationPeriodMs ?? DEFAULTS.routeReconciliationPeriodMs;
  const unsubscribe = opts.nodes.addEventHandler(cacheMaintenanceHandler(deps, clock));
  try {
    // R36: first reconcile right after the cache synced.
    if (!(await opts.nodes.waitForSync(stop))) return;
    let throttleUntil = 0;
    while (!stop.aborted) {
      const start = clock.now();
      const report = await reconcileOnce('periodic', hardStop);
      if (report.throttleUntil !== undefined) throttleUntil = report.throttleUntil;
      // R37: next start = max(S + P, E); R38: ticks before a throttle deadline are skipped.
      let next = Math.max(start + period, clock.now());
      while (next < throttleUntil) next += period;
      try {
        await sleep(clock, next - clock.now(), stop);
      } catch {
        return;
      }
    }
  } finally {
    unsubscribe();
  }
}
