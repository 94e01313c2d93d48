// What one reconcile learns as it goes (its failures, whether it handed over to
// a listing reconcile) and the report it ends with (R11, R47, R67, R85, R109).
import type { Clock } from '../core/clock.ts';
import { formatDuration } from '../core/duration.ts';
import type { ErrorKind } from '../core/errors.ts';
import type { ReconcilePlan } from '../core/plan.ts';
import type { Logger } from '../core/ports.ts';
import type { ReconcileScope } from '../core/types.ts';
import type { ExecutionResult } from './executor.ts';
import type { Outcome, Trigger } from './metrics.ts';
import type { ReconcileReport, RouteSource } from './reconcile-types.ts';

export type FailureKind = ErrorKind | 'timeout' | 'list' | 'condition';

export interface ReconcileCounts {
  readonly created: number;
  readonly deleted: number;
  readonly failed: number;
  readonly deferred: number;
  readonly conditions: number;
}

export const NOTHING_DONE: ReconcileCounts = {
  created: 0,
  deleted: 0,
  failed: 0,
  deferred: 0,
  conditions: 0,
};

interface RunDeps {
  readonly clock: Clock;
  readonly logger: Logger;
}

let seq = 0;

export class ReconcileRun {
  readonly id: string;
  /** Passed to every provider call of this reconcile (CallOptions.reconcile). */
  readonly scope: ReconcileScope;
  readonly failureKinds = new Set<FailureKind>();
  /** R67: the cache was dropped; a listing reconcile must follow. */
  handover = false;
  /** R109: the list was throttled (the cloud told nothing). */
  listThrottled = false;
  readonly trigger: Trigger;
  readonly start: number;
  /** Where the routes came from: a listRoutes call, or the route cache (R66). */
  readonly source: RouteSource;
  private readonly deps: RunDeps;

  constructor(deps: RunDeps, trigger: Trigger, start: number, source: RouteSource) {
    this.deps = deps;
    this.trigger = trigger;
    this.start = start;
    this.source = source;
    this.id = `${start.toString(36)}-${(++seq).toString(36)}`;
    this.scope = { id: this.id, scratch: new Map<string, unknown>() };
  }

  /** The report of this reconcile, logged once. */
  finish(
    outcome: Outcome,
    counts: ReconcileCounts,
    plan: ReconcilePlan | undefined,
    exec?: ExecutionResult,
    error?: string,
  ): ReconcileReport {
    const { trigger, source } = this;
    const report: ReconcileReport = {
      ...(error === undefined ? {} : { error }),
      id: this.id,
      trigger,
      outcome,
      ...counts,
      durationMs: this.deps.clock.now() - this.start,
      throttleUntil: exec?.throttleUntil,
      throttleOnly: this.throttleOnly(exec),
      source,
      listThrottled: this.listThrottled,
      handover: this.handover,
      failureKinds: this.failureKinds,
      plan,
    };
    this.deps.logger.info('Route reconcile finished', {
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
  }

  /** R47 fired and nothing but throttling went wrong (R85: permanent failures beside it change nothing). */
  private throttleOnly(exec: ExecutionResult | undefined): boolean {
    const throttled = exec?.throttled === true || exec?.throttleUntil !== undefined;
    return (
      throttled &&
      [...this.failureKinds].every(
        (k) => k === 'throttled' || k === 'permanent' || (k === 'list' && this.listThrottled),
      )
    );
  }
}
