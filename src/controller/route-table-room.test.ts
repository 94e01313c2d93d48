// R115–R117: the route table's room: gauges, the refused create's Event, no live route removed,
// and no call of its own per reconcile.
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { QuotaExceededError, RetryableError } from '../core/errors.ts';
import { MemoryLogger } from '../core/ports.ts';
import type {
  CallOptions,
  OperationResult,
  Route,
  RoutePlan,
  Routes,
  RouteTableRoom,
} from '../core/types.ts';
import { parseCIDR } from '../core/cidr.ts';
import { harness, ip, settle, started, watching } from '../testing/harness.ts';
import { RouteTableRoomTracker, withRouteTableRoom } from './route-table-room.ts';

const node = (i: number) => ({
  name: `n${i}`,
  podCIDRs: [`10.120.${i}.0/24`],
  addresses: ip(`10.0.0.${i + 1}`),
});

/** Counts the provider's room reads, so tests can assert they ride on lists only. */
function countRoomReads(cloud: { routeTableRoom: Routes['routeTableRoom'] }): { reads: number } {
  const counter = { reads: 0 };
  const inner = cloud.routeTableRoom!.bind(cloud);
  cloud.routeTableRoom = (c: string, o: CallOptions) => {
    counter.reads++;
    return inner(c, o);
  };
  return counter;
}

