// Translates AWS SDK failures into the typed errors of SPEC §2.3. The SDK's
// service exceptions carry the EC2 error code as `name`, HTTP metadata in
// `$metadata`, and the raw response (for Retry-After) in a hidden `$response`.
import {
  AbortError,
  PermanentError,
  QuotaExceededError,
  RetryableError,
  ThrottledError,
  throwIfAborted,
} from '../../core/errors.ts';
import { NETWORK_ERROR_CODES } from '../network-errors.ts';

const THROTTLING_CODES: ReadonlySet<string> = new Set([
  'RequestLimitExceeded',
  'Throttling',
  'ThrottlingException',
  'RequestThrottled',
  'RequestThrottledException',
  'EC2ThrottledException',
  'TooManyRequestsException',
  'SlowDown',
]);

const QUOTA_CODES: ReadonlySet<string> = new Set(['RouteLimitExceeded']);

// Requests that cannot succeed by repetition: a retry before someone changes
// the node, the cloud config or IAM would fail the same way.
const PERMANENT_CODES: ReadonlySet<string> = new Set([
  'InvalidParameterValue',
  'InvalidParameterCombination',
  'InvalidParameter',
  'MissingParameter',
  'InvalidInstanceID.NotFound',
  'InvalidInstanceID.Malformed',
  'InvalidRouteTableID.NotFound',
  'InvalidRouteTableID.Malformed',
  'InvalidNetworkInterfaceID.NotFound',
  'UnsupportedOperation',
  'UnauthorizedOperation',
  'AuthFailure',
  'OptInRequired',
  'Blocked',
]);

interface SdkErrorShape {
  name?: unknown;
  message?: unknown;
  code?: unknown;
  $fault?: unknown;
  $metadata?: { httpStatusCode?: unknown; requestId?: unknown };
  $response?: { statusCode?: unknown; headers?: unknown };
  $retryable?: { throttling?: unknown };
}

function shape(err: unknown): SdkErrorShape {
  return typeof err === 'object' && err !== null ? (err as SdkErrorShape) : {};
}

/** The EC2 error code (`RouteAlreadyExists`, ...), or '' for non-service errors. */
export function awsErrorCode(err: unknown): string {
  const e = shape(err);
  // Only service exceptions have $metadata; a plain Error's name is not a code.
  if (e.$metadata === undefined) return '';
  return typeof e.name === 'string' ? e.name : '';
}

function httpStatus(err: unknown): number | undefined {
  const e = shape(err);
  const status = e.$metadata?.httpStatusCode ?? e.$response?.statusCode;
  return typeof status === 'number' ? status : undefined;
}

/**
 * Milliseconds from a Retry-After header (delta seconds or HTTP date) on the
 * raw response, if the service sent one.
 */
export function retryAfterFromResponse(err: unknown, now: number = Date.now()): number | undefined {
  const headers = shape(err).$response?.headers;
  if (typeof headers !== 'object' || headers === null) return undefined;
  for (const [name, value] of Object.entries(headers as Record<string, unknown>)) {
    if (name.toLowerCase() !== 'retry-after' || typeof value !== 'string') continue;
    const text = value.trim();
    if (/^\d+(\.\d+)?$/.test(text)) return Math.round(Number(text) * 1000);
    const at = Date.parse(text);
    if (!Number.isNaN(at)) return Math.max(0, at - now);
  }
  return undefined;
}

// AWS messages name resources, not secrets, but a SignatureDoesNotMatch body
// can echo the canonical request (security token included), and a proxy's
// error page can echo anything; strip key-shaped runs before they reach Events.
const SECRETS: readonly RegExp[] = [
  /\b(AKIA|ASIA|AIDA|AROA|ANPA)[A-Z0-9]{12,}\b/g,
  /(x-amz-security-token|x-amz-credential|authorization|signature)(["']?\s*[:=]\s*)[^\s&,;"']+/gi,
  /[A-Za-z0-9/+]{40,}={0,2}/g,
];
const MAX_MESSAGE = 600;

/** Removes credential-shaped text and bounds the length of a cloud message. */
export function redact(message: string): string {
  let out = message;
  out = out.replace(SECRETS[0]!, '<redacted>');
  out = out.replace(SECRETS[1]!, '$1$2<redacted>');
  out = out.replace(SECRETS[2]!, '<redacted>');
  return out.length > MAX_MESSAGE ? `${out.slice(0, MAX_MESSAGE)}…` : out;
}

function describe(err: unknown): string {
  const e = shape(err);
  const code = awsErrorCode(err) || (typeof e.code === 'string' ? e.code : '');
  const raw = typeof e.message === 'string' && e.message !== '' ? e.message : String(err);
  const status = httpStatus(err);
  const requestId = e.$metadata?.requestId;
  let text = code !== '' && !raw.startsWith(code) ? `${code}: ${raw}` : raw;
  const extra: string[] = [];
  if (status !== undefined) extra.push(`HTTP ${status}`);
  if (typeof requestId === 'string' && requestId !== '') extra.push(`request id ${requestId}`);
  if (extra.length > 0) text += ` (${extra.join(', ')})`;
  return redact(text);
}

/**
 * Maps a failed EC2 call to a §2.3 error. `what` names the operation and its
 * resources for the message; `signal` tells a controller abort from other
 * aborts. The SDK error is not attached as `cause`: its hidden fields hold the
 * raw response, and loggers that walk causes would print it.
 */
export function toRouteError(err: unknown, what: string, signal?: AbortSignal): Error {
  const e = shape(err);
  if (signal?.aborted || e.name === 'AbortError') {
    return new AbortError(`${what}: aborted`);
  }
  const code = awsErrorCode(err);
  const status = httpStatus(err);
  const message = `${what}: ${describe(err)}`;
  const retryAfterMs = retryAfterFromResponse(err);
  if (THROTTLING_CODES.has(code) || status === 429 || e.$retryable?.throttling === true) {
    return new ThrottledError(message, { retryAfterMs });
  }
  if (QUOTA_CODES.has(code)) return new QuotaExceededError(message);
  if (PERMANENT_CODES.has(code)) return new PermanentError(message);
  // A 503 that says when to come back is the service shedding load.
  if (status === 503 && retryAfterMs !== undefined) return new ThrottledError(message, { retryAfterMs });
  if (status !== undefined && status >= 500) return new RetryableError(message, { retryAfterMs });
  if (e.$fault === 'server') return new RetryableError(message);
  if (typeof e.code === 'string' && NETWORK_ERROR_CODES.has(e.code)) return new RetryableError(message);
  // Unknown client errors: EC2 names its validation failures Invalid*/Unsupported*.
  if (/^(Invalid|Unsupported|Malformed)/.test(code)) return new PermanentError(message);
  return new RetryableError(message);
}

/** One EC2 call of a route operation: none once `signal` has fired, and its failure mapped by toRouteError. */
export async function ec2Call<T>(what: string, signal: AbortSignal, fn: () => Promise<T>): Promise<T> {
  throwIfAborted(signal);
  try {
    return await fn();
  } catch (err) {
    throw toRouteError(err, what, signal);
  }
}
