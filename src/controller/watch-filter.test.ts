// SPEC §9.3 TestHandleNodeUpdate (extended): which node updates enqueue a
// reconcile in watch mode. Negative cases assert that nothing was enqueued:
// queue depth 0 and no reconcile after advancing the clock past I.
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { harness, ip } from '../testing/harness.ts';
import type { Node } from '../core/types.ts';

const I = 10_000;

async function watching() {
  const h = harness({
    nodes: [{ name: 'node-1', uid: 'uid-1', podCIDRs: ['10.120.0.0/24'], addresses: ip('10.0.1.1') }],
    controller: { watchBasedReconciliation: true },
  });
  h.start();
  await h.clock.advance(I + 1);
  assert.equal(h.reports.length, 1, 'initial reconcile at sync');
  assert.equal(h.reports[0]!.trigger, 'node_change');
  assert.equal(h.conditions()['node-1'], 'False/RouteCreated');
  const depth = () => h.metric('workqueue_depth', { name: 'Routes' });
  const before = h.reports.length;
  /** Reconciles started after the change, once I has passed. */
  const after = async () => {
    await h.clock.advance(I + 1);
    return h.reports.slice(before);
  };
  return { h, depth, after };
}

async function expectNone(change: (h: ReturnType<typeof harness>) => void): Promise<void> {
  const { h, depth, after } = await watching();
  change(h);
  assert.equal(await depth(), 0, 'nothing enqueued');
  assert.deepEqual(await after(), [], 'no reconcile after I');
  await h.stop();
}

async function expectTrigger(
  change: (h: ReturnType<typeof harness>) => void,
  trigger: string,
): Promise<void> {
  const { h, depth, after } = await watching();
  change(h);
  assert.equal(await depth(), 1, 'enqueued');
  // R67: an address or UID change hands the cached reconcile over to a listing one.
  const runs = (await after()).filter((r) => !r.handover);
  assert.equal(runs.length, 1);
  assert.equal(runs[0]!.trigger, trigger);
  await h.stop();
}

describe('TestHandleNodeUpdate (SPEC §9.3)', () => {
  it('TW1 InternalIP changed → enqueued', () =>
    expectTrigger((h) => h.cluster.setAddresses('node-1', ip('10.0.1.2')), 'node_change'));

  it('TW2 pod CIDR changed → enqueued', () =>
    expectTrigger(
      (h) =>
        h.cluster.updateNode('node-1', (n) => {
          n.spec!.podCIDRs = ['10.121.0.0/24'];
        }),
      'node_change',
    ));

  it('TW3 identical object with a new resourceVersion → not enqueued', () =>
    expectNone((h) => h.cluster.updateNode('node-1', () => {})));

  it('TW4 only status.images added → not enqueued', () =>
    expectNone((h) =>
      h.cluster.updateNode('node-1', (n) => {
        (n.status as Record<string, unknown>)['images'] = [
          { names: ['registry.k8s.io/pause:3.10'], sizeBytes: 1 },
        ];
      }),
    ));

  it('TW5 identical object, same resourceVersion (resync) → enqueued as periodic', () =>
    expectTrigger((h) => h.cluster.resync('node-1'), 'periodic'));

  it('TW6 addresses or pod CIDRs reordered → not enqueued', async () => {
    const h = harness({
      nodes: [
        {
          name: 'node-1',
          podCIDRs: ['10.120.0.0/24', 'a00:100::/24'],
          addresses: [...ip('10.0.1.1'), { type: 'Hostname', address: 'node-1' }],
        },
      ],
      clusterCIDRs: ['10.120.0.0/16', 'a00::/8'],
      controller: { watchBasedReconciliation: true },
    });
    h.start();
    await h.clock.advance(I + 1);
    const n = h.reports.length;
    h.cluster.updateNode('node-1', (x) => {
      x.spec!.podCIDRs = ['a00:100:0::/24', '10.120.0.0/24'];
      x.status!.addresses = [{ type: 'Hostname', address: 'node-1' }, ...ip('10.0.1.1')];
    });
    assert.equal(await h.metric('workqueue_depth', { name: 'Routes' }), 0);
    await h.clock.advance(I + 1);
    assert.equal(h.reports.length, n);
    await h.stop();
  });

  it('TW7 heartbeat, labels, annotations, taints, providerID → not enqueued', () =>
    expectNone((h) => {
      h.cluster.heartbeat('node-1');
      h.cluster.updateNode('node-1', (n) => {
        const m = n.metadata as Record<string, unknown>;
        m['labels'] = { 'topology.kubernetes.io/zone': 'a' };
        m['annotations'] = { note: 'x' };
        const s = n.spec as Record<string, unknown>;
        s['taints'] = [{ key: 'k', effect: 'NoSchedule' }];
        s['unschedulable'] = true;
        s['podCIDR'] = '10.99.0.0/24';
        n.spec!.providerID = 'aws:///a/i-1';
      });
    }));

  it('TW8 NetworkUnavailable set to the expected value → not enqueued', () =>
    expectNone((h) =>
      h.cluster.setCondition('node-1', {
        type: 'NetworkUnavailable',
        status: 'False',
        reason: 'RouteCreated',
        message: 'written again',
      }),
    ));

  it('TW9 NetworkUnavailable → False/CalicoIsUp → enqueued as condition_drift and put back', async () => {
    const { h, depth, after } = await watching();
    h.cluster.setCondition('node-1', { type: 'NetworkUnavailable', status: 'False', reason: 'CalicoIsUp' });
    assert.equal(await depth(), 1);
    const runs = await after();
    assert.equal(runs.length, 1);
    assert.equal(runs[0]!.trigger, 'condition_drift');
    assert.equal(h.conditions()['node-1'], 'False/RouteCreated');
    // The put-back is our own write: its echo triggers nothing more.
    assert.equal(await depth(), 0);
    assert.deepEqual((await after()).length, 1);
    await h.stop();
  });

  it('TW10 add, delete and tombstone delete → enqueued', async () => {
    await expectTrigger(
      (h) => h.cluster.createNode({ name: 'node-2', podCIDRs: ['10.120.1.0/24'] }),
      'node_change',
    );
    await expectTrigger((h) => h.cluster.deleteNode('node-1'), 'node_change');
    await expectTrigger((h) => h.cluster.deleteNode('node-1', { tombstone: true }), 'node_change');
  });

  it('TW11 metadata.uid changed → enqueued', () =>
    expectTrigger(
      (h) =>
        h.cluster.updateNode('node-1', (n: Node) => {
          n.metadata!.uid = 'uid-2';
        }),
      'node_change',
    ));
});
