// Executes a reconcile plan's deletes and creates (SPEC §3.3, R8, R24–R27, R47),
// paced by the cloud write pacer (R68–R70) unless unpaced.
import { sleep, type Clock } from '../core/clock.ts';
import { type ErrorKind, errorKind, retryAfterMs } from '../core/errors.ts';
import type { PlannedCreate, PlannedDelete } from '../core/plan.ts';
import { Semaphore } from '../core/semaphore.ts';
import type { OperationResult, ReconcileScope, Route, Routes } from '../core/types.ts';
import type { WritePacer } from '../core/write-pacer.ts';
import type { CallResult, CloudCaller } from './cloud-call.ts';

export type OpStatus = 'ok' | 'failed' | 'deferred' | 'canceled';

export interface OpResult {
  status: OpStatus;
  error?: unknown;
  /** Kind of the last failure ('timeout' is retryable). */
  kind?: ErrorKind | 'timeout';
  /** Duration of the last attempt. */
  durationMs: number;
  attempts: number;
  /** A create's route as the provider would list it, if it returned one (R66). */
  listedAs?: Route;
}

export interface ExecutionResult {
  readonly deletes: OpResult[];
  readonly creates: OpResult[];
  /** R47: no reconcile may start before this (absolute ms), if set. */
  readonly throttleUntil: number | undefined;
  readonly throttled: boolean;
  /**
   * R65/R85: the cloud's route state is still known: every provider call of
   * this execution plainly succeeded or was refused as `throttled` or
   * `permanent` (the cloud did not act); no conflict, not even one retried
   * into a success, no other failure, no abort.
   */
  readonly stateKnown: boolean;
}

export interface ExecutorDeps {
  readonly routes: Routes;
  readonly caller: CloudCaller;
  readonly clock: Clock;
  readonly random: () => number;
  readonly clusterName: string;
  readonly maxConcurrent: number;
  readonly scope: ReconcileScope;
  readonly signal: AbortSignal;
  /**
   * The cloud's write budget, shared by all reconciles. Each create, delete or
   * applyRoutes call takes a token before it starts, so a burst of N routes
   * reaches the cloud at the rate it accepts instead of as 200 calls of which
   * all beyond its burst come back throttled (R47 would then defer the rest).
   */
  readonly writeLimiter?: WritePacer | undefined;
  /** Seconds spent waiting for the write budget (a metric). */
  readonly onPaced?: ((seconds: number) => void) | undefined;
  /** R86: the memory of a throttle across reconciles when no pacer keeps it. */
  readonly throttleProbe?: ThrottleProbe | undefined;
  /** R106: told once of each create that succeeded, as soon as it did (index into `creates`). */
  readonly onCreated?: ((index: number, result: OpResult) => void) | undefined;
}

/**
 * R86: whether the cloud's last answer to a write was a throttle. Shared by
 * all reconciles of a controller that plans against the route cache without a
 * write pacer: there, unlike a listing reconcile (whose list goes first and is
 * refused first), every pending write of the retry would reach the throttling
 * cloud at once.
 */
export interface ThrottleProbe {
  throttled: boolean;
}

/** R24: upstream RetryOnConflict with updateNetworkConditionBackoff. */
export const CONFLICT_ATTEMPTS = 5;
export const conflictDelayMs = (random: () => number): number => 100 * (1 + random());

const NOT_RUN: OpResult = { status: 'deferred', durationMs: 0, attempts: 0 };

/** R85: answers after which the cloud did not act, so the route cache still describes it. */
const KNOWN_FAILURES: ReadonlySet<string> = new Set(['throttled', 'permanent']);

class Run {
  throttled = false;
  stateKnown = true;
  throttleUntil: number | undefined;
  private readonly deps: ExecutorDeps;
  /** Aborted on the first throttle, so calls waiting for the write budget stop at once. */
  private readonly stopPacing = new AbortController();
  private readonly paceSignal: AbortSignal;
  /** R86: settles when the write probing a throttling cloud has its answer. */
  private probe: Promise<void> | undefined;
  private endProbe: (() => void) | undefined;

  constructor(deps: ExecutorDeps) {
    this.deps = deps;
    this.paceSignal = AbortSignal.any([deps.signal, this.stopPacing.signal]);
  }

  /** Whether a new mutation may start now; otherwise the status to report. */
  gate(): OpStatus | undefined {
    if (this.deps.signal.aborted) return 'canceled';
    if (this.throttled) return 'deferred';
    return undefined;
  }

  /** Waits for the write budget, then gates again: a throttle seen meanwhile stops this call. */
  async paced(): Promise<OpStatus | undefined> {
    const limiter = this.deps.writeLimiter;
    if (limiter === undefined) return this.gate();
    const start = this.deps.clock.now();
    try {
      await limiter.wait(this.paceSignal);
    } catch {
      return this.gate() ?? 'canceled';
    } finally {
      const waited = this.deps.clock.now() - start;
      if (waited > 0) this.deps.onPaced?.(waited / 1000);
    }
    return this.gate();
  }

