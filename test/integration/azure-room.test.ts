// R115–R118 on the azure plug-in against Microsoft's fake servers (testenv/azure-fake) with
// routeTableRouteLimit 3: the table's routes in the controller's gauges, read from the table
// listRoutes fetched (no request of its own); a create the table has no room for refused alone
// before the one PUT, with an Event naming the limit; no live node's route removed.
// Run: scripts/azure-fake.sh build && node --test test/integration/azure-room.test.ts
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { Registry } from 'prom-client';
import { MemoryCluster } from '../../src/cluster/memory-cluster.ts';
import { RouteController } from '../../src/controller/route-controller.ts';
import { MemoryLogger } from '../../src/core/ports.ts';
import { AzureRoutes, createNetworkClient, routeTableApi } from '../../src/cloud/azure/index.ts';
import type { AzureCredential } from '../../src/cloud/azure/index.ts';
import { azureFakeSkip, startAzureFake } from '../support/azure-fake.ts';
import type { AzureFake } from '../support/azure-fake.ts';
import { formatRoom } from '../../src/cli/plan.ts';

const SUB = '00000000-0000-0000-0000-0000000000a1';
const RG = 'k8s-rg';
const TABLE = 'k8s-routes';
const STATIC_TOKEN: AzureCredential = {
  getToken: async () => ({ token: 'static-test-token', expiresOnTimestamp: Date.now() + 3_600_000 }),
};

async function gauge(registry: Registry, name: string, labels: Record<string, string> = {}): Promise<number> {
  const m = await registry.getSingleMetric(name)!.get();
  return m.values
    .filter((v) => Object.entries(labels).every(([k, val]) => v.labels[k] === val))
    .reduce((s, v) => s + v.value, 0);
}

