// Known outcomes keep the route cache (SPEC R85, with R46, R49, R65–R67, R70),
// in virtual time: a throttled or permanent answer means the cloud did not act,
// so the retry at the throttle deadline and the next node change plan against
// the cache, and the safety resync re-arms after every listing reconcile, so a
// route that fails for good (E5) switches off neither improvement of watch mode.
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import type { MemoryRoutes } from '../cloud/memory/memory-routes.ts';
import {
  ConflictError,
  PermanentError,
  QuotaExceededError,
  RetryableError,
  ThrottledError,
} from '../core/errors.ts';
import type { CallOptions, Route, Routes } from '../core/types.ts';
import { harness, ip, settle, started, watching, type HarnessOptions } from '../testing/harness.ts';

const S = 1000;

type H = ReturnType<typeof harness>;

/** MemoryRoutes in a network without IPv6 routes (E5): an IPv6 create fails for good, changing nothing. */
class NoIPv6Routes implements Routes {
  /** Set once the harness that owns it exists. */
  mem!: MemoryRoutes;
  /** The harness's virtual clock, set with `mem`. */
  now: () => number = () => 0;
  /** Start times of the refused IPv6 creates (they never reach the memory cloud's call log). */
  readonly refused: number[] = [];
  listRoutes(c: string, o: CallOptions): Promise<Route[]> {
    return this.mem.listRoutes(c, o);
  }
  async createRoute(c: string, h: string, r: Readonly<Route>, o: CallOptions): Promise<Route> {
    if (r.destinationCIDR.includes(':')) {
      this.refused.push(this.now());
      throw new PermanentError('IPv6 routes are not supported in this network');
    }
    return this.mem.createRoute(c, h, r, o);
  }
  deleteRoute(c: string, r: Readonly<Route>, o: CallOptions): Promise<void> {
    return this.mem.deleteRoute(c, r, o);
  }
}

/**
 * Watch mode on a dual-stack cluster whose cloud refuses IPv6 routes: node `ds`
 * (IPv4 route present, IPv6 refused for good) and node `a` with its route.
 */
function dualStackNoIPv6(controller: HarnessOptions['controller'] = {}): {
  h: H;
  v6: NoIPv6Routes;
} {
  const v6 = new NoIPv6Routes();
  const h = harness({
    clusterCIDRs: ['10.120.0.0/16', 'a00::/8'],
    nodes: [
      { name: 'ds', podCIDRs: ['10.120.0.0/24', 'a00:100::/24'], addresses: ip('10.0.0.1') },
      { name: 'a', podCIDRs: ['10.120.1.0/24'], addresses: ip('10.0.0.2') },
    ],
    routes: [
      { name: 'ds-v4', targetNode: 'ds', destinationCIDR: '10.120.0.0/24' },
      { name: 'a-v4', targetNode: 'a', destinationCIDR: '10.120.1.0/24' },
    ],
    controller: { watchBasedReconciliation: true, routes: v6, ...controller },
  });
  v6.mem = h.cloud;
  v6.now = () => h.clock.now();
  return { h, v6 };
}

function join(h: H, name: string, cidr: string): number {
  h.cluster.createNode({ name, podCIDRs: [cidr], addresses: ip('10.0.9.9') });
  return h.clock.now();
}

const createsOf = (h: H, node: string): number[] =>
  h.cloud.calls.filter((c) => c.op === 'create' && c.targetNode === node).map((c) => c.start);

const invalidations = (h: H): Promise<number> => h.metric('route_controller_route_cache_invalidations_total');

