// Translates Azure SDK failures into the typed errors of SPEC §2.3, once.
// A failed request is a RestError (`statusCode`, the ARM error `code`, and the
// raw `response` with its headers); a long-running operation that ends Failed
// is a plain Error from @azure/core-lro whose message carries the ARM code;
// credential failures come from @azure/identity by name.
import {
  AbortError,
  ConflictError,
  PermanentError,
  QuotaExceededError,
  RetryableError,
  ThrottledError,
} from '../../core/errors.ts';
import { NETWORK_ERROR_CODES } from '../network-errors.ts';

// Microsoft.Network answers 429 with this code when another operation holds the
// resource: a lock, not a rate limit ("Request limits and throttling", Error code).
const LOCK_CODES: ReadonlySet<string> = new Set([
  'RetryableErrorDueToAnotherOperation',
  'AnotherOperationInProgress',
  'ReferencedResourceNotProvisioned',
]);

// The route-per-table limit has moved (400, 600, 1 000 routes) and its code is
// not documented; Azure's limit codes all read like these.
const QUOTA_CODE = /(Quota|Limit)(Exceeded|Reached)/;

// Requests that fail the same way until a person changes the config, RBAC or the table.
const PERMANENT_CODES: ReadonlySet<string> = new Set([
  'AuthorizationFailed',
  'AuthenticationFailed',
  'InvalidAuthenticationToken',
  'InvalidAuthenticationTokenTenant',
  'LinkedAuthorizationFailed',
  'SubscriptionNotFound',
  'ResourceGroupNotFound',
  'InvalidResourceName',
  'InvalidRequestFormat',
  'InvalidRequestContent',
  'InvalidAddressPrefixFormat',
  'LocationRequired',
  'LocationNotAvailableForResourceType',
  'InvalidResourceLocation',
  'MissingApiVersionParameter',
  'InvalidApiVersionParameter',
  'ReadOnlyDisabledSubscription',
  'ScopeLocked',
]);

// @azure/core-rest-pipeline wraps a failed send as RestError code REQUEST_SEND_ERROR.
const NETWORK_CODES: ReadonlySet<string> = new Set([...NETWORK_ERROR_CODES, 'REQUEST_SEND_ERROR']);

interface HeadersLike {
  get(name: string): string | undefined;
}

interface AzureErrorShape {
  name?: unknown;
  message?: unknown;
  code?: unknown;
  statusCode?: unknown;
  response?: { status?: unknown; headers?: HeadersLike | Record<string, unknown> };
}

function shape(err: unknown): AzureErrorShape {
  return typeof err === 'object' && err !== null ? (err as AzureErrorShape) : {};
}

function header(err: unknown, name: string): string | undefined {
  const headers = shape(err).response?.headers;
  if (headers === undefined || headers === null) return undefined;
  if (typeof (headers as HeadersLike).get === 'function') return (headers as HeadersLike).get(name);
  const v = (headers as Record<string, unknown>)[name];
  return typeof v === 'string' ? v : undefined;
}

const LRO_FAILED = /^The long-running operation has failed\. ([A-Za-z0-9_.]+)\. /;

/** The ARM error code (`PreconditionFailed`, ...), or '' if the error has none. */
export function azureErrorCode(err: unknown): string {
  const e = shape(err);
  if (e.name === 'RestError' && typeof e.code === 'string') return e.code;
  if (typeof e.message === 'string') {
    const lro = LRO_FAILED.exec(e.message);
    if (lro) return lro[1]!;
  }
  return header(err, 'x-ms-error-code') ?? '';
}

export function httpStatus(err: unknown): number | undefined {
  const e = shape(err);
  const status = e.statusCode ?? e.response?.status;
  return typeof status === 'number' ? status : undefined;
}

/** Milliseconds from the response's Retry-After (delta seconds or HTTP date), if any. */
export function retryAfterFromError(err: unknown, now: number = Date.now()): number | undefined {
  const text = header(err, 'retry-after')?.trim();
  if (text === undefined || text === '') return undefined;
  if (/^\d+(\.\d+)?$/.test(text)) return Math.round(Number(text) * 1000);
  const at = Date.parse(text);
  return Number.isNaN(at) ? undefined : Math.max(0, at - now);
}

// Bearer tokens (JWTs), secrets in query or form text, and long key-shaped runs
// never reach logs or Events, whatever an error page echoes.
const SECRETS: readonly [RegExp, string][] = [
  [/eyJ[\w-]{8,}\.[\w-]{8,}\.[\w-]*/g, '<redacted>'],
  [
    /(authorization|client_secret|client_assertion|access_token|sig)(["']?\s*[:=]\s*)[^\s&,;"']+/gi,
    '$1$2<redacted>',
  ],
  [/[A-Za-z0-9/+~_.-]{40,}={0,2}/g, '<redacted>'],
];
const MAX_MESSAGE = 600;

export function redact(message: string): string {
  let out = message;
  for (const [re, by] of SECRETS) out = out.replace(re, by);
  return out.length > MAX_MESSAGE ? `${out.slice(0, MAX_MESSAGE)}…` : out;
}

function describe(err: unknown): string {
  const e = shape(err);
  const code = azureErrorCode(err);
  const raw = typeof e.message === 'string' && e.message !== '' ? e.message : String(err);
  let text = code !== '' && !raw.includes(code) ? `${code}: ${raw}` : raw;
  const extra: string[] = [];
  const status = httpStatus(err);
  if (status !== undefined) extra.push(`HTTP ${status}`);
  const requestId = header(err, 'x-ms-request-id');
  if (requestId) extra.push(`request id ${requestId}`);
  if (extra.length > 0) text += ` (${extra.join(', ')})`;
  return redact(text);
}

/**
 * Maps a failed Azure call to a §2.3 error. `what` names the operation and its
 * resources; `signal` tells a controller abort from other aborts. The SDK
 * error is not kept as `cause`: it holds the raw request, token header included.
 */
export function toRouteError(err: unknown, what: string, signal?: AbortSignal): Error {
  const e = shape(err);
  if (signal?.aborted || e.name === 'AbortError') return new AbortError(`${what}: aborted`);
  const code = azureErrorCode(err);
  const status = httpStatus(err);
  const message = `${what}: ${describe(err)}`;
  const retryAfterMs = retryAfterFromError(err);
  if (status === 412 || code === 'PreconditionFailed' || LOCK_CODES.has(code) || status === 409) {
    return new ConflictError(message, { retryAfterMs });
  }
  if (status === 429) return new ThrottledError(message, { retryAfterMs });
  if (QUOTA_CODE.test(code)) return new QuotaExceededError(message);
  if (PERMANENT_CODES.has(code)) return new PermanentError(message);
  if (e.name === 'AuthenticationError') {
    // Entra ID refused the credential itself (wrong secret, unknown client, untrusted federation).
    return status !== undefined && status >= 400 && status < 500
      ? new PermanentError(message)
      : new RetryableError(message);
  }
  if (e.name === 'CredentialUnavailableError') return new RetryableError(message);
  // A 503 that says when to come back is the service shedding load.
  if (status === 503 && retryAfterMs !== undefined) return new ThrottledError(message, { retryAfterMs });
  if (status !== undefined && status >= 500) return new RetryableError(message, { retryAfterMs });
  if (status === 408) return new RetryableError(message);
  if (status !== undefined && status >= 400) return new PermanentError(message);
  if (typeof e.code === 'string' && NETWORK_CODES.has(e.code)) return new RetryableError(message);
  return new RetryableError(message);
}
