// Watch mode with the route cache (SPEC R65–R67) and the throttle/backoff split
// (R70), on a virtual clock: cached reconciles skip listRoutes and R44, and
// every invalidation case makes the next reconcile list.
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { ConflictError, QuotaExceededError, RetryableError } from '../core/errors.ts';
import type { CallOptions, OperationResult, Route, RoutePlan, Routes } from '../core/types.ts';
import { harness, ip, started, watching } from '../testing/harness.ts';
import type { MemoryRoutes } from '../cloud/memory/memory-routes.ts';

const S = 1000;
const I = 10 * S;

type H = ReturnType<typeof harness>;

const sources = (h: H): string[] => h.reports.map((r) => r.source);

/** Adds node `name` and returns the time it was added. */
function join(h: H, name: string, cidr: string): number {
  h.cluster.createNode({ name, podCIDRs: [cidr], addresses: ip('10.0.9.9') });
  return h.clock.now();
}

describe('route cache (SPEC R65–R67)', () => {
  it('R66: a node change right after a list reconciles at once against the cache, without listRoutes', async () => {
    const h = watching();
    await started(h);
    const t = join(h, 'b', '10.120.1.0/24');
    await h.clock.advance(0);
    const create = h.cloud.calls.find((c) => c.op === 'create' && c.targetNode === 'b');
    assert.ok(create, 'created');
    assert.equal(create.start - t, 0, 'no R44 wait: the route is one cloud call away');
    assert.equal(h.cloud.count('list'), 1);
    assert.deepEqual(sources(h), ['list', 'cache']);
    assert.equal(h.conditions()['b'], 'False/RouteCreated');
    assert.equal(await h.metric('route_controller_cached_reconciles_total'), 1);
    // A deleted node's route goes the same way: the cache holds the created route as listed.
    h.cluster.deleteNode('b');
    await h.clock.advance(0);
    assert.deepEqual(h.routeSet(), ['10.120.0.0/24->a']);
    assert.equal(h.cloud.count('list'), 1);
    await h.stop();
  });

  it('R43 still holds: triggers during a cached run coalesce into exactly one follow-up', async () => {
    const h = watching({ nodes: [], cloud: { latencyMs: { create: 2 * S } } });
    await started(h);
    join(h, 'b', '10.120.1.0/24');
    await h.clock.advance(100);
    join(h, 'c', '10.120.2.0/24');
    join(h, 'd', '10.120.3.0/24');
    await h.clock.advance(10 * S);
    assert.equal(h.reports.length, 3, 'initial, b, then one for c and d');
    assert.deepEqual(sources(h), ['list', 'cache', 'cache']);
    assert.equal(h.cloud.count('create'), 3);
    assert.equal(h.cloud.count('list'), 1);
    await h.stop();
  });

  // R85: throttled and permanent answers keep the cache (src/controller/known-outcomes.test.ts).
  const failures: [string, (h: H) => void][] = [
    ['a retryable error', (h) => h.cloud.failNext(1, ['create'], () => new RetryableError('503'))],
    [
      'a conflict (even one R24 retried into a success)',
      (h) => h.cloud.failNext(1, ['create'], () => new ConflictError('busy')),
    ],
    ['a timeout', (h) => h.cloud.hangNext(1, ['create'])],
    [
      'a quota error (only a list shows the stale routes that may hold the quota)',
      (h) => h.cloud.failNext(1, ['create'], () => new QuotaExceededError('route limit reached')),
    ],
  ];
  for (const [what, inject] of failures) {
    it(`R65: after ${what} the cache is dropped and the next reconcile, retry or node change, lists`, async () => {
      const h = watching({ controller: { cloudCallTimeoutMs: 2 * S } });
      await started(h);
      inject(h);
      join(h, 'b', '10.120.1.0/24');
      await h.clock.advance(30 * S);
      assert.equal(h.reports[1]!.source, 'cache');
      // A failed reconcile retries (R46/R70); one that succeeded after a retried conflict waits for the next trigger.
      join(h, 'c', '10.120.2.0/24');
      await h.clock.advance(15 * S);
      assert.equal(h.reports[2]!.source, 'list', 'the reconcile after the failed one listed');
      const lists = h.cloud.calls.filter((c) => c.op === 'list').map((c) => c.start);
      assert.ok(lists[1]! - lists[0]! >= I, 'R44 spaces the listing reconcile');
      assert.deepEqual(h.routeSet(), ['10.120.0.0/24->a', '10.120.1.0/24->b', '10.120.2.0/24->c']);
      // Another change after the listing reconcile is cached again (the list refilled the cache).
      const listsBefore = h.cloud.count('list');
      join(h, 'd', '10.120.3.0/24');
      await h.clock.advance(0);
      assert.equal(h.cloud.count('list'), listsBefore);
      assert.equal(h.reports.at(-1)!.source, 'cache');
      assert.ok((await h.metric('route_controller_route_cache_invalidations_total')) >= 1);
      await h.stop();
    });
  }

  it('R65: an applyRoutes result with any failure drops the cache', async () => {
    const batch = new BatchRoutes();
    const b = harness({
      nodes: [{ name: 'a', podCIDRs: ['10.120.0.0/24'] }],
      controller: { watchBasedReconciliation: true, routes: batch },
    });
    batch.mem = b.cloud;
    await started(b);
    batch.failCreates = 1;
    join(b, 'b', '10.120.1.0/24');
    join(b, 'c', '10.120.2.0/24');
    await b.clock.advance(0);
    assert.equal(b.cloud.count('list'), 1, 'the batch ran against the cache');
    await b.clock.advance(I + 3 * S);
    assert.equal(b.cloud.count('list'), 2, 'then the retry (R46) listed');
    assert.deepEqual(b.routeSet(), ['10.120.0.0/24->a', '10.120.1.0/24->b', '10.120.2.0/24->c']);
    await b.stop();
  });

  it('R65: the safety resync always lists; a retry uses the cache when it is still valid (R66)', async () => {
    const h = watching({ controller: { routeResyncPeriodMs: 60 * S } });
    await started(h);
    await h.clock.advance(70 * S);
    const periodic = h.reports.filter((r) => r.trigger === 'periodic');
    assert.equal(periodic.length, 1);
    assert.equal(periodic[0]!.source, 'list');
    // A failed condition write makes a retry; the cloud answered every call, so the cache stands.
    h.cluster.failPatches(1, 500);
    join(h, 'b', '10.120.1.0/24');
    await h.clock.advance(30 * S);
    const retry = h.reports.find((r) => r.trigger === 'retry');
    assert.ok(retry, 'retried');
    assert.equal(retry.source, 'cache');
    assert.equal(h.cloud.count('list'), 2, 'the start and the resync');
    assert.equal(h.conditions()['b'], 'False/RouteCreated');
    await h.stop();
  });

  it('R49: cached reconciles do not postpone the safety resync', async () => {
    const h = watching({ controller: { routeResyncPeriodMs: 60 * S } });
    await started(h);
    for (let i = 1; i <= 12; i++) {
      join(h, `n${i}`, `10.120.${i}.0/24`);
      await h.clock.advance(5 * S);
    }
    const periodic = h.reports.filter((r) => r.trigger === 'periodic');
    assert.equal(periodic.length, 1, 'the resync came within [54, 66] s of the first list');
    assert.equal(h.cloud.count('list'), 2);
    await h.stop();
  });

  it('R65: a cache older than the safety resync period (or, with 0, the informer resync) is not used', async () => {
    const h = watching({ controller: { routeResyncPeriodMs: 0, minResyncPeriodMs: 10 * 60 * S }, seed: 3 });
    await started(h);
    await h.clock.advance(10 * 60 * S);
    assert.equal(h.reports.length, 1, 'no resync yet (the informer resync is drawn from [10, 20) min)');
    join(h, 'b', '10.120.1.0/24');
    await h.clock.advance(0);
    assert.equal(h.reports.at(-1)!.source, 'list');
    assert.equal(h.cloud.count('list'), 2);
    await h.stop();
  });

  it('R65: a new run (restart, or leadership won again) starts without a cache', async () => {
    const h = watching();
    await started(h);
    await h.stop();
    const again = new AbortController();
    const run = h.controller.run(again.signal);
    await h.clock.advance(1);
    assert.equal(h.cloud.count('list'), 2, 'the second run listed first');
    again.abort();
    await h.clock.advance(0);
    await run;
  });

  it('R67: a route the cache knows only as requested is deleted after a list, never from the cache', async () => {
    const quiet = new VoidCreates();
    const v = harness({
      nodes: [{ name: 'a', podCIDRs: ['10.120.0.0/24'] }],
      controller: { watchBasedReconciliation: true, routes: quiet },
    });
    quiet.mem = v.cloud;
    await started(v);
    join(v, 'b', '10.120.1.0/24');
    await v.clock.advance(0);
    assert.deepEqual(v.routeSet(), ['10.120.0.0/24->a', '10.120.1.0/24->b']);
    v.cluster.deleteNode('b');
    await v.clock.advance(0);
    const handover = v.reports.at(-1)!;
    assert.equal(handover.source, 'cache');
    assert.equal(handover.handover, true);
    assert.equal(v.cloud.count('delete'), 0, 'not deleted from the cache');
    await v.clock.advance(I);
    const del = v.cloud.calls.find((c) => c.op === 'delete')!;
    const lastList = v.cloud.calls.filter((c) => c.op === 'list').at(-1)!;
    assert.ok(lastList.start <= del.start, 'listed before deleting');
    assert.deepEqual(v.routeSet(), ['10.120.0.0/24->a']);
    await v.stop();
  });

  for (const listedResults of [false, true]) {
    it(`R66/R67: a batch create ${listedResults ? 'that returns its route is deleted from the cache' : 'known only as requested is deleted after a list'}`, async () => {
      const batch = new BatchRoutes();
      batch.listedResults = listedResults;
      const b = harness({
        nodes: [{ name: 'a', podCIDRs: ['10.120.0.0/24'] }],
        controller: { watchBasedReconciliation: true, routes: batch },
      });
      batch.mem = b.cloud;
      await started(b);
      join(b, 'b', '10.120.1.0/24');
      await b.clock.advance(0);
      b.cluster.deleteNode('b');
      await b.clock.advance(0);
      assert.equal(b.reports.at(-1)!.source, 'cache');
      assert.equal(b.cloud.count('list'), 1);
      assert.equal(b.cloud.count('delete'), listedResults ? 1 : 0);
      await b.clock.advance(I);
      assert.equal(b.cloud.count('list'), listedResults ? 1 : 2);
      assert.deepEqual(b.routeSet(), ['10.120.0.0/24->a']);
      await b.stop();
    });
  }

  it('R67: a node whose addresses (or UID, provider ID) changed hands over to a list, which repairs a blackhole at once (R20)', async () => {
    const h = watching({ nodes: [{ name: 'a', podCIDRs: ['10.120.0.0/24'], addresses: ip('10.0.0.1') }] });
    await started(h);
    h.cloud.blackholeTarget('a'); // the cloud's view changed; the cache cannot know
    h.cluster.setAddresses('a', ip('10.0.0.2'));
    await h.clock.advance(0);
    const handover = h.reports.at(-1)!;
    assert.equal(handover.source, 'cache');
    assert.equal(handover.handover, true);
    assert.equal(handover.created + handover.deleted, 0, 'nothing planned from the cache');
    assert.equal(h.cloud.count('delete'), 0);
    await h.clock.advance(I);
    assert.equal(h.cloud.count('list'), 2);
    const last = h.reports.at(-1)!;
    assert.equal(last.source, 'list');
    assert.equal(last.deleted, 1);
    assert.equal(last.created, 1);
    assert.deepEqual(h.routeSet(), ['10.120.0.0/24->a']);
    assert.equal(
      await h.metric('route_controller_route_cache_invalidations_total', { reason: 'target_changed' }),
      1,
    );
    // Heartbeats change nothing the cloud maps targets by: the next change is cached again.
    h.cluster.heartbeat('a');
    join(h, 'b', '10.120.1.0/24');
    await h.clock.advance(0);
    assert.equal(h.reports.at(-1)!.source, 'cache');
    await h.stop();
  });

  it('--route-cache=false: every reconcile lists and waits for R44', async () => {
    const h = watching({ controller: { routeCache: false } });
    await started(h);
    const t = join(h, 'b', '10.120.1.0/24');
    await h.clock.advance(I);
    const create = h.cloud.calls.find((c) => c.op === 'create' && c.targetNode === 'b')!;
    assert.ok(create.start - t >= I - 1);
    assert.deepEqual(sources(h), ['list', 'list']);
    assert.equal(await h.metric('route_controller_cached_reconciles_total'), 0);
    await h.stop();
  });

  it('dry run never uses the cache (every plan is from a fresh list)', async () => {
    const h = watching({ controller: { dryRun: true } });
    await started(h);
    join(h, 'b', '10.120.1.0/24');
    await h.clock.advance(I);
    assert.deepEqual(sources(h), ['list', 'list']);
    await h.stop();
  });
});