describe('known outcomes keep the route cache (SPEC R85)', () => {
  // A fixed budget far above these few writes: the retry time alone decides when they go (the
  // default learning pacer, R111, would pace the writes after a throttle at the rate it learned).
  const ampleBudget = { cloudWriteQPS: 1000 } as const;

  it('R85: a throttled create: the retry at the throttle deadline is a cached reconcile (no listRoutes), and the cache stays valid', async () => {
    const h = watching({ controller: ampleBudget });
    await started(h);
    h.cloud.failNext(1, ['create'], () => new ThrottledError('429', { retryAfterMs: 3 * S }));
    const t = join(h, 'b', '10.120.1.0/24');
    await h.clock.advance(0);
    const throttled = h.reports[1]!;
    assert.equal(throttled.source, 'cache');
    assert.equal(throttled.outcome, 'error');
    assert.equal(throttled.throttleOnly, true);
    await h.clock.advance(3 * S - 1);
    assert.equal(h.reports.length, 2, 'nothing before the deadline (R47)');
    await h.clock.advance(1);
    const retry = h.reports[2]!;
    assert.equal(retry.trigger, 'retry');
    assert.equal(retry.source, 'cache', 'the retry planned against the cache');
    assert.equal(retry.created, 1);
    assert.deepEqual(
      createsOf(h, 'b').map((s) => s - t),
      [0, 3 * S],
      'retried exactly at the deadline (R70)',
    );
    assert.equal(h.cloud.count('list'), 1, 'no listRoutes since the start');
    assert.equal(await invalidations(h), 0);
    assert.equal(h.conditions()['b'], 'False/RouteCreated');
    // The cache is still valid: the next join is one cloud call away.
    const u = join(h, 'c', '10.120.2.0/24');
    await h.clock.advance(0);
    assert.deepEqual(
      createsOf(h, 'c').map((s) => s - u),
      [0],
    );
    assert.equal(h.reports.at(-1)!.source, 'cache');
    assert.equal(h.cloud.count('list'), 1);
    assert.equal(await h.metric('workqueue_retries_total', { name: 'Routes' }), 1);
    await h.stop();
  });

  it('R70/R85: throttles without a retry time, unpaced: cached retries I apart (no list, no escalation, no hammering)', async () => {
    const h = watching({ controller: { cloudWriteQPS: 0 } });
    await started(h);
    h.cloud.failFraction(1, ['list', 'create', 'delete'], () => new ThrottledError('RequestLimitExceeded'));
    const t = join(h, 'b', '10.120.1.0/24');
    h.clock.setTimeout(() => h.cloud.clearFaults(), 35 * S); // the cloud accepts calls again
    await h.clock.advance(60 * S);
    // R46 would have spaced them 10, 20, 40 s; without the spacing they would follow each other at once.
    assert.deepEqual(
      createsOf(h, 'b').map((s) => (s - t) / S),
      [0, 10, 20, 30, 40],
    );
    assert.deepEqual(
      h.reports.slice(1).map((r) => `${r.trigger}/${r.source}/${r.outcome}`),
      [
        'node_change/cache/error',
        'retry/cache/error',
        'retry/cache/error',
        'retry/cache/error',
        'retry/cache/changed',
      ],
    );
    assert.equal(h.cloud.count('list'), 1);
    assert.deepEqual(h.routeSet(), ['10.120.0.0/24->a', '10.120.1.0/24->b']);
    await h.stop();
  });

  it('R86: after a throttle, unpaced, a cached reconcile sends one write first; the rest follow its success', async () => {
    const h = watching({ cloud: { latencyMs: 50 }, controller: { cloudWriteQPS: 0 } });
    await started(h);
    await h.clock.advance(S); // the first reconcile has created node a's route
    h.cloud.failFraction(1, ['list', 'create', 'delete'], () => new ThrottledError('RequestLimitExceeded'));
    h.clock.setTimeout(() => h.cloud.clearFaults(), 35 * S);
    const t = h.clock.now();
    for (let i = 1; i <= 5; i++) join(h, `n${i}`, `10.120.${i}.0/24`);
    await h.clock.advance(60 * S);
    const perSecond = new Map<number, number>();
    for (const c of h.cloud.calls.filter((x) => x.op === 'create' && x.start >= t)) {
      const at = Math.floor((c.start - t) / S);
      perSecond.set(at, (perSecond.get(at) ?? 0) + 1);
    }
    // Unpaced, the first reconcile sends all five before any answer; after that, only the probe
    // reaches the throttling cloud, until one is accepted (R47 defers the rest in each retry).
    assert.deepEqual(
      [...perSecond],
      [
        [0, 5],
        [10, 1],
        [20, 1],
        [30, 1],
        [40, 5],
      ],
    );
    assert.equal(h.cloud.snapshot().length, 6);
    assert.equal(h.cloud.count('list'), 1);
    await h.stop();
  });

  it('R70/R85: a throttle beside a permanent failure retries at the deadline (R70), not after R46 backoff', async () => {
    const { h, v6 } = dualStackNoIPv6(ampleBudget);
    await started(h);
    assert.equal(v6.refused.length, 1);
    h.cloud.failNext(1, ['create'], () => new ThrottledError('429', { retryAfterMs: 3 * S }));
    const t = join(h, 'b', '10.120.2.0/24');
    await h.clock.advance(0);
    const failed = h.reports.at(-1)!;
    assert.deepEqual(failed.failureKinds, new Set(['permanent', 'throttled']));
    assert.equal(failed.throttleOnly, true);
    await h.clock.advance(10 * S);
    assert.deepEqual(
      createsOf(h, 'b').map((s) => s - t),
      [0, 3 * S],
    );
    assert.equal(h.reports.at(-1)!.source, 'cache');
    assert.equal(h.cloud.count('list'), 1);
    await h.stop();
  });

  it('R49/R85: with one route failing for good (E5), the safety resync re-arms after each listing reconcile and repairs drift on another node', async () => {
    const { h, v6 } = dualStackNoIPv6({ routeResyncPeriodMs: 60 * S });
    await started(h);
    assert.equal(h.reports[0]!.outcome, 'error', 'the IPv6 route of ds failed for good');
    assert.equal(h.conditions()['ds'], 'True/NoRouteCreated');
    for (let round = 1; round <= 3; round++) {
      // The resync period counts from the last list, whose reconcile failed (the IPv6 route).
      const lastList = h.cloud.calls.filter((c) => c.op === 'list').at(-1)!.start;
      h.cloud.removeRoute('10.120.1.0/24'); // out-of-band: someone deletes node a's route
      await h.clock.advanceTo(lastList + 54 * S - 1);
      assert.equal(h.cloud.count('list'), round, `round ${round}: nothing before 0.9 P`);
      await h.clock.advanceTo(lastList + 66 * S + 1);
      assert.equal(h.cloud.count('list'), round + 1, `round ${round}: the resync listed within 1.1 P`);
      const resync = h.reports.at(-1)!;
      assert.equal(resync.trigger, 'periodic');
      assert.equal(resync.outcome, 'error', 'the IPv6 route still fails: the resync re-arms anyway');
      assert.equal(resync.created, 1, "node a's route is back");
      assert.deepEqual(h.routeSet(), ['10.120.0.0/24->ds', '10.120.1.0/24->a']);
      assert.equal(h.conditions()['a'], 'False/RouteCreated');
    }
    assert.equal(v6.refused.length, 4, 'the start and three resyncs each tried the IPv6 route once');
    assert.equal(await h.metric('workqueue_retries_total', { name: 'Routes' }), 0, 'permanent: no retry');
    assert.equal(await h.metric('route_controller_route_corrections_total', { operation: 'create' }), 3);
    await h.stop();
  });

  it('R66/R85: with one route failing for good (E5), single joins seconds apart are routed one cloud call after their event', async () => {
    const { h, v6 } = dualStackNoIPv6();
    await started(h);
    await h.clock.advance(2 * S);
    const tb = join(h, 'b', '10.120.2.0/24');
    await h.clock.advance(3 * S);
    const tc = join(h, 'c', '10.120.3.0/24');
    await h.clock.advance(0);
    // Not a list and then R44's 10 s: each route's create starts at its node's event.
    assert.deepEqual(createsOf(h, 'b'), [tb]);
    assert.deepEqual(createsOf(h, 'c'), [tc]);
    assert.deepEqual(
      h.reports.map((r) => r.source),
      ['list', 'cache', 'cache'],
    );
    assert.equal(h.cloud.count('list'), 1);
    // Each reconcile tries the refused route once more ("no retry until another trigger"), alongside.
    assert.deepEqual(v6.refused.slice(1), [tb, tc]);
    assert.equal(v6.refused.length, 3);
    assert.equal(await invalidations(h), 0);
    assert.equal(h.conditions()['b'], 'False/RouteCreated');
    assert.equal(h.conditions()['c'], 'False/RouteCreated');
    assert.equal(h.conditions()['ds'], 'True/NoRouteCreated');
    await h.clock.advance(26 * 60 * S); // before R49's resync, 0.9 × 30 min
    assert.equal(h.reports.length, 3, 'permanent failures are not retried');
    await h.stop();
  });

  it('R46/R85: a reconcile whose only failures are permanent resets n; the next failure retries after 10 s again', async () => {
    const { h, v6 } = dualStackNoIPv6();
    h.cloud.removeRoute('10.120.0.0/24'); // ds has no IPv4 route yet
    h.cloud.failNext(1, ['create'], () => new RetryableError('503'));
    await started(h);
    assert.deepEqual(h.reports[0]!.failureKinds, new Set(['permanent', 'retryable']));
    await h.clock.advance(12 * S);
    assert.equal(h.reports.length, 2, 'R46: the retry after 10–12 s');
    assert.equal(h.reports[1]!.trigger, 'retry');
    assert.deepEqual(h.reports[1]!.failureKinds, new Set(['permanent']), 'only the IPv6 route still fails');
    assert.deepEqual(h.routeSet(), ['10.120.0.0/24->ds', '10.120.1.0/24->a']);
    await h.clock.advance(10 * 60 * S);
    assert.equal(h.reports.length, 2, 'only permanent failures: no retry');
    // n was reset: the next retryable failure retries after d₁ = 10–12 s, not d₂ = 20–24 s.
    h.cloud.failNext(1, ['create'], () => new RetryableError('503'));
    join(h, 'b', '10.120.2.0/24');
    await h.clock.advance(30 * S);
    const tries = createsOf(h, 'b');
    assert.equal(tries.length, 2);
    const gap = (tries[1]! - tries[0]!) / S;
    assert.ok(gap >= 10 && gap < 12, `retried after ${gap} s`);
    assert.equal(v6.refused.length, 4);
    await h.stop();
  });
});

