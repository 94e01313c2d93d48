import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { errorKind, retryAfterMs } from '../../core/errors.ts';
import { azureErrorCode, redact, retryAfterFromError, toRouteError } from './errors.ts';

/** The shape of @azure/core-rest-pipeline's RestError as the SDK throws it. */
function restError(statusCode: number, code: string, headers: Record<string, string> = {}): Error {
  const lower = new Map(Object.entries(headers).map(([k, v]) => [k.toLowerCase(), v]));
  return Object.assign(new Error(`${code}: something happened`), {
    name: 'RestError',
    code,
    statusCode,
    response: { status: statusCode, headers: { get: (n: string) => lower.get(n.toLowerCase()) } },
  });
}

describe('azure errors → SPEC §2.3 kinds', () => {
  test('412 PreconditionFailed is a conflict (re-read, re-plan, retry in place)', () => {
    const e = toRouteError(restError(412, 'PreconditionFailed'), 'PUT route table rt');
    assert.equal(errorKind(e), 'conflict');
    assert.match(e.message, /^PUT route table rt: PreconditionFailed: something happened \(HTTP 412\)$/);
  });

  test('429 with Retry-After is a throttle with retryAfterMs', () => {
    const e = toRouteError(restError(429, 'SubscriptionRequestsThrottled', { 'Retry-After': '17' }), 'PUT');
    assert.equal(errorKind(e), 'throttled');
    assert.equal(retryAfterMs(e), 17_000);
  });

  test("429 RetryableErrorDueToAnotherOperation is Microsoft.Network's lock: a conflict", () => {
    const e = toRouteError(
      restError(429, 'RetryableErrorDueToAnotherOperation', { 'retry-after': '1' }),
      'PUT',
    );
    assert.equal(errorKind(e), 'conflict');
  });

  test('authorization, validation and missing resource groups are permanent', () => {
    for (const [status, code] of [
      [403, 'AuthorizationFailed'],
      [401, 'InvalidAuthenticationToken'],
      [400, 'InvalidRequestFormat'],
      [404, 'ResourceGroupNotFound'],
      [400, 'SomethingNew'],
    ] as const) {
      assert.equal(errorKind(toRouteError(restError(status, code), 'x')), 'permanent', code);
    }
  });

  test('5xx and network errors are retryable; a 503 with Retry-After is a throttle', () => {
    assert.equal(errorKind(toRouteError(restError(500, 'InternalServerError'), 'x')), 'retryable');
    assert.equal(
      errorKind(toRouteError(restError(503, 'ServerBusy', { 'retry-after': '5' }), 'x')),
      'throttled',
    );
    const net = Object.assign(new Error('connect ECONNREFUSED'), { name: 'RestError', code: 'ECONNREFUSED' });
    assert.equal(errorKind(toRouteError(net, 'x')), 'retryable');
  });

  test('quota codes are quota_exceeded', () => {
    assert.equal(
      errorKind(toRouteError(restError(400, 'RouteTableRouteLimitExceeded'), 'x')),
      'quota_exceeded',
    );
    assert.equal(
      errorKind(toRouteError(restError(409, 'QuotaExceeded'), 'x')),
      'conflict',
      '409 wins: resource state',
    );
  });

  test("an LRO that ends Failed: the code from core-lro's message", () => {
    const lro = new Error(
      'The long-running operation has failed. InternalServerError. The operation failed: x',
    );
    assert.equal(azureErrorCode(lro), 'InternalServerError');
    assert.equal(errorKind(toRouteError(lro, 'PUT')), 'retryable');
    const locked = new Error(
      'The long-running operation has failed. RetryableErrorDueToAnotherOperation. busy',
    );
    assert.equal(errorKind(toRouteError(locked, 'PUT')), 'conflict');
    const denied = new Error('The long-running operation has failed. AuthorizationFailed. no');
    assert.equal(errorKind(toRouteError(denied, 'PUT')), 'permanent');
  });

  test('credential errors from @azure/identity', () => {
    const refused = Object.assign(new Error('AADSTS7000215: Invalid client secret provided.'), {
      name: 'AuthenticationError',
      statusCode: 401,
    });
    assert.equal(errorKind(toRouteError(refused, 'x')), 'permanent');
    const unavailable = Object.assign(new Error('ManagedIdentityCredential: unavailable'), {
      name: 'CredentialUnavailableError',
    });
    assert.equal(errorKind(toRouteError(unavailable, 'x')), 'retryable');
  });

  test('an abort, by the signal or by name, is an AbortError', () => {
    const c = new AbortController();
    c.abort();
    assert.equal(toRouteError(restError(500, 'X'), 'x', c.signal).name, 'AbortError');
    assert.equal(toRouteError(Object.assign(new Error('a'), { name: 'AbortError' }), 'x').name, 'AbortError');
  });

  test('Retry-After as an HTTP date, and none', () => {
    const now = Date.parse('2026-01-01T00:00:00Z');
    const e = restError(429, 'T', { 'retry-after': 'Thu, 01 Jan 2026 00:00:30 GMT' });
    assert.equal(retryAfterFromError(e, now), 30_000);
    assert.equal(retryAfterFromError(restError(429, 'T')), undefined);
  });

  test('tokens and secrets never reach messages', () => {
    const jwt = 'eyJhbGciOiJSUzI1NiJ9.eyJhdWQiOiJodHRwczovL21hbmFnZW1lbnQifQ.c2lnbmF0dXJlc2lnbmF0dXJl';
    assert.ok(!redact(`bad token ${jwt}`).includes('eyJhbGci'));
    assert.equal(redact('client_secret=hunter2&x=1'), 'client_secret=<redacted>&x=1');
    assert.ok(redact('x'.repeat(1000)).length < 700);
  });
});