describe('write pacing and the throttle/backoff split (SPEC R68–R70)', () => {
  const burst = async (h: H, n: number): Promise<void> => {
    for (let i = 0; i < n; i++) {
      h.cluster.createNode({ name: `n${i}`, podCIDRs: [`10.${121 + (i >> 8)}.${i & 255}.0/24`] });
      await h.clock.advance(10); // n joins over n × 10 ms
    }
  };
  const allRouted = (h: H, n: number): boolean => h.cloud.snapshot().length >= n;

  it('defaults: a burst of 1 000 into a 20 writes/s cloud costs exactly 1 000 creates and one list, near the cloud bound', async () => {
    const h = watching({
      nodes: [],
      clusterCIDRs: ['10.112.0.0/12'],
      cloud: { writeRateLimit: { ratePerSec: 20, burst: 40 } },
      controller: { cloudWriteLimit: { qps: 20, burst: 40 } },
    });
    await started(h);
    const t0 = h.clock.now();
    await burst(h, 1000);
    while (!allRouted(h, 1000) && h.clock.now() - t0 < 3600 * S) await h.clock.advance(S);
    const seconds = (h.clock.now() - t0) / S;
    const bound = (1000 - 40) / 20; // the cloud's own: its burst at once, then its rate
    assert.ok(allRouted(h, 1000));
    assert.equal(h.cloud.count('create'), 1000, 'one call per route');
    assert.equal(
      await h.metric('route_controller_cloud_api_calls_total', { outcome: 'throttled' }),
      0,
      'no throttled call',
    );
    assert.equal(h.cloud.count('list'), 1);
    assert.ok(seconds <= 1.15 * bound, `converged in ${seconds} s, bound ${bound} s`);
    assert.equal(await h.metric('route_controller_cloud_write_budget_qps'), 19);
    await h.stop();
  });

  it('R70: an unpaced burst into a throttling cloud retries at the throttle deadlines, not at 10, 20, 40 … s', async () => {
    const h = watching({
      nodes: [],
      clusterCIDRs: ['10.112.0.0/12'],
      cloud: { writeRateLimit: { ratePerSec: 20, burst: 40 } },
      controller: { cloudWriteQPS: 0, routeCache: false },
    });
    await started(h);
    const t0 = h.clock.now();
    await burst(h, 400);
    while (!allRouted(h, 400) && h.clock.now() - t0 < 3600 * S) await h.clock.advance(S);
    const seconds = (h.clock.now() - t0) / S;
    assert.ok(allRouted(h, 400));
    // The cloud's bucket holds 40, so each attempt creates at most 40 routes: 10 attempts, each
    // as soon as R44 allows. R46 would have spaced them 10, 20, 40 … 300 s apart (~25 min).
    const lists = h.cloud.calls.filter((c) => c.op === 'list').map((c) => c.start);
    const gaps = lists.slice(1).map((t, i) => (t - lists[i]!) / S);
    assert.ok(gaps.length >= 9, `${gaps.length} listing retries`);
    assert.ok(
      gaps.slice(1).every((g) => g <= 11),
      `no escalation: gaps ${gaps.join(', ')} s`,
    );
    assert.ok(seconds <= 110, `converged in ${seconds} s`);
    assert.ok(h.reports.filter((r) => r.trigger === 'retry').length >= 8);
    await h.stop();
  });
});

