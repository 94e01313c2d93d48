// The gce plug-in's answers to Compute Engine's errors, against Google's MockGCE
// (testenv/gce-fake) with faults injected: throttling and quota, forbidden and
// permanent, retryable 5xx and failed operations, and an aborted operation wait.
// Run: scripts/gce-fake.sh build && node --test test/integration/gce-errors.test.ts
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { errorKind, retryAfterMs } from '../../src/core/errors.ts';
import { gceFakeSkip } from '../support/gce-fake.ts';
import { gceProviderFixture, kindOf, UID1 } from '../support/gce-provider.ts';
import { callOptions, wantRoute } from '../support/provider-calls.ts';

describe("gce provider's errors against Google's MockGCE", { ...gceFakeSkip(), timeout: 120_000 }, () => {
  const ctx = gceProviderFixture();

  test('throttling: 403 rateLimitExceeded and 429 with Retry-After; quota: QUOTA_EXCEEDED and quotaExceeded', async () => {
    const create = (cidr: string) =>
      ctx.routes.createRoute('kubernetes', 'h', wantRoute('node1', cidr), callOptions());
    await ctx.fake.inject({
      api: 'routes.insert',
      status: 403,
      reason: 'rateLimitExceeded',
      message:
        "Quota exceeded for quota metric 'Queries' and limit 'Queries per minute' of service 'compute.googleapis.com'",
    });
    await assert.rejects(
      create('10.244.1.0/24'),
      (err: Error) => errorKind(err) === 'throttled' && retryAfterMs(err) === undefined,
    );
    await ctx.fake.inject({
      api: 'routes.insert',
      status: 429,
      reason: 'rateLimitExceeded',
      message: 'Rate Limit Exceeded',
      retryAfter: '7',
    });
    await assert.rejects(
      create('10.244.1.0/24'),
      (err: Error) => errorKind(err) === 'throttled' && retryAfterMs(err) === 7000,
    );
    await ctx.fake.inject({
      api: 'routes.insert',
      opError: {
        code: 'QUOTA_EXCEEDED',
        message: "Quota 'ROUTES' exceeded.  Limit: 250.0 globally.",
        httpStatus: 403,
      },
    });
    await assert.rejects(
      create('10.244.1.0/24'),
      (err: Error) => errorKind(err) === 'quota_exceeded' && /Quota 'ROUTES' exceeded/.test(err.message),
    );
    await ctx.fake.inject({
      api: 'routes.insert',
      status: 403,
      reason: 'quotaExceeded',
      message: "Quota 'STATIC_ROUTES_PER_NETWORK' exceeded. Limit: 250.0 globally.",
    });
    await assert.rejects(create('10.244.1.0/24'), (err: Error) => errorKind(err) === 'quota_exceeded');
    assert.deepEqual(await ctx.fake.routes(), [], 'nothing was created');
    assert.equal(await ctx.fake.pendingFaults(), 0);
  });

  test('other errors: 403 forbidden and 400 permanent, 500 and a failed list retryable, an operation error by its status', async () => {
    const create = (cidr: string) =>
      ctx.routes.createRoute('kubernetes', 'h', wantRoute('node1', cidr), callOptions());
    await ctx.fake.inject({
      api: 'routes.insert',
      status: 403,
      reason: 'forbidden',
      message:
        "Required 'compute.routes.create' permission for 'projects/k8s-project/global/routes/kubernetes-h'",
    });
    await assert.rejects(
      create('10.244.1.0/24'),
      (err: Error) =>
        errorKind(err) === 'permanent' &&
        /compute\.routes\.create.*HTTP 403, reason forbidden/.test(err.message),
    );
    await ctx.fake.inject({
      api: 'routes.insert',
      status: 500,
      reason: 'backendError',
      message: 'Internal error. Please try again or contact Google Support.',
    });
    assert.equal(await kindOf(create('10.244.1.0/24')), 'retryable');
    await ctx.fake.inject({
      api: 'routes.list',
      status: 503,
      reason: 'backendError',
      message: 'The service is currently unavailable.',
    });
    assert.equal(await kindOf(ctx.routes.listRoutes('kubernetes', callOptions())), 'retryable');
    await ctx.fake.inject({
      api: 'routes.insert',
      opError: {
        code: 'RESOURCE_NOT_READY',
        message: "The resource 'projects/k8s-project/global/networks/k8s-net' is not ready",
        httpStatus: 400,
      },
    });
    assert.equal(await kindOf(create('10.244.1.0/24')), 'conflict');
    await ctx.fake.inject({
      api: 'routes.insert',
      opError: { code: 'INTERNAL_ERROR', message: 'Internal error.', httpStatus: 500 },
    });
    assert.equal(await kindOf(create('10.244.1.0/24')), 'retryable');
    // The API's own validation: an IPv4 CIDR with host bits is refused, permanently.
    assert.equal(await kindOf(create('10.244.1.7/24')), 'permanent');
    assert.deepEqual(await ctx.fake.routes(), []);
  });

  test('an aborted signal ends a long operation wait with AbortError', async () => {
    await ctx.fake.configure({ opPolls: 100_000, waitSteps: 5 });
    const stop = new AbortController();
    const call = ctx.routes.createRoute(
      'kubernetes',
      UID1,
      wantRoute('node1', '10.244.1.0/24'),
      callOptions(stop.signal),
    );
    const waits = async (): Promise<number> =>
      (await ctx.fake.requests()).filter((e) => e.api === 'globalOperations.wait').length;
    for (let i = 0; i < 500 && (await waits()) < 2; i++) await new Promise((r) => setTimeout(r, 10));
    assert.ok((await waits()) >= 2, 'the operation was waited on');
    stop.abort();
    await assert.rejects(call, { name: 'AbortError' });
  });
});
