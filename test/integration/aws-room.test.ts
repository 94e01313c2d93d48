// R115–R118 on the aws plug-in against moto_server: the route table's routes against the
// "Routes per route table" quota that moto's Service Quotas reports (the plug-in's own signed
// GetServiceQuota), read once per refresh, not per reconcile; the controller's gauges and
// view; and a full table: moto run with EC2's quota enforced (testenv/moto/serve.py, which moto
// itself lacks) refuses the creates beyond it with RouteLimitExceeded, the Event names the limit
// and how to raise it, and no live node's route is removed to make room.
// Run: scripts/moto.sh && node --test test/integration/aws-room.test.ts
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { EC2Client } from '@aws-sdk/client-ec2';
import { Registry } from 'prom-client';
import { MemoryCluster } from '../../src/cluster/memory-cluster.ts';
import type { RouteController } from '../../src/controller/route-controller.ts';
import { MemoryLogger } from '../../src/core/ports.ts';
import { EC2Client as PluginEc2Client } from '../../src/cloud/aws/ec2.ts';
import { AwsRoutes } from '../../src/cloud/aws/routes.ts';
import { RouteTableLimit } from '../../src/cloud/aws/room.ts';
import { httpFetch, type FetchLike } from '../../src/platform/http-fetch.ts';
import { clusterController } from '../support/cluster-controller.ts';
import { createFixture, nodesFor, tableRoutes, type Ec2Fixture } from '../support/ec2-fixture.ts';
import { motoSkip, startMoto, type Moto } from '../support/moto.ts';
import { gauge } from '../support/room-gauges.ts';
import { formatRoom } from '../../src/cli/plan.ts';

process.env.AWS_EC2_METADATA_DISABLED = 'true';
const CLUSTER = 'test-cluster';

/** The SDK for the fixtures and the plug-in's own client, both on one moto, with no retries. */
function clients(moto: Moto): { ec2: EC2Client; plugin: PluginEc2Client } {
  const config = {
    endpoint: moto.endpoint,
    region: 'us-east-1',
    credentials: { accessKeyId: 'testing', secretAccessKey: 'testing' },
    maxAttempts: 1,
  };
  return { ec2: new EC2Client(config), plugin: new PluginEc2Client(config) };
}

/** The fixture's nodes, registered as the cloud node controller would. */
function clusterOf(f: Ec2Fixture): MemoryCluster {
  const cluster = new MemoryCluster();
  for (const n of nodesFor(f))
    cluster.createNode({
      name: n.metadata!.name!,
      uid: n.metadata!.uid!,
      providerID: n.spec!.providerID!,
      podCIDRs: n.spec!.podCIDRs!,
      addresses: n.status!.addresses!,
    });
  return cluster;
}

/** The controller on the plug-in with `limit`, its metrics in `registry`. */
function controllerOn(
  cluster: MemoryCluster,
  plugin: PluginEc2Client,
  limit: RouteTableLimit,
  registry: Registry,
): RouteController {
  return clusterController(cluster, {
    routes: new AwsRoutes(plugin, {}, cluster, limit),
    logger: new MemoryLogger(),
    registry,
    clusterName: CLUSTER,
    clusterCIDRs: ['10.244.0.0/16'],
  });
}