  /**
   * R86: after a throttle, the first write goes alone; the others wait for its
   * answer (then the gate defers them if it was throttled too). True for the
   * caller that became the probe, which must call releaseProbe().
   */
  async probeTurn(): Promise<boolean> {
    for (;;) {
      if (this.probe === undefined) {
        if (this.deps.throttleProbe?.throttled !== true) return false;
        this.probe = new Promise<void>((resolve) => (this.endProbe = resolve));
        return true;
      }
      await this.probe;
    }
  }

  releaseProbe(): void {
    // Waiters loop: if the answer was neither a success nor a throttle, the next one probes.
    this.probe = undefined;
    this.endProbe?.();
  }

  /** `startedAt`: when the write was sent, so the pacer cuts once per congestion episode (R69). */
  note(r: { outcome: string; retryAfterMs: number | undefined }, startedAt: number): void {
    const probe = this.deps.throttleProbe;
    if (r.outcome === 'success') {
      this.deps.writeLimiter?.onSuccess(startedAt);
      if (probe) probe.throttled = false;
    } else if (!KNOWN_FAILURES.has(r.outcome)) this.stateKnown = false;
    if (r.outcome === 'throttled' || r.retryAfterMs !== undefined) {
      if (probe) probe.throttled = true;
      this.deps.writeLimiter?.onThrottle(r.retryAfterMs, startedAt);
      this.throttled = true;
      this.stopPacing.abort();
      // "Latest wins" (R47).
      if (r.retryAfterMs !== undefined) this.throttleUntil = this.deps.clock.now() + r.retryAfterMs;
    }
  }

  toOp(r: CallResult<unknown>, attempts: number): OpResult {
    if (r.ok) {
      const listedAs = isRoute(r.value) ? { listedAs: r.value } : {};
      return { status: 'ok', durationMs: r.durationMs, attempts, ...listedAs };
    }
    if (r.outcome === 'canceled')
      return { status: 'canceled', error: r.error, durationMs: r.durationMs, attempts };
    return { status: 'failed', error: r.error, kind: r.outcome, durationMs: r.durationMs, attempts };
  }

  /** Runs `once` with R24 conflict retries; each attempt takes its own slot via `slot`. */
  async withConflictRetry(
    slot: <T>(fn: () => Promise<T>) => Promise<T>,
    once: () => Promise<CallResult<void | Route>>,
  ): Promise<OpResult> {
    let last: OpResult = NOT_RUN;
    for (let attempt = 1; attempt <= CONFLICT_ATTEMPTS; attempt++) {
      if (attempt > 1) {
        try {
          await sleep(this.deps.clock, conflictDelayMs(this.deps.random), this.deps.signal);
        } catch {
          return { ...last, status: 'canceled' };
        }
      }
      // The gate is checked once a slot is held: a throttle seen while waiting stops this call too.
      // The outcome is noted before the slot is released, so the next waiter sees the throttle.
      const r = await slot(async () => {
        const gated = this.gate() ?? (await this.paced());
        if (gated) return gated;
        const probing = await this.probeTurn();
        try {
          const after = this.gate(); // the probe's throttle defers this call (R47)
          if (after) return after;
          const startedAt = this.deps.clock.now();
          const res = await once();
          this.note(res.ok ? { outcome: 'success', retryAfterMs: undefined } : res, startedAt);
          return res;
        } finally {
          if (probing) this.releaseProbe();
        }
      });
      if (typeof r === 'string') return attempt === 1 ? { ...NOT_RUN, status: r } : { ...last, status: r };
      last = this.toOp(r, attempt);
      if (r.ok || r.outcome !== 'conflict') return last;
    }
    return last;
  }
}

export async function executePlan(
  deletes: readonly PlannedDelete[],
  creates: readonly PlannedCreate[],
  deps: ExecutorDeps,
): Promise<ExecutionResult> {
  if (deletes.length === 0 && creates.length === 0) {
    return { deletes: [], creates: [], throttleUntil: undefined, throttled: false, stateKnown: true };
  }
  const run = new Run(deps);
  const r = deps.routes.applyRoutes
    ? await executeBatched(run, deletes, creates, deps)
    : await executePerRoute(run, deletes, creates, deps);
  // A deferred operation never ran; a canceled one may have (R85 counts aborts as unknown).
  const stateKnown = run.stateKnown && [...r.deletes, ...r.creates].every((o) => o.status !== 'canceled');
  return { ...r, throttleUntil: run.throttleUntil, throttled: run.throttled, stateKnown };
}

