// SPEC §8 edge cases not covered elsewhere, and shutdown behaviour (R63 in the library).
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { PermanentError } from '../core/errors.ts';
import { harness, ip, settle } from '../testing/harness.ts';

describe('edge cases (SPEC §8)', () => {
  it('E5: an IPv6-only cluster works with one IPv6 cluster CIDR (128-bit rules)', async () => {
    const h = harness({
      clusterCIDRs: ['fd00:10::/56'],
      nodes: [{ name: 'n', podCIDRs: ['fd00:10:0:1::/64'], addresses: ip('fd00::1') }],
      routes: [
        { name: 'stale', targetNode: 'gone', destinationCIDR: 'fd00:10:0:ff::/64' },
        { name: 'foreign', targetNode: 'gone', destinationCIDR: 'fd00:11::/64' },
      ],
    });
    await h.reconcile();
    assert.deepEqual(h.routeSet(), ['fd00:10:0:1::/64->n', 'fd00:11::/64->gone']);
    assert.equal(h.conditions()['n'], 'False/RouteCreated');
  });

  it('E5: a provider without IPv6 throws PermanentError → Event, NoRouteCreated; the other family still gets its route', async () => {
    const h = harness({
      clusterCIDRs: ['10.120.0.0/16', 'a00::/8'],
      nodes: [{ name: 'n', podCIDRs: ['10.120.0.0/24', 'a00:100::/24'] }],
    });
    h.cloud.failNext(1, ['create'], () => new PermanentError('IPv6 routes are not supported'));
    await h.reconcile();
    assert.deepEqual(h.routeSet(), ['a00:100::/24->n']);
    assert.equal(h.conditions()['n'], 'True/NoRouteCreated');
    assert.equal(h.cluster.events.length, 1);
    assert.match(h.cluster.events[0]!.message, /IPv6 routes are not supported$/);
  });

  it('E8: managed routes to no known node (empty, NAT instance, deleted node) are deleted; unmanaged ones untouched', async () => {
    const h = harness({
      nodes: [{ name: 'n', podCIDRs: ['10.120.0.0/24'] }],
      routes: [
        { name: 'empty', targetNode: '', destinationCIDR: '10.120.7.0/24' },
        { name: 'nat', targetNode: 'i-nat-instance', destinationCIDR: '10.120.8.0/24' },
        { name: 'deleted', targetNode: 'old-node', destinationCIDR: '10.120.9.0/24' },
        { name: 'default', targetNode: 'i-nat-instance', destinationCIDR: '0.0.0.0/0' },
        { name: 'vpc', targetNode: '', destinationCIDR: '172.16.0.0/16' },
      ],
    });
    await h.reconcile();
    assert.deepEqual(h.routeSet(), ['0.0.0.0/0->i-nat-instance', '10.120.0.0/24->n', '172.16.0.0/16->']);
  });

  it('E8: 0.0.0.0/0 contains a cluster CIDR but its first and last addresses are outside: never deleted', async () => {
    const h = harness({ routes: [{ name: 'default', targetNode: '', destinationCIDR: '0.0.0.0/0' }] });
    await h.reconcile();
    assert.equal(h.cloud.count('delete'), 0);
  });

  it('E11: an unsynced empty cache is never taken for zero nodes', async () => {
    const h = harness({
      routes: [{ name: 'r', targetNode: 'n', destinationCIDR: '10.120.0.0/24' }],
      synced: false,
    });
    h.start();
    await h.clock.advance(3600_000);
    assert.equal(h.cloud.calls.length, 0, 'no list, no delete before sync');
    h.cluster.createNode({ name: 'n', podCIDRs: ['10.120.0.0/24'] });
    h.cluster.markSynced();
    await h.clock.advance(1);
    assert.deepEqual(h.routeSet(), ['10.120.0.0/24->n']);
    assert.equal(h.cloud.count('delete'), 0);
    await h.stop();
  });

  it('R52: a node without expectation is not re-asserted', async () => {
    const h = harness({
      nodes: [{ name: 'plain', addresses: ip('10.0.0.9') }],
      controller: { watchBasedReconciliation: true },
    });
    h.start();
    await h.clock.advance(20_000);
    const n = h.reports.length;
    h.cluster.setCondition('plain', { type: 'NetworkUnavailable', status: 'False', reason: 'CalicoIsUp' });
    await h.clock.advance(20_000);
    assert.equal(h.reports.length, n);
    await h.stop();
  });

  it('R63: after the abort no new cloud call starts and no condition is written', async () => {
    const nodes = Array.from({ length: 30 }, (_, i) => ({ name: `n${i}`, podCIDRs: [`10.120.${i}.0/24`] }));
    const h = harness({
      nodes,
      cloud: { latencyMs: 1000 },
      controller: { maxConcurrentRouteOperations: 10 },
    });
    const ac = new AbortController();
    h.clock.setTimeout(() => ac.abort(), 1500); // list done at 1 s; first 10 creates in flight
    const r = await settle(h.clock, h.controller.reconcileOnce('node_change', ac.signal));
    assert.equal(h.cloud.count('create'), 10, 'no create started after the abort');
    assert.equal(h.cluster.patches.length, 0, 'no condition write after the abort');
    assert.equal(r.created, 0);
    assert.equal(
      await h.metric('route_controller_cloud_api_calls_total', { operation: 'create', outcome: 'canceled' }),
      10,
    );
  });
});
