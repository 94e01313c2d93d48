// The cloud write budget (--cloud-write-qps/--cloud-write-burst): an addition
// to the SPEC's executor. Without it a burst of N routes against a cloud that
// accepts r writes/s costs one reconcile per cloud burst (R47 defers the rest).
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { ThrottledError } from '../core/errors.ts';
import { harness } from '../testing/harness.ts';
import { RouteController, RouteControllerConfigError } from './route-controller.ts';

const nodes = (n: number) =>
  Array.from({ length: n }, (_, i) => ({ name: `n${i}`, podCIDRs: [`10.120.${i}.0/24`] }));

describe('cloud write pacing', () => {
  it('a burst against a 20 writes/s cloud: one CreateRoute per route, none throttled, one reconcile', async () => {
    const h = harness({
      nodes: nodes(200),
      cloud: { latencyMs: 20, writeRateLimit: { ratePerSec: 20, burst: 40 } },
      controller: { cloudWriteQPS: 20, cloudWriteBurst: 40 },
    });
    const r = await h.reconcile();
    assert.equal(r.outcome, 'changed');
    assert.equal(r.created, 200);
    assert.equal(r.deferred, 0);
    assert.equal(h.cloud.count('create'), 200, 'exactly one CreateRoute per route');
    assert.equal(h.cloud.calls.filter((c) => c.outcome !== 'ok').length, 0, 'nothing throttled');
    // 40 at once, then 160 at 20/s: the last starts 8 s in.
    const starts = h.cloud.calls.filter((c) => c.op === 'create').map((c) => c.start);
    assert.equal(Math.max(...starts) - Math.min(...starts), 8000);
    const waited = await h.registry.getSingleMetric('route_controller_cloud_write_wait_seconds_total')!.get();
    assert.ok(waited.values[0]!.value > 0, 'the wait is visible as a metric');
  });

  it('unpaced (default): the same burst is throttled beyond the cloud burst and the rest deferred (R47)', async () => {
    const h = harness({
      nodes: nodes(200),
      cloud: { latencyMs: 20, writeRateLimit: { ratePerSec: 20, burst: 40 } },
    });
    const r = await h.reconcile();
    assert.equal(r.outcome, 'error');
    assert.equal(r.created, 40);
    assert.ok(r.failureKinds.has('throttled'));
    assert.equal(r.created + r.failed + r.deferred, 200);
  });

  it('the budget is shared across reconciles: a second burst right after waits for tokens', async () => {
    const h = harness({ nodes: nodes(30), controller: { cloudWriteQPS: 10, cloudWriteBurst: 30 } });
    await h.reconcile();
    const t1 = h.clock.now();
    for (let i = 30; i < 40; i++) h.cluster.createNode({ name: `n${i}`, podCIDRs: [`10.120.${i}.0/24`] });
    await h.reconcile();
    const second = h.cloud.calls.filter((c) => c.op === 'create').slice(30);
    assert.equal(second.length, 10);
    assert.equal(second[0]!.start - t1, 100, 'no tokens left: the first waits 1/qps');
    assert.equal(second[9]!.start - t1, 1000);
  });

  it('deletes take tokens too (the same pool of writes)', async () => {
    const h = harness({
      routes: Array.from({ length: 5 }, (_, i) => ({
        name: `s${i}`,
        targetNode: `gone${i}`,
        destinationCIDR: `10.120.${i}.0/24`,
      })),
      controller: { cloudWriteQPS: 1, cloudWriteBurst: 1 },
    });
    const t0 = h.clock.now();
    const r = await h.reconcile();
    assert.equal(r.deleted, 5);
    const starts = h.cloud.calls.filter((c) => c.op === 'delete').map((c) => c.start - t0);
    assert.deepEqual(starts, [0, 1000, 2000, 3000, 4000]);
  });

  it('a throttle still stops the reconcile at once: calls waiting for the budget are deferred, not started', async () => {
    const h = harness({ nodes: nodes(10), controller: { cloudWriteQPS: 1, cloudWriteBurst: 1 } });
    h.cloud.failNext(
      1,
      ['create'],
      () => new ThrottledError('RequestLimitExceeded', { retryAfterMs: 30_000 }),
    );
    const t0 = h.clock.now();
    const r = await h.reconcile();
    assert.equal(h.cloud.count('create'), 1, 'nothing started after the throttle');
    assert.equal(r.deferred, 9);
    assert.equal(h.clock.now() - t0, 0, 'the waiters were released, not left to sleep out their tokens');
  });

  it('aborting the reconcile releases the waiters as canceled', async () => {
    const h = harness({ nodes: nodes(5), controller: { cloudWriteQPS: 1, cloudWriteBurst: 1 } });
    const ac = new AbortController();
    h.clock.setTimeout(() => ac.abort(), 1500);
    const r = await h.reconcile('node_change', ac.signal);
    assert.equal(h.cloud.count('create'), 2, 'one at 0 s, one at 1 s');
    assert.equal(r.created + r.failed + r.deferred, 2, 'the three waiting are neither created nor failed');
  });

  it('applyRoutes providers: one token per batch call, not per route', async () => {
    const h = harness({ nodes: nodes(50), controller: { cloudWriteQPS: 1, cloudWriteBurst: 1 } });
    const cloud = h.cloud;
    type Opts = Parameters<typeof cloud.createRoute>[3];
    let batches = 0;
    Object.assign(cloud, {
      applyRoutes: async (
        clusterName: string,
        plan: { creates: { nameHint: string; route: Parameters<typeof cloud.createRoute>[2] }[] },
        opts: Opts,
      ) => {
        batches++;
        return Promise.all(
          plan.creates.map(async (c) => {
            await cloud.createRoute(clusterName, c.nameHint, c.route, opts);
            return { ok: true as const };
          }),
        );
      },
    });
    const t0 = h.clock.now();
    const r = await h.reconcile();
    assert.equal(r.created, 50);
    assert.equal(batches, 1);
    const starts = new Set(h.cloud.calls.filter((c) => c.op === 'create').map((c) => c.start - t0));
    assert.deepEqual([...starts], [0], 'the batch took one token: no route waited');
  });

  it('bad budgets are configuration errors', () => {
    const h = harness();
    const base = { routes: h.cloud, nodes: h.cluster, statusWriter: h.cluster, clusterCIDRs: ['10.0.0.0/8'] };
    assert.throws(
      () => new RouteController({ ...base, cloudWriteQPS: -1 }),
      (e: unknown) => e instanceof RouteControllerConfigError && /cloudWriteQPS must be >= 0/.test(e.message),
    );
    assert.throws(
      () => new RouteController({ ...base, cloudWriteQPS: 5, cloudWriteBurst: 0.5 }),
      (e: unknown) =>
        e instanceof RouteControllerConfigError && /cloudWriteBurst must be an integer >= 1/.test(e.message),
    );
    assert.doesNotThrow(() => new RouteController({ ...base, cloudWriteQPS: 0, cloudWriteBurst: 0 }));
  });
});