describe('route table room (R115–R117)', () => {
  it('R116: gauges show the cluster’s routes, the others and the limit after a list', async () => {
    const h = harness({
      cloud: { quota: 10 },
      nodes: [node(1), node(2)],
      routes: [
        { name: 'vpc', targetNode: '', destinationCIDR: '172.16.0.0/16' },
        { name: 'other-cluster', clusterName: undefined, targetNode: 'x', destinationCIDR: '10.9.0.0/24' },
      ],
    });
    await h.reconcile();
    assert.equal(await h.metric('route_controller_route_table_routes', { owner: 'cluster' }), 2);
    assert.equal(await h.metric('route_controller_route_table_routes', { owner: 'other' }), 2);
    assert.equal(await h.metric('route_controller_route_table_route_limit'), 10);
    const v = h.controller.routeTableRoom();
    assert.deepEqual(
      { used: v?.used, left: v?.left, cluster: v?.cluster, others: v?.others },
      { used: 4, left: 6, cluster: 2, others: 2 },
    );
  });

  it('R116: between lists the controller’s own creates and deletes move the gauge, with no room read', async () => {
    const h = watching({ cloud: { quota: 10 } });
    const counter = countRoomReads(h.cloud);
    await started(h);
    assert.equal(counter.reads, 1);
    assert.equal(await h.metric('route_controller_route_table_routes', { owner: 'cluster' }), 1);
    h.cluster.createNode(node(1));
    h.cluster.createNode(node(2));
    await h.clock.advance(1_000);
    h.cluster.deleteNode('a');
    await h.clock.advance(1_000);
    assert.equal(h.cloud.count('list'), 1, 'cached reconciles only');
    assert.equal(counter.reads, 1, 'no room read without a list');
    assert.equal(await h.metric('route_controller_route_table_routes', { owner: 'cluster' }), 2);
    assert.equal(h.controller.routeTableRoom()?.left, 8);
    await h.stop();
  });

  it('R115: one room read per listing reconcile, none per cached one, over a watch-mode hour', async () => {
    const h = watching({ cloud: { quota: 50 }, controller: { routeResyncPeriodMs: 600_000 } });
    const counter = countRoomReads(h.cloud);
    await started(h);
    for (let i = 1; i <= 30; i++) {
      h.cluster.createNode(node(i));
      await h.clock.advance(120_000);
    }
    assert.ok(h.cloud.count('list') >= 4, `the resync lists (${h.cloud.count('list')})`);
    assert.equal(counter.reads, h.cloud.count('list'));
    assert.ok(h.cloud.count('create') >= 30);
    assert.equal(h.cloud.calls.length, h.cloud.count('list') + h.cloud.count('create'));
    await h.stop();
  });

  it('R117: a create refused by a full table names the limit and how to raise it; no live node’s route is removed', async () => {
    const h = watching({ cloud: { quota: 3 }, nodes: [node(1), node(2), node(3)] });
    await started(h);
    assert.equal(h.cloud.count('create'), 3);
    h.cluster.createNode(node(4));
    // The refusal retries at the backoff cap (E10) and the safety resync lists: give both time.
    await h.clock.advance(3 * 3_600_000);
    assert.deepEqual(h.routeSet(), ['10.120.1.0/24->n1', '10.120.2.0/24->n2', '10.120.3.0/24->n3']);
    assert.equal(h.cloud.count('delete'), 0, 'no route removed to make room');
    const refused = h.cluster.events.filter((e) => e.node.name === 'n4');
    assert.ok(refused.length >= 2, `events: ${refused.length}`);
    for (const e of refused) {
      assert.equal(e.reason, 'FailedToCreateRoute');
      assert.match(
        e.message,
        /route limit of 3 reached; the memory route table holds 3 of its limit of 3 routes \(3 of this cluster, 0 others\); no route of a live node is removed to make room: raise "quota" in the memory cloud config$/,
      );
    }
    assert.equal(h.conditions()['n4'], 'True/NoRouteCreated');
    assert.equal(await h.metric('route_controller_route_table_routes', { owner: 'cluster' }), 3);
    assert.equal(h.controller.routeTableRoom()?.left, 0);
    await h.stop();
  });

  it('R117: a stale managed route still goes (R22), and its room serves the waiting node', async () => {
    const h = harness({
      cloud: { quota: 2 },
      nodes: [node(1), node(2)],
      routes: [
        { name: 'n1', targetNode: 'n1', destinationCIDR: '10.120.1.0/24' },
        { name: 'gone', targetNode: 'gone', destinationCIDR: '10.120.9.0/24' },
      ],
    });
    await h.reconcile();
    assert.deepEqual(h.routeSet(), ['10.120.1.0/24->n1', '10.120.2.0/24->n2']);
    assert.equal(h.cloud.count('delete'), 1);
  });

  it('R116: crossing 90 % logs one warning naming how to raise the limit', async () => {
    const h = harness({ cloud: { quota: 10 }, nodes: Array.from({ length: 9 }, (_, i) => node(i)) });
    await h.reconcile();
    await h.reconcile();
    const warnings = h.logger.records.filter((r) => r.level === 'warn' && /holds 9 of its limit/.test(r.msg));
    assert.equal(warnings.length, 1, h.logger.messages().join('\n'));
    assert.match(warnings[0]!.msg, /\(1 left\): raise "quota"/);
  });

  it('R115: without a limit (or a provider without the method) there is no gauge and no view', async () => {
    const h = harness({ nodes: [node(1)] });
    await h.reconcile();
    assert.equal(h.controller.routeTableRoom(), undefined);
    const routes = await h.registry.getSingleMetric('route_controller_route_table_routes')!.get();
    assert.equal(routes.values.length, 0);
    assert.equal(await h.metric('route_controller_route_table_route_limit'), 0);
    const plain: Routes = {
      listRoutes: async () => [],
      createRoute: async () => {},
      deleteRoute: async () => {},
    };
    const tracker = new RouteTableRoomTracker({
      clusterCIDRs: [],
      metrics: undefined,
      logger: new MemoryLogger(),
    });
    assert.equal(withRouteTableRoom(plain, tracker, new MemoryLogger()), plain);
  });

  it('R115: a failing room read leaves the list and the reconcile as they were', async () => {
    const h = harness({ cloud: { quota: 10 }, nodes: [node(1)] });
    h.cloud.routeTableRoom = () => Promise.reject(new RetryableError('quota API down'));
    const report = await h.reconcile();
    assert.equal(report.outcome, 'changed');
    assert.deepEqual(h.routeSet(), ['10.120.1.0/24->n1']);
    await h.reconcile();
    const warned = h.logger.records.filter(
      (r) => r.level === 'warn' && r.msg === "Could not read the route table's room: quota API down",
    );
    assert.equal(warned.length, 1, 'the same failure is warned once');
  });

  it('R117: a batch provider keeps its applyRoutes, and its refused creates are explained too', async () => {
    const room: RouteTableRoom = { container: 'router r1', limit: 2, used: 2, raise: 'raise max_routes' };
    const applied: RoutePlan[] = [];
    const batch: Routes = {
      listRoutes: async () => [listed('10.120.1.0/24', 'n1'), listed('172.16.0.0/16', '')],
      createRoute: async () => {},
      deleteRoute: async () => {},
      routeTableRoom: async () => room,
      applyRoutes: async (_c, plan): Promise<OperationResult[]> => {
        applied.push(plan);
        return [
          ...plan.deletes.map(() => ({ ok: true }) as const),
          ...plan.creates.map(() => ({ ok: false, error: new QuotaExceededError('RoutesExhausted') })),
        ];
      },
    };
    const h = harness({ nodes: [node(1), node(2)], controller: { routes: batch } });
    await h.reconcile();
    assert.equal(applied.length, 1);
    assert.match(
      h.cluster.events[0]!.message,
      /RoutesExhausted; router r1 holds 2 of its limit of 2 routes \(1 of this cluster, 1 others\).*: raise max_routes$/,
    );
    const tracker = new RouteTableRoomTracker({
      clusterCIDRs: [parseCIDR('10.120.0.0/16')],
      metrics: undefined,
      logger: new MemoryLogger(),
    });
    assert.equal(typeof withRouteTableRoom(batch, tracker, new MemoryLogger()).applyRoutes, 'function');
    const { applyRoutes: _drop, ...single } = batch;
    assert.equal(withRouteTableRoom(single, tracker, new MemoryLogger()).applyRoutes, undefined);
  });

  it('R117: errors other than quota_exceeded pass unchanged', () => {
    const tracker = new RouteTableRoomTracker({
      clusterCIDRs: [],
      metrics: undefined,
      logger: new MemoryLogger(),
    });
    tracker.observe({ container: 't', limit: 1, used: 1, raise: 'r' }, []);
    const err = new RetryableError('busy');
    assert.equal(tracker.explain(err), err);
    const q = tracker.explain(new QuotaExceededError('full', { retryAfterMs: 5 })) as QuotaExceededError;
    assert.equal(q.kind, 'quota_exceeded');
    assert.equal(q.retryAfterMs, 5);
  });

  it('dry-run reconciles (plan) read the room too', async () => {
    const h = harness({ cloud: { quota: 5 }, nodes: [node(1)], controller: { dryRun: true } });
    await settle(h.clock, h.controller.reconcileOnce('node_change', new AbortController().signal));
    assert.equal(h.controller.routeTableRoom()?.left, 5);
  });
});

function listed(destinationCIDR: string, targetNode: string): Route {
  return {
    name: destinationCIDR,
    targetNode,
    targetNodeAddresses: [],
    enableNodeAddresses: false,
    destinationCIDR,
    blackhole: false,
  };
}
