// Translates Compute Engine answers into the typed errors of SPEC §2.3, once.
// A failed request is a JSON body `{"error": {code, message, status,
// errors: [{reason, domain, message}]}}`; a write whose operation ends in error
// reports `error.errors[].code` (QUOTA_EXCEEDED, ...) and
// `httpErrorStatusCode` on the operation. Google documents 403 `rateLimitExceeded`
// for a rate quota ("Compute Engine rate quotas") and 429 RESOURCE_EXHAUSTED
// from the front end; a resource quota (routes per network or project) is
// `quotaExceeded` / QUOTA_EXCEEDED.
import {
  AbortError,
  ConflictError,
  PermanentError,
  QuotaExceededError,
  RetryableError,
  ThrottledError,
} from '../../core/errors.ts';
import type { RouteError } from '../../core/errors.ts';

/** A Compute Engine error answer or a failed operation, before classification. */
export class GceApiError extends Error {
  override readonly name: string = 'GceApiError';
  readonly status: number;
  /** `errors[0].reason` of an HTTP answer, or `errors[0].code` of an operation. */
  readonly reason: string;
  readonly retryAfterMs: number | undefined;
  constructor(message: string, status: number, reason: string, retryAfterMs?: number) {
    super(message);
    this.status = status;
    this.reason = reason;
    this.retryAfterMs = retryAfterMs;
  }
}

const THROTTLE_REASONS: ReadonlySet<string> = new Set([
  'rateLimitExceeded',
  'userRateLimitExceeded',
  'RATE_LIMIT_EXCEEDED',
  'RESOURCE_EXHAUSTED',
]);
const QUOTA_REASONS: ReadonlySet<string> = new Set(['quotaExceeded', 'QUOTA_EXCEEDED']);
// A request quota (per minute) also says "quota": it is a rate, not the route limit.
const RATE_WORDING = /per (minute|second|100 seconds|day)|rate quota|requests? (quota|limit)/i;
// The API is busy with the resource or the network (routes are written one at a time per network).
const CONFLICT_REASONS: ReadonlySet<string> = new Set([
  'resourceNotReady',
  'RESOURCE_NOT_READY',
  'conditionNotMet',
]);

/** Milliseconds from Retry-After (delta seconds or HTTP date), if any. */
export function parseRetryAfter(text: string | null | undefined, now = Date.now()): number | undefined {
  const t = text?.trim();
  if (t === undefined || t === '') return undefined;
  if (/^\d+(\.\d+)?$/.test(t)) return Math.round(Number(t) * 1000);
  const at = Date.parse(t);
  return Number.isNaN(at) ? undefined : Math.max(0, at - now);
}

interface ErrorBody {
  error?: {
    code?: unknown;
    message?: unknown;
    status?: unknown;
    errors?: { reason?: unknown; message?: unknown }[];
  };
}

/** The API's error body as a GceApiError (any text the body is not JSON falls back to). */
export function apiErrorFromResponse(status: number, text: string, retryAfter: string | null): GceApiError {
  let body: ErrorBody = {};
  try {
    body = JSON.parse(text) as ErrorBody;
  } catch {
    // A proxy's HTML page: keep its start as the message.
  }
  const e = body.error ?? {};
  const first = Array.isArray(e.errors) ? e.errors[0] : undefined;
  const reason =
    typeof first?.reason === 'string' ? first.reason : typeof e.status === 'string' ? e.status : '';
  const message =
    typeof e.message === 'string' && e.message !== ''
      ? e.message
      : text.slice(0, 200).replace(/\s+/g, ' ').trim();
  return new GceApiError(message, status, reason, parseRetryAfter(retryAfter));
}

// Access tokens (ya29.…), JWT assertions and secrets in query or form text
// never reach logs or Events, whatever an error page echoes.
const SECRETS: readonly [RegExp, string][] = [
  [/ya29\.[\w.-]+/g, '<redacted>'],
  [/eyJ[\w-]{8,}\.[\w-]{8,}\.[\w-]*/g, '<redacted>'],
  [
    /(authorization|access_token|assertion|client_secret|private_key)(["']?\s*[:=]\s*)[^\s&,;"']+/gi,
    '$1$2<redacted>',
  ],
];
const MAX_MESSAGE = 600;

export function redact(message: string): string {
  let out = message;
  for (const [re, by] of SECRETS) out = out.replace(re, by);
  return out.length > MAX_MESSAGE ? `${out.slice(0, MAX_MESSAGE)}…` : out;
}

function describe(e: GceApiError): string {
  const extra = [e.status > 0 ? `HTTP ${e.status}` : '', e.reason !== '' ? `reason ${e.reason}` : '']
    .filter((x) => x !== '')
    .join(', ');
  return redact(extra === '' ? e.message : `${e.message} (${extra})`);
}

function socketCode(err: unknown): string | undefined {
  const cause = (err as { cause?: { code?: unknown } } | undefined)?.cause;
  const code = cause?.code ?? (err as { code?: unknown } | undefined)?.code;
  return typeof code === 'string' ? code : undefined;
}

/**
 * Maps a failed Compute Engine call to a §2.3 error. `what` names the request
 * and its resource; `signal` tells the controller's abort from other failures.
 */
export function toRouteError(err: unknown, what: string, signal?: AbortSignal): Error {
  if (signal?.aborted || (err as { name?: unknown } | undefined)?.name === 'AbortError') {
    return new AbortError(`${what}: aborted`);
  }
  if (typeof (err as { kind?: unknown } | undefined)?.kind === 'string') return err as RouteError;
  if (!(err instanceof GceApiError)) {
    const code = socketCode(err);
    const text = err instanceof Error ? err.message : String(err);
    const detail = code !== undefined && !text.includes(code) ? `${text} (${code})` : text;
    // Network failures (ECONNRESET, ...) and whatever else left the outcome unknown are worth another try.
    return new RetryableError(`${what}: ${redact(detail)}`);
  }
  const message = `${what}: ${describe(err)}`;
  const { status, reason, retryAfterMs } = err;
  if (status === 429 || THROTTLE_REASONS.has(reason)) {
    return new ThrottledError(message, { retryAfterMs });
  }
  if (QUOTA_REASONS.has(reason) || /Quota '[A-Z_]+' exceeded/.test(err.message)) {
    return RATE_WORDING.test(err.message)
      ? new ThrottledError(message, { retryAfterMs })
      : new QuotaExceededError(message);
  }
  if (status === 409 || status === 412 || CONFLICT_REASONS.has(reason)) {
    return new ConflictError(message, { retryAfterMs });
  }
  // A 503 that says when to come back is the service shedding load.
  if (status === 503 && retryAfterMs !== undefined) return new ThrottledError(message, { retryAfterMs });
  if (status >= 500 || status === 408 || status === 0) return new RetryableError(message, { retryAfterMs });
  // 400 invalid, 401, 403 forbidden, 404: the same answer until a person changes something.
  return new PermanentError(message);
}