describe('aws: the route table’s room against moto (R115–R118)', motoSkip(), () => {
  let moto: Moto;
  let ec2: EC2Client;
  let plugin: PluginEc2Client;
  before(async () => {
    moto = await startMoto();
    ({ ec2, plugin } = clients(moto));
  });
  after(async () => {
    ec2?.destroy();
    plugin?.destroy();
    await moto?.stop();
  });

  test('Service Quotas’ limit, the table’s routes, one quota read for several listing reconciles', async () => {
    await moto.reset();
    const f = await createFixture(ec2, CLUSTER, 3);
    let quotaReads = 0;
    const base = httpFetch();
    const counting: FetchLike = (url, init) => {
      quotaReads++;
      return base(url, init);
    };
    const limit = new RouteTableLimit({ client: plugin, endpoint: moto.endpoint, fetch: counting });
    const registry = new Registry();
    const controller = controllerOn(clusterOf(f), plugin, limit, registry);
    const signal = new AbortController().signal;
    for (let i = 0; i < 3; i++) await controller.reconcileOnce('periodic', signal);
    assert.equal(quotaReads, 1, 'one GetServiceQuota for three listing reconciles');
    const inTable = (await tableRoutes(ec2, f.tableId)).length;
    const view = controller.routeTableRoom();
    assert.deepEqual(
      [view?.container, view?.limit, view?.used, view?.cluster],
      [`route table ${f.tableId}`, 50, inTable, 3],
    );
    assert.match(
      view!.raise,
      /Service Quotas, vpc L-93826ACB.*the limit is the quota Service Quotas reports$/,
    );
    assert.equal(await gauge(registry, 'route_controller_route_table_routes', { owner: 'cluster' }), 3);
    assert.equal(
      await gauge(registry, 'route_controller_route_table_routes', { owner: 'other' }),
      inTable - 3,
    );
    assert.equal(await gauge(registry, 'route_controller_route_table_route_limit'), 50);
  });

  test('routeTableLimit in the config wins and reads no quota', async () => {
    await moto.reset();
    const f = await createFixture(ec2, CLUSTER, 1);
    let quotaReads = 0;
    const limit = new RouteTableLimit({
      client: plugin,
      configured: 3,
      fetch: async () => {
        quotaReads++;
        throw new Error('not expected');
      },
    });
    const routes = new AwsRoutes(plugin, {}, { get: () => undefined, list: () => [] }, limit);
    const opts = { signal: new AbortController().signal, reconcile: { id: 'r', scratch: new Map() } };
    await routes.listRoutes(CLUSTER, opts);
    const room = await routes.routeTableRoom(CLUSTER, opts);
    assert.deepEqual(
      [room?.limit, room?.used, quotaReads],
      [3, (await tableRoutes(ec2, f.tableId)).length, 0],
    );
  });

  describe('a full table: moto refusing creates beyond the quota, as EC2 does', () => {
    const LIMIT = 6;
    let limited: Moto;
    let lec2: EC2Client;
    let lplugin: PluginEc2Client;
    before(async () => {
      limited = await startMoto({ routesPerTable: LIMIT });
      ({ ec2: lec2, plugin: lplugin } = clients(limited));
    });
    after(async () => {
      lec2?.destroy();
      lplugin?.destroy();
      await limited?.stop();
    });

    test('the refused nodes get an Event naming the limit; the routed ones keep their routes', async () => {
      const f = await createFixture(lec2, CLUSTER, 6);
      const before = (await tableRoutes(lec2, f.tableId)).length;
      const room = LIMIT - before;
      assert.ok(room > 0 && room < 6, `the table holds ${before} routes before the cluster's`);
      const cluster = clusterOf(f);
      const registry = new Registry();
      const controller = controllerOn(
        cluster,
        lplugin,
        new RouteTableLimit({ client: lplugin, configured: LIMIT }),
        registry,
      );
      const signal = new AbortController().signal;
      const routed: string[][] = [];
      for (let i = 0; i < 3; i++) {
        const report = await controller.reconcileOnce('periodic', signal);
        // R119: what `plan` prints of the room, from moto's table (once the table is full).
        if (i > 0)
          assert.match(
            formatRoom(controller.routeTableRoom(), report.plan!),
            new RegExp(
              `^Route table room: route table ${f.tableId} holds ${LIMIT} of its limit of ${LIMIT} routes .*: 0 left, 0 after this plan \\(${6 - room} create\\(s\\) would be refused: `,
            ),
          );
        routed.push((await tableRoutes(lec2, f.tableId)).map((r) => r.DestinationCidrBlock ?? '').sort());
      }
      assert.equal(routed[0]!.length, LIMIT, 'the table filled up to the quota');
      assert.deepEqual(routed[1], routed[0], 'nothing removed to make room');
      assert.deepEqual(routed[2], routed[0]);
      const refused = cluster.events.filter((e) => e.reason === 'FailedToCreateRoute');
      assert.ok(refused.length >= 6 - room, `${refused.length} refusals`);
      for (const e of refused) {
        assert.match(e.message, /RouteLimitExceeded/);
        assert.match(e.message, new RegExp(`holds ${LIMIT} of its limit of ${LIMIT} routes`));
        assert.match(e.message, /no route of a live node is removed to make room/);
      }
      assert.equal(await gauge(registry, 'route_controller_route_table_route_limit'), LIMIT);
      assert.equal(await gauge(registry, 'route_controller_route_table_routes', { owner: 'cluster' }), room);
    });
  });
});
