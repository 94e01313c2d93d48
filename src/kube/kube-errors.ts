// Typed apiserver errors and their parsing from HTTP responses.
import type * as http from 'node:http';
import { nodeHttp } from '../platform/node-http.ts';
import { ApiStatusError } from '../core/ports.ts';
import { decodeStatusBody, PROTOBUF_CONTENT_TYPE } from './proto-messages.ts';

/** An HTTP error status from the apiserver, with its Status reason and Retry-After. */
export class KubeApiError extends ApiStatusError {
  readonly reason: string | undefined;
  readonly retryAfterMs: number | undefined;
  constructor(statusCode: number, message: string, opts: { reason?: string; retryAfterMs?: number } = {}) {
    super(statusCode, message);
    this.reason = opts.reason;
    this.retryAfterMs = opts.retryAfterMs;
  }
}

/** The request never got an HTTP status: connection refused/reset, TLS, timeout. */
export class KubeRequestError extends Error {
  override readonly name = 'KubeRequestError';
}

/** Parses a Retry-After header: delta-seconds or an HTTP date. */
export function parseRetryAfter(value: string | undefined, now = Date.now()): number | undefined {
  if (value === undefined || value.trim() === '') return undefined;
  const s = Number(value);
  if (Number.isFinite(s)) return Math.max(0, s * 1000);
  const t = Date.parse(value);
  return Number.isNaN(t) ? undefined : Math.max(0, t - now);
}

/** The parsed Status of an error body: JSON, or protobuf when the server chose it (R110); undefined if neither. */
function statusOf(headers: http.IncomingHttpHeaders, body: string | Buffer): unknown {
  const type = headers['content-type'] ?? '';
  if (typeof body !== 'string' && type.startsWith(PROTOBUF_CONTENT_TYPE)) {
    try {
      return decodeStatusBody(body);
    } catch {
      return undefined;
    }
  }
  try {
    return JSON.parse(typeof body === 'string' ? body : body.toString('utf8')) as unknown;
  } catch {
    return undefined;
  }
}

/** Maps an error response (usually a metav1.Status, in JSON or protobuf) to a KubeApiError. */
export function apiErrorFrom(
  status: number,
  headers: http.IncomingHttpHeaders,
  body: string | Buffer,
): KubeApiError {
  let message = `HTTP ${status} ${nodeHttp.STATUS_CODES[status] ?? ''}`.trim();
  let reason: string | undefined;
  let retryAfterMs = parseRetryAfter(
    Array.isArray(headers['retry-after']) ? headers['retry-after'][0] : headers['retry-after'],
  );
  const s = statusOf(headers, body);
  if (typeof s === 'object' && s !== null) {
    const st = s as { message?: unknown; reason?: unknown; details?: { retryAfterSeconds?: unknown } };
    if (typeof st.message === 'string' && st.message !== '') message = st.message;
    if (typeof st.reason === 'string' && st.reason !== '') reason = st.reason;
    const ra = st.details?.retryAfterSeconds;
    if (retryAfterMs === undefined && typeof ra === 'number' && ra > 0) retryAfterMs = ra * 1000;
  } else {
    const text = (typeof body === 'string' ? body : body.toString('utf8')).trim();
    if (text !== '') message = `${message}: ${text.slice(0, 200)}`;
  }
  return new KubeApiError(status, message, {
    ...(reason === undefined ? {} : { reason }),
    ...(retryAfterMs === undefined ? {} : { retryAfterMs }),
  });
}
