import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { errorKind, retryAfterMs } from '../../core/errors.ts';
import { apiErrorFromResponse, GceApiError, parseRetryAfter, redact, toRouteError } from './errors.ts';

const body = (code: number, reason: string, message: string, status = ''): string =>
  JSON.stringify({ error: { code, message, status, errors: [{ reason, domain: 'global', message }] } });

const kind = (status: number, reason: string, message: string, retryAfter: string | null = null): string =>
  errorKind(
    toRouteError(apiErrorFromResponse(status, body(status, reason, message), retryAfter), 'insert route r'),
  );

describe('gce errors', () => {
  test("Google's documented answers map to the §2.3 kinds", () => {
    assert.equal(kind(403, 'rateLimitExceeded', 'Rate Limit Exceeded'), 'throttled');
    assert.equal(kind(403, 'userRateLimitExceeded', 'User Rate Limit Exceeded'), 'throttled');
    assert.equal(kind(429, 'rateLimitExceeded', 'Too Many Requests'), 'throttled');
    assert.equal(
      kind(403, 'quotaExceeded', "Quota 'ROUTES' exceeded.  Limit: 250.0 globally."),
      'quota_exceeded',
    );
    assert.equal(
      kind(403, 'quotaExceeded', "Quota exceeded for quota metric 'Queries' and limit 'Queries per minute'"),
      'throttled',
    );
    assert.equal(kind(409, 'alreadyExists', 'exists'), 'conflict');
    assert.equal(
      kind(400, 'resourceNotReady', "The resource 'projects/p/global/networks/n' is not ready"),
      'conflict',
    );
    assert.equal(kind(403, 'forbidden', "Required 'compute.routes.create' permission"), 'permanent');
    assert.equal(kind(400, 'invalid', "Invalid value for field 'resource.destRange'"), 'permanent');
    assert.equal(
      kind(401, 'required', 'Request is missing required authentication credential.'),
      'permanent',
    );
    assert.equal(kind(404, 'notFound', 'not found'), 'permanent');
    assert.equal(kind(500, 'backendError', 'Internal error'), 'retryable');
    assert.equal(kind(503, 'backendError', 'Unavailable'), 'retryable');
    assert.equal(kind(503, 'backendError', 'Unavailable', '30'), 'throttled');
  });

  test('operation errors: QUOTA_EXCEEDED is the route quota, others by their HTTP status', () => {
    const op = (code: string, status: number): string =>
      errorKind(toRouteError(new GceApiError('operation failed', status, code), 'x'));
    assert.equal(op('QUOTA_EXCEEDED', 403), 'quota_exceeded');
    assert.equal(op('RATE_LIMIT_EXCEEDED', 403), 'throttled');
    assert.equal(op('RESOURCE_NOT_READY', 400), 'conflict');
    assert.equal(op('INVALID_USAGE', 400), 'permanent');
    assert.equal(op('INTERNAL_ERROR', 500), 'retryable');
    assert.equal(op('UNKNOWN', 0), 'retryable');
  });

  test('Retry-After becomes retryAfterMs; the message keeps the reason and status', () => {
    const e = toRouteError(
      apiErrorFromResponse(429, body(429, 'rateLimitExceeded', 'slow down'), '7'),
      'insert route r',
    );
    assert.equal(retryAfterMs(e), 7000);
    assert.equal(e.message, 'insert route r: slow down (HTTP 429, reason rateLimitExceeded)');
    assert.equal(
      parseRetryAfter('Wed, 21 Oct 2026 07:28:00 GMT', Date.parse('Wed, 21 Oct 2026 07:27:50 GMT')),
      10_000,
    );
    assert.equal(parseRetryAfter('soon'), undefined);
  });

  test('a non-JSON answer, a socket error and an abort', () => {
    const html = apiErrorFromResponse(502, '<html><body>Bad Gateway</body></html>', null);
    assert.equal(errorKind(toRouteError(html, 'x')), 'retryable');
    assert.match(html.message, /Bad Gateway/);
    const reset = new Error('fetch failed', {
      cause: Object.assign(new Error('socket hang up'), { code: 'ECONNRESET' }),
    });
    const e = toRouteError(reset, 'list routes');
    assert.equal(errorKind(e), 'retryable');
    assert.equal(e.message, 'list routes: fetch failed (ECONNRESET)');
    const ac = new AbortController();
    ac.abort();
    assert.equal(toRouteError(new Error('x'), 'y', ac.signal).name, 'AbortError');
  });

  test('tokens never reach a message', () => {
    assert.equal(redact('bad token ya29.a0AfB_byC-secret.value here'), 'bad token <redacted> here');
    assert.equal(redact('assertion=eyJhbGciOiJSUzI1NiJ9.eyJpc3MiOiJ4In0.sig&x'), 'assertion=<redacted>&x');
  });
});
