// Incremental planning in watch mode (SPEC R103–R105), on a virtual clock: a
// cached reconcile plans only the nodes an event touched; a listing one plans
// all; whatever a reconcile left unsettled is planned again.
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { RetryableError } from '../core/errors.ts';
import { harness, ip, started, type Harness } from '../testing/harness.ts';

const S = 1000;
const N = 200;

function cluster(extra: Parameters<typeof harness>[0] = {}): Harness {
  const nodes = Array.from({ length: N }, (_, i) => ({
    name: `n${i}`,
    podCIDRs: [`10.120.${i}.0/24`],
    addresses: ip(`10.0.${i >> 8}.${i & 255}`),
  }));
  return harness({
    nodes,
    clusterCIDRs: ['10.120.0.0/16'],
    ...extra,
    controller: { watchBasedReconciliation: true, ...extra.controller },
  });
}

const planned = (h: Harness): number[] => h.reports.map((r) => r.plan?.nodes.length ?? -1);

describe('incremental planning (SPEC R103–R105)', () => {
  it('R103: a join, an address change and a leave each plan one node against the cache; the first reconcile plans all', async () => {
    const h = cluster();
    await started(h);
    h.cluster.createNode({ name: 'new', podCIDRs: ['10.120.250.0/24'], addresses: ip('10.1.0.1') });
    await h.clock.advance(0);
    h.cluster.setAddresses('n7', ip('10.2.0.7'));
    await h.clock.advance(11 * S); // R67: the address change hands over to a listing reconcile
    h.cluster.deleteNode('n9');
    await h.clock.advance(0);
    assert.deepEqual(
      h.reports.map((r) => r.source),
      ['list', 'cache', 'cache', 'list', 'cache'],
    );
    assert.deepEqual(planned(h), [N, 1, -1, N + 1, 0], 'a deleted node is planned through its routes');
    assert.equal(h.reports.at(-1)!.deleted, 1);
    assert.equal(h.routeSet().length, N, 'n9 gone, new routed, n7 re-routed');
    assert.equal(h.conditions()['new'], 'False/RouteCreated');
    await h.stop();
  });

  it('R103: with incrementalPlanning off, the same join plans every node (and writes the same)', async () => {
    const h = cluster({ controller: { incrementalPlanning: false } });
    await started(h);
    h.cluster.createNode({ name: 'new', podCIDRs: ['10.120.250.0/24'], addresses: ip('10.1.0.1') });
    await h.clock.advance(0);
    assert.deepEqual(planned(h), [N, N + 1]);
    assert.equal(h.reports[1]!.source, 'cache');
    assert.equal(h.reports[1]!.created, 1);
    await h.stop();
  });

  it('R104: an update the trigger filter ignores plans nothing and marks nothing', async () => {
    const h = cluster();
    await started(h);
    h.cluster.heartbeat('n3');
    await h.clock.advance(60 * S);
    assert.equal(h.reports.length, 1, 'no reconcile');
    h.cluster.createNode({ name: 'new', podCIDRs: ['10.120.250.0/24'], addresses: ip('10.1.0.1') });
    await h.clock.advance(0);
    assert.deepEqual(planned(h), [N, 1], 'the join plans itself, not n3 too');
    await h.stop();
  });

  it('R104: a contested pod CIDR plans every claimant, so R21 picks the same owner as a full plan', async () => {
    const h = cluster();
    await started(h);
    h.cluster.createNode({ name: 'late', podCIDRs: ['10.120.5.0/24'], addresses: ip('10.1.0.2') });
    await h.clock.advance(0);
    const r = h.reports.at(-1)!;
    assert.equal(r.source, 'cache');
    assert.deepEqual(r.plan!.nodes.map((n) => n.name).sort(), ['late', 'n5']);
    assert.equal(r.created + r.deleted, 0, 'n5 keeps its route');
    assert.deepEqual(
      r.plan!.nodes.find((n) => n.name === 'late')!.podCIDRs.map((p) => p.action),
      ['blocked'],
    );
    // The owner leaves: the other claimant, marked by nothing but the index, takes the CIDR over.
    h.cluster.deleteNode('n5');
    await h.clock.advance(0);
    assert.ok(h.routeSet().includes('10.120.5.0/24->late'));
    await h.stop();
  });

  it('R105: a failed create is planned again by the next cached reconcile, with the next event', async () => {
    const h = cluster();
    await started(h);
    h.cloud.failNext(1, ['create'], () => new RetryableError('503'));
    h.cluster.createNode({ name: 'x', podCIDRs: ['10.120.251.0/24'], addresses: ip('10.1.0.3') });
    await h.clock.advance(0);
    assert.equal(h.reports.at(-1)!.outcome, 'error');
    // R65: a 5xx leaves the cloud's state unknown, so the retry lists and plans all.
    await h.clock.advance(12 * S);
    assert.equal(h.reports.at(-1)!.source, 'list');
    assert.ok(h.routeSet().includes('10.120.251.0/24->x'));
    await h.stop();
  });

  it('R105: a failed condition write is planned again by the next cached reconcile', async () => {
    const h = cluster();
    await started(h);
    h.cluster.failPatches(1, 503);
    h.cluster.createNode({ name: 'y', podCIDRs: ['10.120.252.0/24'], addresses: ip('10.1.0.4') });
    await h.clock.advance(0);
    assert.notEqual(h.conditions()['y'], 'False/RouteCreated');
    h.cluster.createNode({ name: 'z', podCIDRs: ['10.120.253.0/24'], addresses: ip('10.1.0.5') });
    await h.clock.advance(30 * S);
    const cached = h.reports.filter((r) => r.source === 'cache');
    assert.ok(cached.length >= 2);
    assert.ok(
      cached.at(-1)!.plan!.nodes.some((n) => n.name === 'y'),
      'y planned again although only z changed',
    );
    assert.equal(h.conditions()['y'], 'False/RouteCreated');
    assert.equal(h.conditions()['z'], 'False/RouteCreated');
    await h.stop();
  });
});
