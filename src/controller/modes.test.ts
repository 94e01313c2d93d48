// SPEC §9.5: timing rules of periodic mode (§4) and watch mode (§5–6), in virtual time.
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { ThrottledError, PermanentError, QuotaExceededError } from '../core/errors.ts';
import { harness, ip } from '../testing/harness.ts';

const S = 1000;

function watchHarness(extra: Parameters<typeof harness>[0] = {}) {
  return harness({ ...extra, controller: { watchBasedReconciliation: true, ...extra.controller } });
}

describe('periodic mode (SPEC §4)', () => {
  it('R36/R37: first reconcile at sync; non-sliding ticks; a slow run is never overlapped', async () => {
    const h = harness({
      nodes: [{ name: 'n', podCIDRs: ['10.120.0.0/24'] }],
      cloud: { latencyMs: { list: 25 * S } },
      synced: false,
    });
    h.start();
    await h.clock.advance(60 * S);
    assert.equal(h.reports.length, 0, 'no reconcile before the initial sync');
    h.cluster.markSynced();
    const t0 = h.clock.now();
    await h.clock.advance(99 * S);
    const starts = h.cloud.calls.filter((c) => c.op === 'list').map((c) => c.start - t0);
    // A run takes 25 s (> P = 10 s): next start = max(S + P, E) = E, back to back, never overlapping.
    assert.deepEqual(starts, [0, 25 * S, 50 * S, 75 * S]);
    await h.stop();

    const q = harness({
      nodes: [{ name: 'n', podCIDRs: ['10.120.0.0/24'] }],
      cloud: { latencyMs: { list: 3 * S } },
    });
    q.start();
    await q.clock.advance(45 * S);
    const t = q.cloud.calls.filter((c) => c.op === 'list').map((c) => c.start - q.cloud.calls[0]!.start);
    assert.deepEqual(t, [0, 10 * S, 20 * S, 30 * S, 40 * S], 'start-to-start period, not sliding');
    await q.stop();
  });

  it('R39: node events and heartbeats only maintain the cache in periodic mode', async () => {
    const h = harness({ nodes: [{ name: 'n', podCIDRs: ['10.120.0.0/24'] }] });
    h.start();
    await h.clock.advance(1);
    for (let i = 0; i < 50; i++) h.cluster.heartbeat('n');
    h.cluster.createNode({ name: 'm', podCIDRs: ['10.120.1.0/24'] });
    await h.clock.advance(9 * S);
    assert.equal(h.reports.length, 1);
    await h.clock.advance(1 * S);
    assert.equal(h.reports.length, 2);
    await h.stop();
  });

  it('R38/R47: ticks before a throttle deadline are skipped', async () => {
    const h = harness({ nodes: [{ name: 'n', podCIDRs: ['10.120.0.0/24'] }] });
    h.cloud.failNext(1, ['create'], () => new ThrottledError('429', { retryAfterMs: 35 * S }));
    h.start();
    await h.clock.advance(60 * S);
    const starts = h.cloud.calls.filter((c) => c.op === 'list').map((c) => c.start - h.cloud.calls[0]!.start);
    assert.deepEqual(starts, [0, 40 * S, 50 * S, 60 * S]);
    await h.stop();
  });
});

