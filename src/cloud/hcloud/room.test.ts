// R115–R118 on the hcloud plug-in against the API fake with a low routes-per-network limit:
// the controller's gauges, the refused create's Event, no live route removed, no extra call.
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { Registry } from 'prom-client';
import { MemoryCluster } from '../../cluster/memory-cluster.ts';
import { RouteController } from '../../controller/route-controller.ts';
import { MemoryLogger } from '../../core/ports.ts';
import { HcloudRoutes } from './index.ts';
import { networkRoom, HCLOUD_DEFAULT_ROUTE_LIMIT } from './room.ts';
import { callOpts, NET, setup } from './testing/helpers.ts';
import { parseHcloudConfig } from './config.ts';
import { formatRoom } from '../../cli/plan.ts';

async function gauge(registry: Registry, name: string, labels: Record<string, string> = {}): Promise<number> {
  const m = await registry.getSingleMetric(name)!.get();
  return m.values
    .filter((v) => Object.entries(labels).every(([k, val]) => v.labels[k] === val))
    .reduce((s, v) => s + v.value, 0);
}

describe('hcloud: the network’s room (R115–R118)', () => {
  it('defaults to Hetzner’s 100 routes per network and counts every route of the network', () => {
    const room = networkRoom({
      id: 7,
      name: 'k8s',
      ipRange: '10.0.0.0/16',
      servers: [],
      routes: [{ destination: '10.244.1.0/24', gateway: '10.0.1.1' }],
    });
    assert.equal(HCLOUD_DEFAULT_ROUTE_LIMIT, 100);
    assert.deepEqual([room.container, room.limit, room.used], ['network k8s (7)', 100, 1]);
  });

  it('routeTableRoom answers from the network listRoutes read, with no request of its own', async (t) => {
    const { fake, client } = await setup(t);
    const routes = new HcloudRoutes({
      client,
      network: NET,
      nodes: { get: () => undefined, list: () => [] },
      routeLimit: 3,
    });
    const opts = callOpts();
    assert.equal(await routes.routeTableRoom('c', opts), undefined, 'nothing listed yet');
    await routes.listRoutes('c', opts);
    const before = fake.requests.length;
    const room = await routes.routeTableRoom('c', opts);
    assert.equal(fake.requests.length, before);
    assert.deepEqual([room?.limit, room?.used], [3, 0]);
  });

  it('a full network: gauges, an Event naming the limit, no live node’s route removed', async (t) => {
    const { fake, client } = await setup(t, { routeLimit: 3 });
    fake.addServer({ id: 105, name: 'node-6', privateNet: [{ network: NET, ip: '10.0.6.1' }] });
    // Another user's route in the same network holds one of the three places.
    fake.addNetwork({
      id: NET,
      name: 'k8s',
      ipRange: '10.0.0.0/16',
      routes: [{ destination: '192.168.0.0/24', gateway: '10.0.3.1' }],
    });
    const cluster = new MemoryCluster();
    cluster.createNode({ name: 'node-1', providerID: 'hcloud://101', podCIDRs: ['10.244.1.0/24'] });
    cluster.createNode({ name: 'node-2', providerID: 'hcloud://102', podCIDRs: ['10.244.2.0/24'] });
    const registry = new Registry();
    const routes = new HcloudRoutes({ client, network: NET, nodes: cluster, routeLimit: 3 });
    const controller = new RouteController({
      routes,
      nodes: cluster,
      statusWriter: cluster,
      recorder: cluster,
      logger: new MemoryLogger(),
      registry,
      clusterName: 'k8s',
      clusterCIDRs: ['10.244.0.0/16'],
    });
    const signal = new AbortController().signal;
    assert.equal((await controller.reconcileOnce('periodic', signal)).outcome, 'changed');
    assert.equal(await gauge(registry, 'route_controller_route_table_routes', { owner: 'cluster' }), 2);
    assert.equal(await gauge(registry, 'route_controller_route_table_routes', { owner: 'other' }), 1);
    assert.equal(await gauge(registry, 'route_controller_route_table_route_limit'), 3);

    cluster.createNode({ name: 'node-6', providerID: 'hcloud://105', podCIDRs: ['10.244.6.0/24'] });
    for (let i = 0; i < 2; i++) {
      const before = fake.requests.filter(
        (r) => r.method === 'GET' && !r.path.startsWith('/v1/actions/'),
      ).length;
      const report = await controller.reconcileOnce('periodic', signal);
      assert.equal(report.outcome, 'error');
      assert.deepEqual([...report.failureKinds], ['quota_exceeded']);
      // R119: what `plan` prints of the room, from the fake's network.
      assert.match(
        formatRoom(controller.routeTableRoom(), report.plan!),
        /^Route table room: network k8s \(7\) holds 3 of its limit of 3 routes \(2 of this cluster, 1 others\): 0 left, 0 after this plan \(1 create\(s\) would be refused: /,
      );
      const reads = fake.requests.filter((r) => r.method === 'GET' && !r.path.startsWith('/v1/actions/'));
      // The list's reads (network, servers) and the refused create's read of the network:
      // nothing for the room.
      assert.deepEqual(
        reads
          .slice(before)
          .map((r) => r.path.replace(/\?.*$/, ''))
          .sort(),
        [`/v1/networks/${NET}`, `/v1/networks/${NET}`, '/v1/servers'],
      );
    }
    assert.deepEqual(
      fake
        .routes(NET)
        .map((r) => r.destination)
        .sort(),
      ['10.244.1.0/24', '10.244.2.0/24', '192.168.0.0/24'],
    );
    assert.equal(fake.requests.filter((r) => r.path.endsWith('/delete_route')).length, 0, 'no route removed');
    const events = cluster.events.filter((e) => e.node.name === 'node-6');
    assert.equal(events.length, 2);
    assert.match(
      events[0]!.message,
      /resource_limit_exceeded.*; network k8s \(7\) holds 3 of its limit of 3 routes \(2 of this cluster, 1 others\); no route of a live node is removed to make room: remove routes the network no longer needs/,
    );
    assert.equal(controller.routeTableRoom()?.left, 0);
  });

  it('routeLimit in the cloud config: a whole number of at least 1', () => {
    assert.equal(parseHcloudConfig('network: 1\nrouteLimit: 150\n', {}).routeLimit, 150);
    assert.equal(parseHcloudConfig('network: 1\n', {}).routeLimit, undefined);
    assert.throws(
      () => parseHcloudConfig('network: 1\nrouteLimit: -1\n', {}),
      /field "routeLimit" must be a whole number/,
    );
  });
});
