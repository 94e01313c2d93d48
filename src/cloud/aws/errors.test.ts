import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { DescribeRouteTablesCommand } from './ec2.ts';
import { errorKind, retryAfterMs } from '../../core/errors.ts';
import { ec2Error, stubEc2 } from '../../../test/support/ec2-stub.ts';
import type { StubReply } from '../../../test/support/ec2-stub.ts';
import { redact, retryAfterFromResponse, toRouteError } from './errors.ts';

/** A real SDK service exception, deserialized from a synthesized EC2 reply. */
async function sdkError(reply: StubReply): Promise<unknown> {
  const { client } = stubEc2(() => reply);
  try {
    await client.send(new DescribeRouteTablesCommand({}));
  } catch (err) {
    return err;
  }
  assert.fail('expected the call to fail');
}

describe('aws error mapping', () => {
  const cases: [string, StubReply, string, number | undefined][] = [
    [
      'RequestLimitExceeded with Retry-After',
      ec2Error('RequestLimitExceeded', 'Request limit exceeded.', 503, { 'Retry-After': '3' }),
      'throttled',
      3000,
    ],
    ['Throttling without a hint', ec2Error('Throttling', 'Rate exceeded', 400), 'throttled', undefined],
    ['HTTP 429', ec2Error('TooManyRequests', 'slow down', 429, { 'retry-after': '0.5' }), 'throttled', 500],
    ['503 with a hint', ec2Error('Unavailable', 'busy', 503, { 'Retry-After': '7' }), 'throttled', 7000],
    ['503 without a hint', ec2Error('Unavailable', 'busy', 503), 'retryable', undefined],
    ['500', ec2Error('InternalError', 'An internal error has occurred', 500), 'retryable', undefined],
    [
      'RouteLimitExceeded',
      ec2Error('RouteLimitExceeded', 'The maximum number of routes has been reached.'),
      'quota_exceeded',
      undefined,
    ],
    [
      'InvalidParameterValue',
      ec2Error('InvalidParameterValue', 'Value (x) for parameter destinationCidrBlock is invalid.'),
      'permanent',
      undefined,
    ],
    [
      'InvalidInstanceID.NotFound',
      ec2Error('InvalidInstanceID.NotFound', "The instance ID 'i-1' does not exist"),
      'permanent',
      undefined,
    ],
    [
      'UnauthorizedOperation',
      ec2Error('UnauthorizedOperation', 'You are not authorized to perform this operation.', 403),
      'permanent',
      undefined,
    ],
    ['an unknown Invalid* code', ec2Error('InvalidFoo.Bar', 'no'), 'permanent', undefined],
    ['an unknown client error', ec2Error('IncorrectState', 'try later'), 'retryable', undefined],
  ];
  for (const [name, reply, kind, after] of cases) {
    test(name, async () => {
      const mapped = toRouteError(await sdkError(reply), 'DescribeRouteTables rtb-1');
      assert.equal(errorKind(mapped), kind);
      assert.equal(retryAfterMs(mapped), after);
      assert.match(mapped.message, /^DescribeRouteTables rtb-1: \S+: /);
      assert.match(mapped.message, new RegExp(`HTTP ${reply.status ?? 200}`));
    });
  }

  test('the message carries AWS code and message', async () => {
    const mapped = toRouteError(
      await sdkError(ec2Error('RouteLimitExceeded', 'The maximum number of routes has been reached.')),
      'CreateRoute 10.244.1.0/24',
    );
    assert.equal(
      mapped.message,
      'CreateRoute 10.244.1.0/24: RouteLimitExceeded: The maximum number of routes has been reached. (HTTP 400)',
    );
    assert.equal(mapped.name, 'QuotaExceededError');
  });

  test('network errors are retryable', () => {
    const err = Object.assign(new Error('connect ECONNREFUSED 127.0.0.1:9'), { code: 'ECONNREFUSED' });
    assert.equal(errorKind(toRouteError(err, 'DescribeRouteTables')), 'retryable');
  });

  test('aborts become AbortError', () => {
    const sdkAbort = Object.assign(new Error('Request aborted'), { name: 'AbortError' });
    assert.equal(toRouteError(sdkAbort, 'CreateRoute').name, 'AbortError');
    const controller = new AbortController();
    controller.abort();
    assert.equal(
      toRouteError(new Error('socket hang up'), 'CreateRoute', controller.signal).name,
      'AbortError',
    );
  });

  test('Retry-After as an HTTP date', () => {
    const now = Date.parse('2026-01-01T00:00:00Z');
    const err = {
      $response: { statusCode: 503, headers: { 'retry-after': 'Thu, 01 Jan 2026 00:00:10 GMT' } },
    };
    assert.equal(retryAfterFromResponse(err, now), 10_000);
    assert.equal(retryAfterFromResponse({ $response: { headers: { 'retry-after': 'soon' } } }), undefined);
    assert.equal(retryAfterFromResponse(new Error('x')), undefined);
  });

  test('credentials never reach the message', async () => {
    const secret = 'wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY';
    const token = 'IQoJb3JpZ2luX2VjEKr//////////wEaCXVzLWVhc3QtMSJHMEUCIQ';
    const body = `The request signature we calculated does not match. Canonical request: x-amz-security-token:${token} AKIAIOSFODNN7EXAMPLE ${secret}`;
    const mapped = toRouteError(
      await sdkError(ec2Error('SignatureDoesNotMatch', body, 403)),
      'DescribeRouteTables',
    );
    for (const s of [secret, token, 'AKIAIOSFODNN7EXAMPLE'])
      assert.ok(!mapped.message.includes(s), mapped.message);
    assert.match(mapped.message, /SignatureDoesNotMatch: The request signature we calculated does not match/);
  });

  test('redact bounds the length', () => {
    assert.ok(redact('x '.repeat(2000)).length <= 601);
    assert.equal(
      redact('route rtb-0123456789abcdef0 i-0123456789abcdef0'),
      'route rtb-0123456789abcdef0 i-0123456789abcdef0',
    );
  });
});
