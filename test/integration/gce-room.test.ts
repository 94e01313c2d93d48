// R115–R118 on the gce plug-in against Google's MockGCE (testenv/gce-fake) with a low ROUTES
// quota: projects.get's quota in the controller's gauges and view, read once per refresh and
// not per reconcile; an insert beyond it refused (operation QUOTA_EXCEEDED) with an Event that
// names the limit and how to raise it; no live node's route removed.
// Run: scripts/gce-fake.sh build && node --test test/integration/gce-room.test.ts
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { Registry } from 'prom-client';
import { MemoryCluster } from '../../src/cluster/memory-cluster.ts';
import { MemoryLogger } from '../../src/core/ports.ts';
import { ComputeClient, GceRoutes, parseGceCloudConfig } from '../../src/cloud/gce/index.ts';
import { QUOTA_REFRESH_MS } from '../../src/cloud/gce/room.ts';
import { clusterController } from '../support/cluster-controller.ts';
import { gceFakeSkip, startGceFake } from '../support/gce-fake.ts';
import type { GceFake } from '../support/gce-fake.ts';
import { gauge, roomGauges } from '../support/room-gauges.ts';
import { formatRoom } from '../../src/cli/plan.ts';

const PROJECT = 'k8s-project';
const ZONE = 'europe-west1-b';

describe('gce: the project’s ROUTES quota (R115–R118)', { ...gceFakeSkip(), timeout: 120_000 }, () => {
  let fake: GceFake;
  before(async () => {
    fake = await startGceFake();
  });
  after(async () => {
    await fake?.stop();
  });

  test('a full quota: gauges, one projects.get per refresh, an Event naming the limit, nothing removed', async () => {
    await fake.configure({ opPolls: 0, routesQuota: 3 });
    await fake.addInstances(...['a', 'b', 'c'].map((name) => ({ project: PROJECT, zone: ZONE, name })));
    // Another network's route in the same project counts against the same quota.
    await fake.insertRoute(PROJECT, {
      name: 'other-net-route',
      destRange: '192.168.0.0/24',
      network: `https://www.googleapis.com/compute/v1/projects/${PROJECT}/global/networks/other`,
      nextHopIp: '10.1.0.5',
      priority: 1000,
    });
    const config = parseGceCloudConfig(
      `[global]\nproject-id = ${PROJECT}\nnetwork-name = k8s-net\napi-endpoint = ${fake.api}\n`,
    );
    const cluster = new MemoryCluster();
    let now = Date.now();
    const routes = new GceRoutes(
      new ComputeClient({ apiEndpoint: config.apiEndpoint, token: async () => 'static-test-token' }),
      config,
      cluster,
      () => now,
    );
    const registry = new Registry();
    const controller = clusterController(cluster, {
      routes,
      logger: new MemoryLogger(),
      registry,
      clusterName: 'k8s',
      clusterCIDRs: ['10.244.0.0/16'],
    });
    const node = (name: string, cidr: string): void =>
      void cluster.createNode({
        name,
        uid: `0b3a9c7e-1111-4d7e-9a57-00000000000${name === 'a' ? 1 : name === 'b' ? 2 : 3}`,
        providerID: `gce://${PROJECT}/${ZONE}/${name}`,
        podCIDRs: [cidr],
      });
    node('a', '10.244.1.0/24');
    node('b', '10.244.2.0/24');
    const signal = new AbortController().signal;
    assert.equal((await controller.reconcileOnce('periodic', signal)).outcome, 'changed');
    // The quota was read before the creates (usage 1); the controller counted its two routes since.
    assert.deepEqual(await roomGauges(registry), [2, 1, 3]);

    node('c', '10.244.3.0/24');
    for (let i = 0; i < 3; i++) {
      const report = await controller.reconcileOnce('periodic', signal);
      assert.deepEqual([...report.failureKinds], ['quota_exceeded']);
      // R119: what `plan` prints of the room, from the fake's quota.
      assert.match(
        formatRoom(controller.routeTableRoom(), report.plan!),
        /^Route table room: project k8s-project \(ROUTES quota\) holds 3 of its limit of 3 routes \(2 of this cluster, 1 others\): 0 left, 0 after this plan \(1 create\(s\) would be refused: /,
      );
    }
    const reqs = await fake.requests();
    assert.equal(
      reqs.filter((r) => r.api === 'projects.get').length,
      1,
      'one quota read for four reconciles',
    );
    assert.equal(reqs.filter((r) => r.api === 'routes.list').length, 4);
    assert.equal(reqs.filter((r) => r.api === 'routes.delete').length, 0, 'no route removed to make room');
    assert.deepEqual((await fake.routes()).map((r) => r.destRange).sort(), [
      '10.244.1.0/24',
      '10.244.2.0/24',
      '192.168.0.0/24',
    ]);
    const events = cluster.events.filter((e) => e.node.name === 'c');
    assert.equal(events.length, 3);
    assert.match(
      events[0]!.message,
      /QUOTA_EXCEEDED.*; project k8s-project \(ROUTES quota\) holds 3 of its limit of 3 routes \(2 of this cluster, 1 others\); no route of a live node is removed to make room: request a higher Compute Engine ROUTES quota for project k8s-project/,
    );
    assert.equal(controller.routeTableRoom()?.left, 0);

    // Past the refresh the quota is read again: raised to 4, the waiting node gets its route.
    await fake.configure({ routesQuota: 4 });
    now += QUOTA_REFRESH_MS;
    const report = await controller.reconcileOnce('periodic', signal);
    assert.equal(report.outcome, 'changed');
    assert.equal((await fake.requests()).filter((r) => r.api === 'projects.get').length, 2);
    assert.equal(await gauge(registry, 'route_controller_route_table_route_limit'), 4);
    assert.equal(controller.routeTableRoom()?.left, 0);
  });
});