async function executePerRoute(
  run: Run,
  deletes: readonly PlannedDelete[],
  creates: readonly PlannedCreate[],
  deps: ExecutorDeps,
): Promise<{ deletes: OpResult[]; creates: OpResult[] }> {
  const { routes, caller, clusterName, scope, signal } = deps;
  // R26: one pool for creates and deletes.
  const pool = new Semaphore(deps.maxConcurrent);
  const slot = <T>(fn: () => Promise<T>): Promise<T> => pool.with(fn);
  const deletesByDest = new Map<string, Promise<OpResult>[]>();
  const deleteResults = deletes.map((d) => {
    const p = run.withConflictRetry(slot, () =>
      caller.call('delete', `${d.route.name} ${d.route.destinationCIDR}`, scope, signal, (opts) =>
        routes.deleteRoute(clusterName, d.route, opts),
      ),
    );
    let list = deletesByDest.get(d.canonical);
    if (!list) deletesByDest.set(d.canonical, (list = []));
    list.push(p);
    return p;
  });
  const createResults = creates.map(async (c, i) => {
    // R27: a create for D waits for every delete of D in this reconcile.
    const barrier = deletesByDest.get(c.cidr.canonical!);
    if (barrier) await Promise.all(barrier);
    const r = await run.withConflictRetry(slot, () =>
      caller.call('create', `${c.nameHint} ${c.route.destinationCIDR}`, scope, signal, (opts) =>
        routes.createRoute(clusterName, c.nameHint, c.route, opts),
      ),
    );
    if (r.status === 'ok') deps.onCreated?.(i, r);
    return r;
  });
  return { deletes: await Promise.all(deleteResults), creates: await Promise.all(createResults) };
}

/** R8: one applyRoutes per round; conflict results are resubmitted per R24. */
async function executeBatched(
  run: Run,
  deletes: readonly PlannedDelete[],
  creates: readonly PlannedCreate[],
  deps: ExecutorDeps,
): Promise<{ deletes: OpResult[]; creates: OpResult[] }> {
  const { routes, caller, clusterName, scope, signal, clock, random } = deps;
  const results: OpResult[] = [...deletes, ...creates].map(() => ({ ...NOT_RUN }));
  let pending = results.map((_, i) => i);
  for (let attempt = 1; attempt <= CONFLICT_ATTEMPTS && pending.length > 0; attempt++) {
    if (attempt > 1) {
      try {
        await sleep(clock, conflictDelayMs(random), signal);
      } catch {
        break;
      }
    }
    const gated = run.gate() ?? (await run.paced());
    if (gated) {
      for (const i of pending) results[i]!.status = gated;
      return split(results, deletes.length);
    }
    const plan = {
      deletes: pending.filter((i) => i < deletes.length).map((i) => deletes[i]!.route),
      creates: pending
        .filter((i) => i >= deletes.length)
        .map((i) => ({
          nameHint: creates[i - deletes.length]!.nameHint,
          route: creates[i - deletes.length]!.route,
        })),
    };
    const startedAt = clock.now();
    const r = await caller.call(
      'apply',
      `${plan.deletes.length} deletes, ${plan.creates.length} creates`,
      scope,
      signal,
      (opts) => routes.applyRoutes!(clusterName, plan, opts),
    );
    if (r.ok) run.note({ outcome: 'success', retryAfterMs: undefined }, startedAt);
    const perOp: OperationResult[] = r.ok
      ? r.value
      : pending.map(() => ({ ok: false, error: r.error }) as OperationResult);
    const next: number[] = [];
    pending.forEach((idx, j) => {
      const res = perOp[j] ?? { ok: false, error: new Error('applyRoutes returned too few results') };
      if (res.ok) {
        const listedAs = idx >= deletes.length && isRoute(res.route) ? { listedAs: res.route } : {};
        results[idx] = { status: 'ok', durationMs: r.durationMs, attempts: attempt, ...listedAs };
        if (idx >= deletes.length) deps.onCreated?.(idx - deletes.length, results[idx]);
        return;
      }
      const call: CallResult<void> = r.ok
        ? {
            ok: false,
            error: res.error,
            outcome: signal.aborted ? 'canceled' : errorKind(res.error),
            retryAfterMs: retryAfterMs(res.error),
            durationMs: r.durationMs,
          }
        : r;
      if (!call.ok) run.note(call, startedAt);
      results[idx] = run.toOp(call, attempt);
      if (results[idx].kind === 'conflict') next.push(idx);
    });
    pending = next;
  }
  return split(results, deletes.length);
}

function isRoute(v: unknown): v is Route {
  return (
    typeof v === 'object' &&
    v !== null &&
    typeof (v as Route).destinationCIDR === 'string' &&
    typeof (v as Route).targetNode === 'string'
  );
}

function split(results: OpResult[], nDeletes: number): { deletes: OpResult[]; creates: OpResult[] } {
  return { deletes: results.slice(0, nDeletes), creates: results.slice(nDeletes) };
}
