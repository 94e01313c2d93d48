// Keystone and Neutron failures as the typed errors of SPEC §2.3. Both answer errors as JSON:
// Neutron `{"NeutronError": {"type", "message", "detail"}}`, Keystone `{"error": {"code",
// "title", "message"}}`; the type decides where the status alone would mislead (a 400 is a
// bad request, unless its type is RoutesExhausted, the router's route limit).
import {
  AbortError,
  ConflictError,
  PermanentError,
  QuotaExceededError,
  RetryableError,
  ThrottledError,
} from '../../core/errors.ts';
import type { RouteError } from '../../core/errors.ts';
import { NETWORK_ERROR_CODES } from '../network-errors.ts';

/** Neutron's max_routes (default 30 per router) and the project quotas. */
const QUOTA_TYPES: ReadonlySet<string> = new Set(['RoutesExhausted', 'OverQuota']);
const MAX_MESSAGE = 600;

export interface ApiErrorBody {
  readonly type: string;
  readonly message: string;
}

/** The error type and message of a Neutron or Keystone error body; '' when it has none. */
export function parseErrorBody(text: string): ApiErrorBody {
  try {
    const body = JSON.parse(text) as Record<string, unknown>;
    const neutron = body['NeutronError'] as { type?: unknown; message?: unknown } | undefined;
    if (neutron && typeof neutron === 'object') {
      return {
        type: typeof neutron.type === 'string' ? neutron.type : '',
        message: typeof neutron.message === 'string' ? neutron.message : '',
      };
    }
    const keystone = body['error'] as { title?: unknown; message?: unknown } | undefined;
    if (keystone && typeof keystone === 'object') {
      return {
        type: typeof keystone.title === 'string' ? keystone.title : '',
        message: typeof keystone.message === 'string' ? keystone.message : '',
      };
    }
  } catch {
    // Not JSON: a proxy's page. Its text is the explanation.
  }
  return { type: '', message: text.replace(/\s+/g, ' ').trim() };
}

/** Milliseconds from a Retry-After header (delta seconds or HTTP date). */
export function retryAfter(value: string | null, now: number = Date.now()): number | undefined {
  if (value === null || value.trim() === '') return undefined;
  const text = value.trim();
  if (/^\d+(\.\d+)?$/.test(text)) return Math.round(Number(text) * 1000);
  const at = Date.parse(text);
  return Number.isNaN(at) ? undefined : Math.max(0, at - now);
}

function bounded(text: string): string {
  return text.length > MAX_MESSAGE ? `${text.slice(0, MAX_MESSAGE)}…` : text;
}

/** Maps an HTTP error answer of Keystone or Neutron onto §2.3; `what` names the call. */
export function httpError(what: string, status: number, bodyText: string, retryAfterMs?: number): RouteError {
  const { type, message } = parseErrorBody(bodyText);
  const text = bounded(
    `${what}: HTTP ${status}${type !== '' ? ` ${type}` : ''}${message !== '' ? `: ${message}` : ''}`,
  );
  if (status === 429) return new ThrottledError(text, { retryAfterMs });
  if (QUOTA_TYPES.has(type)) return new QuotaExceededError(text);
  // 412: If-Match lost to another writer; 409: a concurrent change Neutron refused.
  if (status === 412 || status === 409) return new ConflictError(text);
  if (status === 503 && retryAfterMs !== undefined) return new ThrottledError(text, { retryAfterMs });
  if (status >= 500 || status === 408) return new RetryableError(text, { retryAfterMs });
  if (status >= 400) return new PermanentError(text);
  return new RetryableError(text);
}

/** A transport failure (no answer): abort, socket error or anything else unknown. */
export function transportError(what: string, err: unknown, signal: AbortSignal): Error {
  if (signal.aborted || (err as { name?: unknown })?.name === 'AbortError') {
    return new AbortError(`${what}: aborted`);
  }
  const cause = (err as { cause?: { code?: unknown; message?: unknown } })?.cause;
  const code = typeof cause?.code === 'string' ? cause.code : '';
  const detail = typeof cause?.message === 'string' ? cause.message : String((err as Error)?.message ?? err);
  const text = bounded(`${what}: ${detail}`);
  if (
    code !== '' &&
    !NETWORK_ERROR_CODES.has(code) &&
    /^(ERR_TLS|CERT_|DEPTH_ZERO|SELF_SIGNED|UNABLE_TO)/.test(code)
  ) {
    // A certificate the CA does not vouch for will not become valid by retrying.
    return new PermanentError(`${text} (check "ca-file")`);
  }
  return new RetryableError(text);
}
