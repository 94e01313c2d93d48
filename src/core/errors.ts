// Typed provider errors (SPEC §2.3). The controller classifies by `kind`, never
// by `instanceof`, because a plug-in may bundle its own copy of this library.

export type ErrorKind = 'retryable' | 'throttled' | 'conflict' | 'quota_exceeded' | 'permanent';

/** Outcome of one provider call as recorded in metrics and logs (R9). */
export type CallOutcome = 'success' | ErrorKind | 'canceled' | 'timeout';

interface ErrorOptions {
  retryAfterMs?: number;
  cause?: unknown;
}

export abstract class RouteError extends Error {
  abstract readonly kind: ErrorKind;
  readonly retryAfterMs: number | undefined;
  constructor(message: string, opts: ErrorOptions = {}) {
    super(message, opts.cause === undefined ? undefined : { cause: opts.cause });
    this.retryAfterMs = opts.retryAfterMs;
  }
}

export class RetryableError extends RouteError {
  readonly kind = 'retryable' as const;
  override readonly name: string = 'RetryableError';
}

export class ThrottledError extends RouteError {
  readonly kind = 'throttled' as const;
  override readonly name: string = 'ThrottledError';
}

export class ConflictError extends RouteError {
  readonly kind = 'conflict' as const;
  override readonly name: string = 'ConflictError';
}

export class QuotaExceededError extends RouteError {
  readonly kind = 'quota_exceeded' as const;
  override readonly name: string = 'QuotaExceededError';
}

export class PermanentError extends RouteError {
  readonly kind = 'permanent' as const;
  override readonly name: string = 'PermanentError';
}

/** Thrown by providers once `opts.signal` is aborted (R4). */
export class AbortError extends Error {
  override readonly name: string = 'AbortError';
  constructor(message = 'The operation was aborted', opts?: { cause?: unknown }) {
    super(message, opts);
  }
}

/** Raised by the controller's call wrapper when cloudCallTimeout expires. */
export class TimeoutError extends RetryableError {
  override readonly name: string = 'TimeoutError';
}

const KINDS: ReadonlySet<string> = new Set([
  'retryable',
  'throttled',
  'conflict',
  'quota_exceeded',
  'permanent',
]);

function field(err: unknown, key: string): unknown {
  return typeof err === 'object' && err !== null ? (err as Record<string, unknown>)[key] : undefined;
}

/** Kind of a thrown value by duck typing; anything unknown is retryable. */
export function errorKind(err: unknown): ErrorKind {
  const k = field(err, 'kind');
  return typeof k === 'string' && KINDS.has(k) ? (k as ErrorKind) : 'retryable';
}

export function retryAfterMs(err: unknown): number | undefined {
  const v = field(err, 'retryAfterMs');
  return typeof v === 'number' && Number.isFinite(v) && v >= 0 ? v : undefined;
}

export function isAbortError(err: unknown): boolean {
  return field(err, 'name') === 'AbortError';
}

export function errorMessage(err: unknown): string {
  if (err instanceof Error) return err.message;
  return String(err);
}

/** Throws an AbortError if the signal is aborted; providers call this before each mutation. */
export function throwIfAborted(signal: AbortSignal): void {
  if (signal.aborted) throw new AbortError('The operation was aborted', { cause: signal.reason });
}