describe('azure: the route table’s room (R115–R118)', { ...azureFakeSkip(), timeout: 120_000 }, () => {
  let fake: AzureFake;
  before(async () => {
    fake = await startAzureFake();
  });
  after(async () => {
    await fake?.stop();
  });

  test('a full table: gauges, a refused create with its Event, one PUT, nothing removed', async () => {
    await fake.reset();
    // Another user's route in the table holds one of the three places.
    await fake.putTable(SUB, RG, TABLE, {
      location: 'westeurope',
      properties: {
        routes: [
          {
            name: 'vpn',
            properties: { addressPrefix: '192.168.0.0/16', nextHopType: 'VirtualNetworkGateway' },
          },
        ],
      },
    });
    const cluster = new MemoryCluster();
    const ip = (a: string) => [{ type: 'InternalIP', address: a }];
    cluster.createNode({ name: 'node1', podCIDRs: ['10.244.1.0/24'], addresses: ip('10.0.0.1') });
    cluster.createNode({ name: 'node2', podCIDRs: ['10.244.2.0/24'], addresses: ip('10.0.0.2') });
    cluster.createNode({ name: 'node3', podCIDRs: ['10.244.3.0/24'], addresses: ip('10.0.0.3') });
    const client = createNetworkClient(
      {
        resourceManagerEndpoint: fake.endpoint,
        subscriptionId: SUB,
        tokenScope: 'https://management.azure.com/.default',
      },
      STATIC_TOKEN,
    );
    const routes = new AzureRoutes(
      routeTableApi(client, { pollIntervalMs: 20 }),
      { resourceGroup: RG, routeTableName: TABLE, location: 'westeurope', routeLimit: 3 },
      cluster,
    );
    const registry = new Registry();
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
    const before = (await fake.requests()).length;
    for (let i = 0; i < 2; i++) {
      const report = await controller.reconcileOnce('periodic', signal);
      assert.deepEqual([...report.failureKinds], ['quota_exceeded']);
      // R119: what `plan` prints of the room, from the fake's table (once it is full).
      if (i > 0)
        assert.match(
          formatRoom(controller.routeTableRoom(), report.plan!),
          /^Route table room: route table k8s-routes in resource group k8s-rg holds 3 of its limit of 3 routes \(2 of this cluster, 1 others\): 0 left, 0 after this plan \(1 create\(s\) would be refused: /,
        );
    }
    const reqs = (await fake.requests()).slice(before);
    // The first reconcile's one PUT with the two routes that fit (and its polls); the lists' GETs;
    // nothing else: the room is read from the table each list fetched.
    assert.equal(reqs.filter((r) => r.method === 'PUT').length, 1);
    assert.deepEqual([...new Set(reqs.map((r) => r.api))].sort(), [
      'RouteTablesClient.BeginCreateOrUpdate',
      'RouteTablesClient.Get',
      'poll',
    ]);
    const table = await fake.table(TABLE);
    assert.deepEqual((table?.properties.routes ?? []).map((r) => r.properties.addressPrefix).sort(), [
      '10.244.1.0/24',
      '10.244.2.0/24',
      '192.168.0.0/16',
    ]);
    assert.deepEqual(
      [
        await gauge(registry, 'route_controller_route_table_routes', { owner: 'cluster' }),
        await gauge(registry, 'route_controller_route_table_routes', { owner: 'other' }),
        await gauge(registry, 'route_controller_route_table_route_limit'),
      ],
      [2, 1, 3],
    );
    const events = cluster.events.filter((e) => e.node.name === 'node3');
    assert.equal(events.length, 2);
    assert.match(
      events[1]!.message,
      /route table k8s-routes in resource group k8s-rg holds 3 routes, its limit is 3: no room for 10\.244\.3\.0\/24 \(node node3\); route table k8s-routes in resource group k8s-rg holds 3 of its limit of 3 routes \(2 of this cluster, 1 others\); no route of a live node is removed to make room: remove routes the table no longer needs/,
    );
    assert.deepEqual(
      cluster.events.filter((e) => e.node.name !== 'node3'),
      [],
      'the live nodes have their routes',
    );
  });

  test('the fake refuses a table beyond its own limit: every create of that PUT fails as quota_exceeded, no route is lost', async () => {
    await fake.reset();
    await fake.setMaxRoutes(2);
    await fake.putTable(SUB, RG, TABLE, {
      location: 'westeurope',
      properties: {
        routes: [
          {
            name: 'vpn',
            properties: { addressPrefix: '192.168.0.0/16', nextHopType: 'VirtualNetworkGateway' },
          },
        ],
      },
    });
    const cluster = new MemoryCluster();
    const ip = (a: string) => [{ type: 'InternalIP', address: a }];
    cluster.createNode({ name: 'node1', podCIDRs: ['10.244.1.0/24'], addresses: ip('10.0.0.1') });
    cluster.createNode({ name: 'node2', podCIDRs: ['10.244.2.0/24'], addresses: ip('10.0.0.2') });
    const client = createNetworkClient(
      {
        resourceManagerEndpoint: fake.endpoint,
        subscriptionId: SUB,
        tokenScope: 'https://management.azure.com/.default',
      },
      STATIC_TOKEN,
    );
    // The plug-in assumes Azure's 1,000; the fake allows 2, so its PUT is what refuses.
    const routes = new AzureRoutes(
      routeTableApi(client, { pollIntervalMs: 20 }),
      { resourceGroup: RG, routeTableName: TABLE, location: 'westeurope' },
      cluster,
    );
    const controller = new RouteController({
      routes,
      nodes: cluster,
      statusWriter: cluster,
      recorder: cluster,
      clusterName: 'k8s',
      clusterCIDRs: ['10.244.0.0/16'],
    });
    const report = await controller.reconcileOnce('periodic', new AbortController().signal);
    assert.deepEqual([...report.failureKinds], ['quota_exceeded']);
    assert.equal(report.failed, 2);
    const table = await fake.table(TABLE);
    assert.deepEqual(
      (table?.properties.routes ?? []).map((r) => r.properties.addressPrefix),
      ['192.168.0.0/16'],
    );
    assert.match(
      cluster.events[0]!.message,
      /RouteTableRouteLimitExceeded.*; route table k8s-routes in resource group k8s-rg holds 1 of its limit of 1000 routes/,
    );
  });
});