describe('which answers keep the route cache (SPEC R65, R85)', () => {
  type Inject = (h: H, abort: AbortController) => void;
  const cases: [string, Inject, 'keeps' | 'drops'][] = [
    [
      'throttled, with a retry time',
      (h) => h.cloud.failNext(1, ['create'], () => new ThrottledError('429', { retryAfterMs: S })),
      'keeps',
    ],
    [
      'throttled, without one',
      (h) => h.cloud.failNext(1, ['create'], () => new ThrottledError('RequestLimitExceeded')),
      'keeps',
    ],
    ['permanent', (h) => h.cloud.failNext(1, ['create'], () => new PermanentError('invalid')), 'keeps'],
    ['retryable (5xx)', (h) => h.cloud.failNext(1, ['create'], () => new RetryableError('503')), 'drops'],
    [
      'retryable with a retry time (503 + Retry-After)',
      (h) => h.cloud.failNext(1, ['create'], () => new RetryableError('503', { retryAfterMs: S })),
      'drops',
    ],
    [
      'a conflict, even one R24 retried into a success',
      (h) => h.cloud.failNext(1, ['create'], () => new ConflictError('busy')),
      'drops',
    ],
    ['quota exceeded', (h) => h.cloud.failNext(1, ['create'], () => new QuotaExceededError('full')), 'drops'],
    ['a timeout', (h) => h.cloud.hangNext(1, ['create']), 'drops'],
    [
      'an abort',
      (h, abort) => {
        h.cloud.hangNext(1, ['create']);
        h.clock.setTimeout(() => abort.abort(), 100);
      },
      'drops',
    ],
    [
      'a permanent failure beside a retryable one',
      (h) => {
        h.cloud.failNext(1, ['create'], () => new PermanentError('invalid'));
        h.cloud.failNext(1, ['create'], () => new RetryableError('503'));
      },
      'drops',
    ],
  ];
  for (const [what, inject, expected] of cases) {
    it(`${what}: the cache ${expected === 'keeps' ? 'stays valid (R85)' : 'is dropped, the next reconcile lists (R65)'}`, async () => {
      const h = watching({ controller: { cloudCallTimeoutMs: 2 * S } });
      const abort = new AbortController();
      await h.reconcile(); // lists and fills the cache
      h.cluster.createNode({ name: 'b', podCIDRs: ['10.120.1.0/24'] });
      h.cluster.createNode({ name: 'c', podCIDRs: ['10.120.2.0/24'] });
      inject(h, abort);
      const failed = await settle(h.clock, h.controller.reconcileOnce('node_change', abort.signal, 'cache'));
      assert.equal(failed.source, 'cache');
      assert.ok(
        h.cloud.calls.some((c) => c.outcome !== 'ok'),
        'the fault was hit',
      );
      const next = await settle(
        h.clock,
        h.controller.reconcileOnce('node_change', new AbortController().signal, 'cache'),
      );
      assert.equal(next.source, expected === 'keeps' ? 'cache' : 'list');
      assert.equal(h.cloud.count('list'), expected === 'keeps' ? 1 : 2);
      assert.equal(
        await h.metric('route_controller_route_cache_invalidations_total', { reason: 'call_failed' }),
        expected === 'keeps' ? 0 : 1,
      );
    });
  }
});