describe('watch mode (SPEC §5–6)', () => {
  it('R43: any number of triggers while pending → one reconcile; triggers during a run → exactly one follow-up', async () => {
    const h = watchHarness({ cloud: { latencyMs: { list: 5 * S } } });
    h.start();
    await h.clock.advance(20 * S);
    assert.equal(h.reports.length, 1);
    for (let i = 0; i < 20; i++) h.cluster.createNode({ name: `a${i}`, podCIDRs: [`10.120.${i}.0/24`] });
    await h.clock.advance(1); // the reconcile starts and is now running (list takes 5 s)
    assert.equal(await h.metric('workqueue_depth', { name: 'Routes' }), 0);
    for (let i = 20; i < 40; i++) h.cluster.createNode({ name: `a${i}`, podCIDRs: [`10.120.${i}.0/24`] });
    await h.clock.advance(60 * S);
    assert.equal(h.reports.length, 3, 'the batch during the run gives exactly one follow-up');
    assert.equal(h.cloud.count('create'), 40);
    assert.equal(await h.metric('workqueue_adds_total', { name: 'Routes' }), 3);
    await h.stop();
  });

  it('R44: listing reconcile starts are at least I apart (route cache off)', async () => {
    const h = watchHarness({ controller: { routeCache: false } });
    h.start();
    await h.clock.advance(1);
    const t0 = h.clock.now();
    h.cluster.createNode({ name: 'a', podCIDRs: ['10.120.1.0/24'] });
    await h.clock.advance(9 * S);
    assert.equal(h.reports.length, 1);
    await h.clock.advance(1 * S);
    assert.equal(h.reports.length, 2);
    assert.ok(h.clock.now() - t0 >= 10 * S - 1);
    await h.stop();
  });

  it('R48: after 1 000 adds and ≥ I of quiet, the next add reconciles at once (route cache off)', async () => {
    const h = watchHarness({ controller: { routeCache: false } });
    h.start();
    for (let i = 0; i < 1000; i++) {
      h.cluster.createNode({ name: `n${i}`, podCIDRs: [`10.${120 + (i >> 8)}.${i & 255}.0/24`] });
      await h.clock.advance(10); // 1 000 adds over 10 s
    }
    await h.clock.advance(30 * S);
    const before = h.reports.length;
    assert.ok(before <= 3, `the burst coalesced into ${before} reconciles`);
    assert.equal(h.cloud.count('create'), 1000);
    const t = h.clock.now();
    h.cluster.createNode({ name: 'late', podCIDRs: ['10.200.0.0/24'] });
    await h.clock.advance(0);
    assert.equal(h.reports.length, before + 1, 'reconciled immediately, no rate-limiter debt');
    const created = h.cloud.calls.find((c) => c.op === 'create' && c.targetNode === 'late')!;
    assert.equal(created.start - t, 0);
    assert.equal(await h.metric('workqueue_retries_total', { name: 'Routes' }), 0);
    await h.stop();
  });

  it('R46: a failed create is retried without any node event: 10, 20, 40 s … 5 min, reset on success', async () => {
    const h = watchHarness({
      nodes: [{ name: 'n', podCIDRs: ['10.120.0.0/24'], addresses: ip('10.0.0.1') }],
      seed: 7,
      controller: { routeCache: false },
    });
    h.cloud.failNext(7, ['create']);
    h.start();
    await h.clock.advance(20 * 60 * S);
    const lists = h.cloud.calls.filter((c) => c.op === 'list').map((c) => c.start);
    const gaps = lists.slice(1, 8).map((t, i) => (t - lists[i]!) / S);
    const bases = [10, 20, 40, 80, 160, 300, 300];
    gaps.forEach((g, i) =>
      assert.ok(
        g >= bases[i]! && g < bases[i]! * 1.2,
        `gap ${i}: ${g}s in [${bases[i]}, ${bases[i]! * 1.2})`,
      ),
    );
    assert.deepEqual(h.routeSet(), ['10.120.0.0/24->n'], 'the 8th attempt succeeds');
    assert.equal(h.conditions()['n'], 'False/RouteCreated');
    assert.equal(h.reports.filter((r) => r.trigger === 'retry').length, 7);
    assert.equal(await h.metric('workqueue_retries_total', { name: 'Routes' }), 7);
    // Reset: the next failure starts again at 10 s.
    h.cloud.failNext(1, ['create']);
    h.cluster.createNode({ name: 'm', podCIDRs: ['10.120.1.0/24'] });
    await h.clock.advance(60 * S);
    const last = h.cloud.calls
      .filter((c) => c.op === 'list')
      .slice(-2)
      .map((c) => c.start);
    const gap = (last[1]! - last[0]!) / S;
    assert.ok(gap >= 10 && gap < 12, `after reset ${gap}s`);
    await h.stop();
  });

  it('R46: only permanent failures → no retry; quota → retry at 5 min', async () => {
    const p = watchHarness({ nodes: [{ name: 'n', podCIDRs: ['10.120.0.0/24'] }] });
    p.cloud.failNext(1, ['create'], () => new PermanentError('no'));
    p.start();
    await p.clock.advance(26 * 60 * S); // before R49's resync, 0.9 × 30 min
    assert.equal(p.cloud.count('list'), 1, 'no retry until another trigger');
    await p.stop();

    const q = watchHarness({ nodes: [{ name: 'n', podCIDRs: ['10.120.0.0/24'] }] });
    q.cloud.failNext(1, ['create'], () => new QuotaExceededError('limit'));
    q.start();
    await q.clock.advance(299 * S);
    assert.equal(q.cloud.count('list'), 1);
    await q.clock.advance(62 * S);
    assert.equal(q.cloud.count('list'), 2);
    assert.deepEqual(q.routeSet(), ['10.120.0.0/24->n']);
    await q.stop();
  });

  it('R47 (watch): throttled → no reconcile before the deadline; a throttle alone retries at it (R70)', async () => {
    const h = watchHarness({ nodes: [{ name: 'n', podCIDRs: ['10.120.0.0/24'] }] });
    h.cloud.failNext(1, ['create'], () => new ThrottledError('429', { retryAfterMs: 45 * S }));
    h.start();
    await h.clock.advance(1);
    h.cluster.createNode({ name: 'm', podCIDRs: ['10.120.1.0/24'] }); // a node event does not bypass the deadline
    await h.clock.advance(44 * S);
    assert.equal(h.reports.length, 1);
    assert.equal(h.cloud.calls.length, 2, 'the list and the throttled create, nothing after');
    await h.clock.advance(2 * S);
    assert.equal(h.reports.length, 2, 'the retry and the node event: one reconcile at the deadline');
    assert.equal(h.reports[1]!.trigger, 'node_change');
    // R85: the throttled answer changed nothing, so the retry plans against the route cache.
    assert.equal(h.reports[1]!.source, 'cache');
    assert.equal(h.cloud.count('list'), 1);
    assert.deepEqual(h.routeSet(), ['10.120.0.0/24->n', '10.120.1.0/24->m']);
    await h.stop();
  });

  it('R49: the safety resync fixes a route deleted out-of-band, with jitter in [0.9 P, 1.1 P] (P 30 min by default)', async () => {
    const h = watchHarness({ nodes: [{ name: 'n', podCIDRs: ['10.120.0.0/24'] }] });
    h.start();
    await h.clock.advance(1);
    const t0 = h.clock.now();
    h.cloud.removeRoute('10.120.0.0/24');
    await h.clock.advance(26 * 60 * S);
    assert.equal(h.cloud.count('list'), 1, 'nothing before 0.9 P');
    await h.clock.advance(8 * 60 * S);
    assert.equal(h.cloud.count('list'), 2);
    const t = h.cloud.calls.filter((c) => c.op === 'list')[1]!.start - t0;
    assert.ok(t >= 27 * 60 * S && t <= 33 * 60 * S, `${t / S} s`);
    assert.equal(h.reports[1]!.trigger, 'periodic');
    assert.deepEqual(h.routeSet(), ['10.120.0.0/24->n']);
    assert.equal(await h.metric('route_controller_route_corrections_total', { operation: 'create' }), 1);
    await h.stop();
  });

  it('R49: --route-resync-period=0 disables the safety resync; R50 informer resync still fires in [M, 2M)', async () => {
    const h = watchHarness({
      nodes: [{ name: 'n', podCIDRs: ['10.120.0.0/24'] }],
      controller: { routeResyncPeriodMs: 0, minResyncPeriodMs: 3600 * S },
    });
    h.start();
    await h.clock.advance(1);
    await h.clock.advance(3599 * S);
    assert.equal(h.cloud.count('list'), 1);
    await h.clock.advance(3601 * S);
    assert.equal(h.cloud.count('list'), 2, 'one periodic reconcile for all nodes of the resync');
    assert.equal(h.reports[1]!.trigger, 'periodic');
    await h.stop();
  });

  it('R50: with zero nodes the informer resync never fires, the safety resync does (E11)', async () => {
    const h = watchHarness({ controller: { minResyncPeriodMs: 600 * S, routeResyncPeriodMs: 3600 * S } });
    h.start();
    await h.clock.advance(50 * 60 * S);
    assert.equal(h.cloud.count('list'), 1);
    await h.clock.advance(20 * 60 * S);
    assert.equal(h.cloud.count('list'), 2);
    await h.stop();
  });

  it('heartbeats cause zero reconciles in watch mode', async () => {
    const nodes = Array.from({ length: 50 }, (_, i) => ({ name: `n${i}`, podCIDRs: [`10.120.${i}.0/24`] }));
    const h = watchHarness({ nodes, controller: { routeResyncPeriodMs: 0 } });
    h.start();
    await h.clock.advance(20 * S);
    assert.equal(h.reports.length, 1);
    for (let t = 0; t < 360; t++) {
      for (const n of nodes) h.cluster.heartbeat(n.name);
      await h.clock.advance(10 * S);
    }
    assert.equal(h.reports.length, 1);
    assert.equal(h.cloud.count('list'), 1);
    await h.stop();
  });
});
