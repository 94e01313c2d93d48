// R115–R118 on the azure plug-in against Microsoft's fake servers (testenv/azure-fake) with
// routeTableRouteLimit 3: the table's routes in the controller's gauges, read from the table
// listRoutes fetched (no request of its own); a create the table has no room for refused alone
// before the one PUT, with an Event naming the limit; no live node's route removed.
// Run: scripts/azure-fake.sh build && node --test test/integration/azure-room.test.ts
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { Registry } from 'prom-client';
import { MemoryCluster } from '../../src/cluster/memory-cluster.ts';
import { MemoryLogger } from '../../src/core/ports.ts';
import type { AzureRoutesConfig } from '../../src/cloud/azure/index.ts';
import { azureFakeSkip, startAzureFake } from '../support/azure-fake.ts';
import type { AzureFake } from '../support/azure-fake.ts';
import { azureRoutesOn } from '../support/azure-plugin.ts';
import { clusterController, reconcileNow } from '../support/cluster-controller.ts';
import { roomGauges } from '../support/room-gauges.ts';
import { formatRoom } from '../../src/cli/plan.ts';

const SUB = '00000000-0000-0000-0000-0000000000a1';
const RG = 'k8s-rg';
const TABLE = 'k8s-routes';
const TABLE_CONFIG: AzureRoutesConfig = { resourceGroup: RG, routeTableName: TABLE, location: 'westeurope' };

/** The table with another user's route in it, and a cluster of `count` nodes, node1 to nodeN. */
async function seed(fake: AzureFake, count: number): Promise<MemoryCluster> {
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
  for (let i = 1; i <= count; i++)
    cluster.createNode({
      name: `node${i}`,
      podCIDRs: [`10.244.${i}.0/24`],
      addresses: [{ type: 'InternalIP', address: `10.0.0.${i}` }],
    });
  return cluster;
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
    const cluster = await seed(fake, 3);
    const routes = azureRoutesOn(fake, SUB, { ...TABLE_CONFIG, routeLimit: 3 }, cluster);
    const registry = new Registry();
    const controller = clusterController(cluster, {
      routes,
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
    assert.deepEqual(await roomGauges(registry), [2, 1, 3]);
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
    const cluster = await seed(fake, 2);
    // The plug-in assumes Azure's 1,000; the fake allows 2, so its PUT is what refuses.
    const controller = clusterController(cluster, {
      routes: azureRoutesOn(fake, SUB, TABLE_CONFIG, cluster),
      clusterName: 'k8s',
      clusterCIDRs: ['10.244.0.0/16'],
    });
    const report = await reconcileNow(controller);
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
