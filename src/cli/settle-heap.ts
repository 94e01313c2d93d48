// One full garbage collection after the daemon's first listing reconcile. The
// node cache's initial list and that reconcile leave tens of MB of garbage at
// 5,000 nodes (parsed pages, the cloud's route table as its SDK decoded it);
// V8 returns those pages to the OS only when its memory reducer runs, about
// 8 s after the process goes idle, so for those seconds the daemon's resident
// memory is 20–30 MB above where it settles; even a full collection leaves the
// freed pages pooled until then. Start-up is the one moment when the garbage is
// known to be at its largest and nothing else is waiting: one last-resort
// collection there (which also returns the pooled pages; ~30 ms of CPU for
// 50 MB of garbage, once per process) lets the daemon reach its steady memory
// at once.
import { setFlagsFromString } from 'node:v8';
import { runInNewContext } from 'node:vm';
import type { ReconcileReport } from '../controller/reconcile.ts';

/** V8's gc(), as --expose-gc installs it in a new context. */
type V8Gc = (options: { type: 'major'; execution: 'sync'; flavor: 'last-resort' }) => void;

/** A full, last-resort collection: garbage collected and its pages returned to the OS. */
export function fullGc(): () => void {
  setFlagsFromString('--expose-gc');
  const gc = runInNewContext('gc') as V8Gc;
  return () => gc({ type: 'major', execution: 'sync', flavor: 'last-resort' });
}

/**
 * An onReconcile observer that collects once, `delayMs` after the first
 * reconcile that listed: off the path of whatever queued up behind that
 * reconcile (probes, the lease renewal, the first node events).
 */
export function settleHeapAfterFirstList(
  gc: () => void = fullGc(),
  delayMs = 1000,
  schedule: (fn: () => void, ms: number) => void = (fn, ms) => setTimeout(fn, ms).unref(),
): (report: ReconcileReport) => void {
  let done = false;
  return (report) => {
    if (done || report.source !== 'list') return;
    done = true;
    schedule(gc, delayMs);
  };
}
