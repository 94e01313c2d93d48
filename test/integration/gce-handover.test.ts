// Handover from cloud-provider-gcp's route controller, and rollback to it, against Google's
// MockGCE (testenv/gce-fake). Handover: the network holds the routes exactly as that CCM's
// providers/gce/gce_routes.go CreateRoute writes them (name `<cluster name cut to 26>-<node
// UID>`, description k8s-node-route, priority 1000, next hop the node's instance) and the nodes
// carry the condition its route controller leaves; started with its gce.conf and the command
// line of kubernetes' configure-helper.sh, the controller writes no route and patches no
// condition. Rollback: that CCM's ListRoutes, mirrored (routes of the network whose name has
// the cluster prefix and whose description is k8s-node-route; the node is the next-hop
// instance's name), lists each route the controller wrote, with the right node.
// Run: scripts/gce-fake.sh build && node --test test/integration/gce-handover.test.ts
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { parseFlags } from '../../src/cli/flags.ts';
import { buildGceProvider, type TokenSource } from '../../src/cloud/gce/index.ts';
import { MemoryCluster } from '../../src/cluster/memory-cluster.ts';
import { RouteController } from '../../src/controller/route-controller.ts';
import { RealClock } from '../../src/core/clock.ts';
import type { CallOptions, Route, Routes } from '../../src/core/types.ts';
import { gceFakeSkip, startGceFake, type FakeRoute, type GceFake } from '../support/gce-fake.ts';

const PROJECT = 'k8s-project';
const ZONE = 'europe-west1-b';
const NETWORK = 'k8s-net';
const STATIC: TokenSource = async () => 'static-test-token';
const NODES = [1, 2, 3].map((i) => ({
  name: `kubernetes-minion-${i}`,
  uid: `0b3a9c7e-2222-4d7e-9a57-00000000000${i}`,
  podCIDR: `10.64.${i}.0/24`,
}));
const ROUTED = {
  type: 'NetworkUnavailable',
  status: 'False',
  reason: 'RouteCreated',
  message: 'RouteController created a route',
  lastTransitionTime: new Date(0).toISOString(),
};
// kubernetes cluster/gce/gci/configure-helper.sh start-cloud-controller-manager (kubenet).
const CCM_ARGS = [
  '--v=4',
  '--cloud-config=/etc/gce.conf',
  '--secure-port=10258',
  '--use-service-account-credentials',
  '--cloud-provider=gce',
  '--concurrent-node-syncs=10',
  '--cluster-name=kubernetes',
  '--cluster-cidr=10.64.0.0/14',
  '--allocate-node-cidrs=true',
];

function counted(inner: Routes, writes: string[]): Routes {
  return {
    listRoutes: (c: string, o: CallOptions) => inner.listRoutes(c, o),
    createRoute: (c: string, h: string, r: Readonly<Route>, o: CallOptions) => {
      writes.push(`create ${r.destinationCIDR}`);
      return inner.createRoute(c, h, r, o);
    },
    deleteRoute: (c: string, r: Readonly<Route>, o: CallOptions) => {
      writes.push(`delete ${r.destinationCIDR}`);
      return inner.deleteRoute(c, r, o);
    },
  };
}

/** cloud-provider-gcp's ListRoutes, mirrored: its cluster's k8s-node-route routes, node = next-hop instance. */
function upstreamListRoutes(routes: readonly FakeRoute[], clusterName: string): string[] {
  const prefix = `${clusterName.slice(0, 26)}-`;
  return routes
    .filter((r) => r.name.startsWith(prefix) && r.description === 'k8s-node-route')
    .filter((r) => (r.network ?? '').endsWith(`/projects/${PROJECT}/global/networks/${NETWORK}`))
    .map((r) => `${r.name}=${r.destRange}>${(r.nextHopInstance ?? '').split('/').pop()}`)
    .sort();
}

describe(
  'handover from and rollback to cloud-provider-gcp, against MockGCE',
  { ...gceFakeSkip(), timeout: 120_000 },
  () => {
    let fake: GceFake;
    before(async () => {
      fake = await startGceFake();
      await fake.addInstances(...NODES.map((n) => ({ project: PROJECT, zone: ZONE, name: n.name })));
    });
    after(async () => {
      await fake?.stop();
    });

    test('no write, no patch on handover; its ListRoutes finds the routes written here', async () => {
      const network = `${fake.api}projects/${PROJECT}/global/networks/${NETWORK}`;
      const cluster = new MemoryCluster({ clock: new RealClock() });
      for (const n of NODES.slice(0, 2)) {
        await fake.insertRoute(PROJECT, {
          name: `kubernetes-${n.uid}`,
          destRange: n.podCIDR,
          network,
          nextHopInstance: `${fake.api}projects/${PROJECT}/zones/${ZONE}/instances/${n.name}`,
          priority: 1000,
          description: 'k8s-node-route',
        });
        cluster.createNode({
          name: n.name,
          uid: n.uid,
          podCIDRs: [n.podCIDR],
          providerID: `gce://${PROJECT}/${ZONE}/${n.name}`,
          addresses: [{ type: 'InternalIP', address: '10.128.0.2' }],
          conditions: [ROUTED],
        });
      }
      const parsed = parseFlags(CCM_ARGS);
      assert.deepEqual(parsed.errors, []);
      // The gce.conf kube-up writes, its API pointed at the fake.
      const conf = `[global]\nproject-id = ${PROJECT}\nnetwork-name = ${NETWORK}\nnode-tags = kubernetes-minion\nnode-instance-prefix = kubernetes-minion\nmultizone = true\napi-endpoint = ${fake.api}\n`;
      const provider = buildGceProvider(conf, cluster, { token: STATIC });
      const writes: string[] = [];
      const controller = new RouteController({
        routes: counted(provider.routes()!, writes),
        nodes: cluster,
        statusWriter: cluster,
        recorder: cluster,
        clusterName: parsed.flags.clusterName,
        clusterCIDRs: parsed.flags.clusterCIDRs,
        ...(provider.routeTargetKeys ? { routeTargetKeys: provider.routeTargetKeys } : {}),
      });

      const handover = await controller.reconcileOnce('periodic', new AbortController().signal);
      assert.equal(handover.outcome, 'noop', handover.error);
      assert.deepEqual(writes, []);
      assert.deepEqual(cluster.patches, []);

      const n3 = NODES[2]!;
      cluster.createNode({
        name: n3.name,
        uid: n3.uid,
        podCIDRs: [n3.podCIDR],
        providerID: `gce://${PROJECT}/${ZONE}/${n3.name}`,
        addresses: [{ type: 'InternalIP', address: '10.128.0.4' }],
      });
      const grew = await controller.reconcileOnce('periodic', new AbortController().signal);
      assert.equal(grew.outcome, 'changed', grew.error);
      assert.deepEqual(writes, [`create ${n3.podCIDR}`]);
      assert.deepEqual(
        upstreamListRoutes(await fake.routes(), 'kubernetes'),
        NODES.map((n) => `kubernetes-${n.uid}=${n.podCIDR}>${n.name}`).sort(),
      );
    });
  },
);
