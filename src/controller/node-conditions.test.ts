// R106 (a node's condition follows its own routes, not the whole reconcile) and
// R107 (route_controller_node_schedulable_latency_seconds), in virtual time.
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { RetryableError } from '../core/errors.ts';
import { sleep } from '../core/clock.ts';
import { harness, ip, settle } from '../testing/harness.ts';

type Harness = ReturnType<typeof harness>;

/** When each node's NetworkUnavailable was patched, as "status/reason@ms". */
function patchTimes(h: Harness, t0: number): Record<string, string[]> {
  const out: Record<string, string[]> = {};
  for (const p of h.cluster.patches)
    (out[p.node.name] ??= []).push(`${p.condition.status}/${p.condition.reason}@${p.at - t0}`);
  return out;
}

async function schedulable(h: Harness): Promise<{ count: number; sum: number }> {
  const m = h.registry.getSingleMetric('route_controller_node_schedulable_latency_seconds')!;
  let count = 0;
  let sum = 0;
  // prom-client's histogram values carry the series name (_bucket/_sum/_count) beyond MetricValue's type.
  for (const v of (await m.get()).values as { value: number; metricName?: string }[]) {
    if (v.metricName?.endsWith('_count')) count = v.value;
    if (v.metricName?.endsWith('_sum')) sum = v.value;
  }
  return { count, sum };
}

/** Four nodes: `ready` already routed, a, b, c each waiting for a create that takes 1 s, one at a time. */
function serialCloud(): Harness {
  return harness({
    nodes: [
      { name: 'ready', uid: 'u0', podCIDRs: ['10.120.0.0/24'], addresses: ip('10.0.0.10') },
      { name: 'a', uid: 'ua', podCIDRs: ['10.120.1.0/24'], addresses: ip('10.0.0.1') },
      { name: 'b', uid: 'ub', podCIDRs: ['10.120.2.0/24'], addresses: ip('10.0.0.2') },
      { name: 'c', uid: 'uc', podCIDRs: ['10.120.3.0/24', 'fd00:3::/64'], addresses: ip('10.0.0.3') },
    ],
    clusterCIDRs: ['10.120.0.0/16', 'fd00::/48'],
    routes: [{ destinationCIDR: '10.120.0.0/24', targetNode: 'ready' }],
    cloud: { latencyMs: { create: 1000 } },
    controller: { maxConcurrentRouteOperations: 1 },
  });
}

describe('R106: conditions follow the routes', () => {
  it("patches each node as soon as its own routes exist, not after the reconcile's last write", async () => {
    const h = serialCloud();
    const t0 = h.clock.now();
    const report = await h.reconcile();
    assert.equal(report.created, 4);
    assert.equal(report.conditions, 4);
    // One create at a time, 1 s each: a at 1 s, b at 2 s, c's two routes at 3 s and 4 s.
    assert.deepEqual(patchTimes(h, t0), {
      ready: ['False/RouteCreated@0'],
      a: ['False/RouteCreated@1000'],
      b: ['False/RouteCreated@2000'],
      c: ['False/RouteCreated@4000'],
    });
  });

  it('a node with one of two routes created is not patched False; its failure condition comes after every write settled', async () => {
    const h = serialCloud();
    const t0 = h.clock.now();
    // The creates run a, b, c(v4), c(v6): the last one fails for good this reconcile.
    let n = 0;
    const create = h.cloud.createRoute.bind(h.cloud);
    h.cloud.createRoute = async (...args) => {
      if (++n === 4) {
        await sleep(h.clock, 1000);
        throw new RetryableError('HTTP 503');
      }
      return create(...args);
    };
    const report = await h.reconcile();
    assert.equal(report.created, 3);
    assert.equal(report.failed, 1);
    const times = patchTimes(h, t0);
    assert.deepEqual(
      times['c'],
      ['True/NoRouteCreated@4000'],
      'never False, and only once all writes settled',
    );
    assert.deepEqual(times['a'], ['False/RouteCreated@1000']);
  });

  it('writes nothing for a node whose condition is already right, early or late', async () => {
    const h = serialCloud();
    await h.reconcile();
    const before = h.cluster.patches.length;
    const again = await h.reconcile();
    assert.equal(again.conditions, 0);
    assert.equal(h.cluster.patches.length, before, 'no patch when every node is already RouteCreated');
  });

  it('writes no condition once the reconcile is aborted (R63), not even for a node routed before the abort', async () => {
    const h = serialCloud();
    const t0 = h.clock.now();
    const stop = new AbortController();
    const run = h.controller.reconcileOnce('node_change', stop.signal);
    await h.clock.advance(1500); // a is routed and patched; b's create is in flight
    stop.abort();
    await settle(h.clock, run).catch(() => undefined);
    await h.clock.advance(10_000);
    const times = patchTimes(h, t0);
    assert.deepEqual(Object.keys(times).sort(), ['a', 'ready']);
  });
});

describe('R107: route_controller_node_schedulable_latency_seconds', () => {
  it('measures from pod-CIDR assignment (later than creation) to NetworkUnavailable=False, once per node', async () => {
    const h = harness({
      nodes: [],
      cloud: { latencyMs: { create: 1000 } },
      controller: { watchBasedReconciliation: true },
    });
    h.start();
    await h.clock.advance(1);
    h.cluster.createNode({ name: 'n', uid: 'un', addresses: ip('10.0.0.1') });
    await h.clock.advance(5000);
    assert.equal((await schedulable(h)).count, 0, 'no pod CIDRs yet: nothing to measure');
    h.cluster.updateNode('n', (x) => (x.spec = { ...x.spec, podCIDRs: ['10.120.7.0/24'] }));
    await h.clock.advance(3000);
    assert.equal(h.conditions()['n'], 'False/RouteCreated');
    const first = await schedulable(h);
    assert.equal(first.count, 1);
    // From the assignment (5 s after creation): the 1 s create, not the 5 s without pod CIDRs.
    assert.ok(first.sum >= 1 && first.sum < 1.1, `latency ${first.sum} s`);
    // Someone sets it True again; the re-assertion is not a second "became schedulable".
    h.cluster.setCondition('n', {
      type: 'NetworkUnavailable',
      status: 'True',
      reason: 'CniSaysNo',
      message: '',
      lastTransitionTime: new Date(h.clock.now()),
      lastHeartbeatTime: new Date(h.clock.now()),
    });
    await h.clock.advance(15_000);
    assert.equal(h.conditions()['n'], 'False/RouteCreated', 'drift repaired (R52)');
    assert.equal((await schedulable(h)).count, 1);
    await h.stop();
  });

  it('does not measure a node created before the controller started', async () => {
    const h = harness({
      nodes: [
        {
          name: 'old',
          uid: 'uo',
          podCIDRs: ['10.120.8.0/24'],
          addresses: ip('10.0.0.8'),
          creationTimestamp: new Date(-86_400_000),
        },
        { name: 'new', uid: 'uw', podCIDRs: ['10.120.9.0/24'], addresses: ip('10.0.0.9') },
      ],
    });
    await h.reconcile();
    assert.equal(h.conditions()['old'], 'False/RouteCreated');
    assert.equal(h.conditions()['new'], 'False/RouteCreated');
    assert.equal((await schedulable(h)).count, 1, 'only the node created while the controller ran');
  });
});
