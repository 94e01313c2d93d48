// route_controller_route_creation_latency_seconds (R51): first sight of a
// (node UID, pod CIDR) pair until its route is created, once per pair.
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { RetryableError } from '../core/errors.ts';
import { harness } from '../testing/harness.ts';

async function histogram(
  h: ReturnType<typeof harness>,
): Promise<Record<string, { count: number; sum: number }>> {
  const m = h.registry.getSingleMetric('route_controller_route_creation_latency_seconds')!;
  const out: Record<string, { count: number; sum: number }> = {};
  // prom-client's histogram values carry the series name (_bucket/_sum/_count) beyond MetricValue's type.
  for (const v of (await m.get()).values as {
    labels: Record<string, unknown>;
    value: number;
    metricName?: string;
  }[]) {
    const fam = String(v.labels['ip_family']);
    out[fam] ??= { count: 0, sum: 0 };
    if (v.metricName?.endsWith('_count')) out[fam].count = v.value;
    if (v.metricName?.endsWith('_sum')) out[fam].sum = v.value;
  }
  return out;
}

describe('route creation latency', () => {
  it('measures from first sight to the create that succeeded, per family, once per pair', async () => {
    const h = harness({
      nodes: [{ name: 'a', uid: 'ua', podCIDRs: ['10.120.1.0/24', 'fd00:1::/64'] }],
      clusterCIDRs: ['10.120.0.0/16', 'fd00::/48'],
    });
    h.cloud.failNext(2, ['create'], () => new RetryableError('HTTP 503'));
    const first = await h.reconcile();
    assert.equal(first.created, 0, 'both creates failed');
    await h.clock.advance(30_000);
    const second = await h.reconcile();
    assert.equal(second.created, 2);
    const after = await histogram(h);
    assert.deepEqual(Object.keys(after).sort(), ['IPv4', 'IPv6']);
    assert.equal(after['IPv4']!.count, 1);
    assert.equal(after['IPv6']!.count, 1);
    assert.ok(Math.abs(after['IPv4']!.sum - 30) < 0.5, `about 30 s, got ${after['IPv4']!.sum}`);
    await h.clock.advance(10_000);
    await h.reconcile();
    assert.equal((await histogram(h))['IPv4']!.count, 1, 'a kept route is not observed again');
  });

  it('routes that already existed are never observed', async () => {
    const h = harness({
      nodes: [{ name: 'a', uid: 'ua', podCIDRs: ['10.120.1.0/24'] }],
      routes: [{ name: 'r', targetNode: 'a', destinationCIDR: '10.120.1.0/24' }],
    });
    const r = await h.reconcile();
    assert.equal(r.created, 0);
    assert.equal((await histogram(h))['IPv4']?.count ?? 0, 0);
  });

  it('a node re-created under the same name (new UID) is measured again', async () => {
    const h = harness({ nodes: [{ name: 'a', uid: 'u1', podCIDRs: ['10.120.1.0/24'] }] });
    await h.reconcile();
    h.cluster.deleteNode('a');
    await h.reconcile();
    h.cluster.createNode({ name: 'a', uid: 'u2', podCIDRs: ['10.120.1.0/24'] });
    await h.reconcile();
    assert.equal((await histogram(h))['IPv4']!.count, 2);
  });
});