/** MemoryRoutes behind a batch hook (R8), failing the first `failCreates` creates of a batch. */
class BatchRoutes implements Routes {
  /** Set once the harness that owns it exists. */
  mem!: MemoryRoutes;
  failCreates = 0;
  /** Results of creates carry the created route (R66). */
  listedResults = false;
  listRoutes(c: string, o: CallOptions): Promise<Route[]> {
    return this.mem.listRoutes(c, o);
  }
  createRoute(c: string, h: string, r: Readonly<Route>, o: CallOptions): Promise<Route> {
    return this.mem.createRoute(c, h, r, o);
  }
  deleteRoute(c: string, r: Readonly<Route>, o: CallOptions): Promise<void> {
    return this.mem.deleteRoute(c, r, o);
  }
  async applyRoutes(c: string, plan: RoutePlan, o: CallOptions): Promise<OperationResult[]> {
    const out: OperationResult[] = [];
    for (const d of plan.deletes) {
      await this.mem.deleteRoute(c, d, o);
      out.push({ ok: true });
    }
    for (const cr of plan.creates) {
      if (this.failCreates > 0) {
        this.failCreates--;
        out.push({ ok: false, error: new RetryableError('batch item failed') });
        continue;
      }
      const created = await this.mem.createRoute(c, cr.nameHint, cr.route, o);
      out.push(this.listedResults ? { ok: true, route: created } : { ok: true });
    }
    return out;
  }
}

/** MemoryRoutes whose createRoute resolves to nothing, like a provider that predates R66. */
class VoidCreates implements Routes {
  /** Set once the harness that owns it exists. */
  mem!: MemoryRoutes;
  listRoutes(c: string, o: CallOptions): Promise<Route[]> {
    return this.mem.listRoutes(c, o);
  }
  async createRoute(c: string, h: string, r: Readonly<Route>, o: CallOptions): Promise<void> {
    await this.mem.createRoute(c, h, r, o);
  }
  deleteRoute(c: string, r: Readonly<Route>, o: CallOptions): Promise<void> {
    return this.mem.deleteRoute(c, r, o);
  }
}
