// The one layer around every provider call (R9): timeout, classification,
// metrics and -v=2 logs. Plug-ins stay pure translation (R7), like the AWS
// SDK's middleware stack keeps command files free of retries and metrics.
import type { Clock } from '../core/clock.ts';
import { type CallOutcome, errorKind, errorMessage, retryAfterMs, TimeoutError } from '../core/errors.ts';
import { formatDuration } from '../core/duration.ts';
import type { Logger } from '../core/ports.ts';
import type { CallOptions, ReconcileScope } from '../core/types.ts';
import type { CloudOperation, RouteControllerMetrics } from './metrics.ts';

export type CallResult<T> =
  | { readonly ok: true; readonly value: T; readonly durationMs: number }
  | {
      readonly ok: false;
      readonly error: unknown;
      readonly outcome: Exclude<CallOutcome, 'success'>;
      readonly retryAfterMs: number | undefined;
      readonly durationMs: number;
    };

export interface CloudCallerDeps {
  readonly clock: Clock;
  readonly logger: Logger;
  readonly metrics: RouteControllerMetrics | undefined;
  readonly timeoutMs: number;
  /** Called after every call settles; the daemon's liveness probe watches progress (R64). */
  readonly onProgress?: () => void;
}

export class CloudCaller {
  private readonly deps: CloudCallerDeps;

  constructor(deps: CloudCallerDeps) {
    this.deps = deps;
  }

  async call<T>(
    operation: CloudOperation,
    describe: string,
    scope: ReconcileScope,
    parent: AbortSignal,
    fn: (opts: CallOptions) => Promise<T>,
  ): Promise<CallResult<T>> {
    const { clock, logger, metrics, timeoutMs } = this.deps;
    const start = clock.now();
    const ac = new AbortController();
    let timedOut = false;
    const onParentAbort = (): void => ac.abort(parent.reason);
    if (parent.aborted) ac.abort(parent.reason);
    else parent.addEventListener('abort', onParentAbort, { once: true });
    const timer = clock.setTimeout(() => {
      timedOut = true;
      ac.abort(new TimeoutError(`cloud call ${operation} timed out after ${formatDuration(timeoutMs)}`));
    }, timeoutMs);
    // A provider that ignores the signal must not hang the reconcile (E14).
    const aborted = new Promise<never>((_, reject) => {
      const fail = (): void => reject(ac.signal.reason);
      if (ac.signal.aborted) fail();
      else ac.signal.addEventListener('abort', fail, { once: true });
    });
    aborted.catch(() => {});
    let result: CallResult<T>;
    try {
      if (ac.signal.aborted) throw ac.signal.reason;
      const value = await Promise.race([fn({ signal: ac.signal, reconcile: scope }), aborted]);
      result = { ok: true, value, durationMs: clock.now() - start };
    } catch (error) {
      const outcome: Exclude<CallOutcome, 'success'> = timedOut
        ? 'timeout'
        : parent.aborted
          ? 'canceled'
          : errorKind(error);
      const err = timedOut
        ? new TimeoutError(`${describe}: timed out after ${formatDuration(timeoutMs)}`)
        : error;
      result = {
        ok: false,
        error: err,
        outcome,
        retryAfterMs: retryAfterMs(error),
        durationMs: clock.now() - start,
      };
    } finally {
      clock.clearTimeout(timer);
      parent.removeEventListener('abort', onParentAbort);
    }
    const outcome: CallOutcome = result.ok ? 'success' : result.outcome;
    metrics?.cloudCall(operation, outcome, result.durationMs / 1000);
    const v2 = logger.v(2);
    if (v2.enabled) {
      v2.info('cloud call', {
        operation,
        target: describe,
        outcome,
        duration: formatDuration(result.durationMs),
        ...(result.ok ? {} : { err: errorMessage(result.error) }),
      });
    }
    this.deps.onProgress?.();
    return result;
  }
}
