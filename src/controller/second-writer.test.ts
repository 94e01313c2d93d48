// R123: a second writer on the cluster routes is detected (Event, metrics) while the
// controller keeps every live node routed; its own writes, a node leaving and a single
// hand-made change raise nothing.
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { seededRandom } from '../core/random.ts';
import { harness, ip, type Harness } from '../testing/harness.ts';
import type { ReconcileReport } from './reconcile.ts';
import { SECOND_WRITER_REASON } from './second-writer.ts';

const NODES = ['a', 'b', 'c', 'd', 'e'].map((name, i) => ({
  name,
  podCIDRs: [`10.120.${i}.0/24`],
  addresses: ip(`10.0.0.${i + 1}`),
}));

function periodic(seed = 1, onReconcile?: (r: ReconcileReport) => void): Harness {
  return harness({
    nodes: NODES,
    seed,
    controller: { routeReconciliationPeriodMs: 10_000, ...(onReconcile ? { onReconcile } : {}) },
  });
}

/** Live node name → the routes that point at it, as the cloud has them. */
function routedNodes(h: Harness): Map<string, string[]> {
  const out = new Map<string, string[]>();
  for (const r of h.cloud.snapshot()) {
    if (r.blackhole) continue;
    out.set(r.targetNode, [...(out.get(r.targetNode) ?? []), r.destinationCIDR]);
  }
  return out;
}

function assertAllRouted(h: Harness, when: string): void {
  const routed = routedNodes(h);
  for (const n of h.cluster.list()) {
    const name = n.metadata!.name!;
    assert.deepEqual(routed.get(name), n.spec!.podCIDRs, `${when}: node ${name} has its route`);
  }
}

function secondWriterEvents(h: Harness) {
  return h.cluster.events.filter((e) => e.reason === SECOND_WRITER_REASON);
}

