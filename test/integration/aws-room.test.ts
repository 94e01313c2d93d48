// R115–R118 on the aws plug-in against moto_server: the route table's routes against the
// "Routes per route table" quota that moto's Service Quotas reports (the plug-in's own signed
// GetServiceQuota), read once per refresh, not per reconcile; the controller's gauges and
// view. moto does not refuse a route beyond the quota (its CreateRoute has no limit), so the
// refused create is tested on the memory, hcloud and gce fakes.
// Run: scripts/moto.sh && node --test test/integration/aws-room.test.ts
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { EC2Client } from '@aws-sdk/client-ec2';
import { Registry } from 'prom-client';
import { MemoryCluster } from '../../src/cluster/memory-cluster.ts';
import { RouteController } from '../../src/controller/route-controller.ts';
import { MemoryLogger } from '../../src/core/ports.ts';
import { EC2Client as PluginEc2Client } from '../../src/cloud/aws/ec2.ts';
import { AwsRoutes } from '../../src/cloud/aws/routes.ts';
import { RouteTableLimit } from '../../src/cloud/aws/room.ts';
import { httpFetch, type FetchLike } from '../../src/platform/http-fetch.ts';
import { createFixture, nodesFor, tableRoutes } from '../support/ec2-fixture.ts';
import { motoSkip, startMoto, type Moto } from '../support/moto.ts';

process.env.AWS_EC2_METADATA_DISABLED = 'true';
const CLUSTER = 'test-cluster';

async function gauge(registry: Registry, name: string, labels: Record<string, string> = {}): Promise<number> {
  const m = await registry.getSingleMetric(name)!.get();
  return m.values
    .filter((v) => Object.entries(labels).every(([k, val]) => v.labels[k] === val))
    .reduce((s, v) => s + v.value, 0);
}

describe('aws: the route table’s room against moto (R115–R118)', motoSkip(), () => {
  let moto: Moto;
  let ec2: EC2Client;
  let plugin: PluginEc2Client;
  before(async () => {
    moto = await startMoto();
    const config = {
      endpoint: moto.endpoint,
      region: 'us-east-1',
      credentials: { accessKeyId: 'testing', secretAccessKey: 'testing' },
      maxAttempts: 1,
    };
    ec2 = new EC2Client(config);
    plugin = new PluginEc2Client(config);
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
    const cluster = new MemoryCluster();
    for (const n of nodesFor(f))
      cluster.createNode({
        name: n.metadata!.name!,
        uid: n.metadata!.uid!,
        providerID: n.spec!.providerID!,
        podCIDRs: n.spec!.podCIDRs!,
        addresses: n.status!.addresses!,
      });
    const limit = new RouteTableLimit({ client: plugin, endpoint: moto.endpoint, fetch: counting });
    const registry = new Registry();
    const controller = new RouteController({
      routes: new AwsRoutes(plugin, {}, cluster, limit),
      nodes: cluster,
      statusWriter: cluster,
      recorder: cluster,
      logger: new MemoryLogger(),
      registry,
      clusterName: CLUSTER,
      clusterCIDRs: ['10.244.0.0/16'],
    });
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
});