describe('R123 second writer', () => {
  test('a writer that fights the controller is reported; no live node is left without its route', async (t) => {
    const seed = Number(process.env.TEST_SEED ?? Date.now() % 1_000_000);
    t.diagnostic(`seed ${seed} (TEST_SEED=${seed} to repeat)`);
    const random = seededRandom(seed);
    // After every reconcile of the controller, each live node has its route again.
    const checks: string[] = [];
    const h: Harness = periodic(seed, (r) => {
      assertAllRouted(h, `after reconcile ${r.id}`);
      checks.push(r.id);
    });
    h.start();
    await h.clock.advance(1);
    // The other writer acts every 90 s, 5 s after a reconcile of the controller, for 45 minutes:
    // it deletes a live node's route, points one at another node, or adds one for no node.
    const kinds = ['deleted', 'repointed', 'created'] as const;
    for (let round = 0; round < 30; round++) {
      await h.clock.advance(45_000);
      const kind = kinds[round % 3]!;
      const victim = NODES[Math.floor(random() * NODES.length)]!;
      if (kind === 'deleted') h.cloud.removeRoute(victim.podCIDRs[0]!);
      else if (kind === 'repointed') {
        const other = NODES[(NODES.indexOf(victim) + 1) % NODES.length]!;
        h.cloud.putRoute({
          destinationCIDR: victim.podCIDRs[0]!,
          targetNode: other.name,
          clusterName: h.clusterName,
        });
      } else
        h.cloud.putRoute({
          destinationCIDR: `10.120.${200 + round}.0/24`,
          targetNode: '',
          clusterName: h.clusterName,
        });
      await h.clock.advance(45_000);
    }
    await h.clock.advance(10_000);
    await h.stop();

    assert.ok(checks.length >= 30, `the controller reconciled throughout (${checks.length})`);
    assertAllRouted(h, 'at the end');
    // The controller never deleted a live node's correct route itself (only the ones the other
    // writer had pointed elsewhere, to put them back).
    const owner = new Map(NODES.map((n) => [n.podCIDRs[0]!, n.name]));
    const wrongDeletes = h.cloud.calls.filter(
      (c) =>
        c.op === 'delete' && c.destinationCIDR !== undefined && owner.get(c.destinationCIDR) === c.targetNode,
    );
    assert.deepEqual(wrongDeletes, []);
    for (const change of kinds) {
      assert.ok((await h.metric('route_controller_foreign_route_changes_total', { change })) >= 5, change);
    }
    assert.equal(await h.metric('route_controller_second_writer_suspected'), 1);
    const events = secondWriterEvents(h);
    assert.ok(events.length >= 10, `Events: ${events.length}`);
    for (const e of events) {
      assert.equal(e.type, 'Warning');
      assert.ok(owner.has(NODES.find((n) => n.name === e.node.name)?.podCIDRs[0] ?? ''), e.node.name);
      assert.match(e.message, /by another writer since the last list/);
      assert.match(e.message, /cloud-controller-manager whose route controller is still on/);
    }
    assert.ok(events.some((e) => /was deleted/.test(e.message)));
    assert.ok(events.some((e) => /was repointed to node/.test(e.message)));
  });

  test('its own writes, nodes joining and leaving: nothing foreign', async () => {
    const h = periodic();
    h.start();
    await h.clock.advance(1);
    h.cluster.createNode({ name: 'f', podCIDRs: ['10.120.5.0/24'], addresses: ip('10.0.0.6') });
    await h.clock.advance(10_000);
    h.cluster.deleteNode('a');
    await h.clock.advance(10_000);
    // The cloud drops the route of a node that is gone, as some clouds do with their instance.
    h.cluster.deleteNode('b');
    h.cloud.removeRoute('10.120.1.0/24');
    await h.clock.advance(30_000);
    await h.stop();
    assert.equal(await h.metric('route_controller_foreign_route_changes_total'), 0);
    assert.equal(await h.metric('route_controller_second_writer_suspected'), 0);
    assert.deepEqual(secondWriterEvents(h), []);
  });

  test('writes that failed leave their routes unknown, not foreign', async () => {
    const h = periodic();
    h.cloud.failNext(3, ['create']);
    h.start();
    await h.clock.advance(60_000);
    await h.stop();
    assertAllRouted(h, 'after the retries');
    assert.equal(await h.metric('route_controller_foreign_route_changes_total'), 0);
  });

  test('a list soon after our own write that does not show it yet is not another writer', async () => {
    const h = periodic();
    h.start();
    await h.clock.advance(1);
    // An eventually consistent list: the route created a moment ago is missing from the next one.
    h.cloud.removeRoute('10.120.4.0/24');
    await h.clock.advance(10_000);
    await h.stop();
    assert.equal(await h.metric('route_controller_foreign_route_changes_total'), 0);
    assertAllRouted(h, 'after the next reconcile');
  });

  test('one hand-made change is counted and logged, but raises no suspicion and no Event', async () => {
    const h = periodic();
    h.start();
    await h.clock.advance(61_000); // past the grace for our own writes (R123)
    h.cloud.removeRoute('10.120.2.0/24');
    await h.clock.advance(60_000);
    await h.stop();
    assert.equal(await h.metric('route_controller_foreign_route_changes_total', { change: 'deleted' }), 1);
    assert.equal(await h.metric('route_controller_second_writer_suspected'), 0);
    assert.deepEqual(secondWriterEvents(h), []);
    assert.ok(
      h.logger.records.some(
        (r) => r.msg === 'Route 10.120.2.0/24 of node c was deleted by another writer since the last list',
      ),
    );
    assertAllRouted(h, 'after the repair');
  });

  test('two listings with foreign changes more than the window apart raise nothing', async () => {
    const h = periodic();
    h.start();
    await h.clock.advance(61_000); // past the grace for our own writes (R123)
    h.cloud.removeRoute('10.120.2.0/24');
    await h.clock.advance(3_700_000);
    h.cloud.removeRoute('10.120.3.0/24');
    await h.clock.advance(20_000);
    await h.stop();
    assert.equal(await h.metric('route_controller_foreign_route_changes_total', { change: 'deleted' }), 2);
    assert.equal(await h.metric('route_controller_second_writer_suspected'), 0);
    assert.deepEqual(secondWriterEvents(h), []);
  });
});
