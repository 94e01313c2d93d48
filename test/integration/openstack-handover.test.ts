// Handover from openstack-cloud-controller-manager's route controller, and rollback to it, on
// the real neutron-server. Handover: the router holds the extra routes exactly as that CCM's
// pkg/openstack/routes.go CreateRoute writes them (destination = pod CIDR, nexthop = the
// node's InternalIP) with the pod CIDR in the node port's allowed_address_pairs, and the nodes
// carry the condition its route controller leaves; started with its cloud.conf ([Route]
// router-id) and its manifest's arguments, the controller makes no Neutron write and patches
// no condition. Rollback: that CCM's ListRoutes, mirrored (every router route; the node is the
// one whose address is the nexthop), finds each route written here with the right node, and
// the pod CIDR is allowed on that node's port as the CCM expects.
// Run: scripts/neutron.sh install && node --test test/integration/openstack-handover.test.ts
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { buildOpenStackProvider } from '../../src/cloud/openstack/index.ts';
import { MemoryCluster, type NodeSpecInput } from '../../src/cluster/memory-cluster.ts';
import { RealClock } from '../../src/core/clock.ts';
import { reconcileNow } from '../support/cluster-controller.ts';
import { addNode, ccmFlags, handoverController } from '../support/handover.ts';
import { globalSection, OpenStack, neutronSkip, type ExtraRoute } from '../support/openstack.ts';

const NODES = [1, 2, 3].map((i) => ({ name: `node-${i}`, ip: `10.0.0.1${i}`, podCIDR: `10.244.${i}.0/24` }));
// kubernetes/cloud-provider-openstack manifests/controller-manager/openstack-cloud-controller-manager-ds.yaml,
// with the cluster CIDR a routes setup adds.
const CCM_ARGS = [
  '--v=1',
  '--cluster-name=kubernetes',
  '--cloud-config=/etc/config/cloud.conf',
  '--cloud-provider=openstack',
  '--use-service-account-credentials=false',
  '--bind-address=127.0.0.1',
  '--cluster-cidr=10.244.0.0/16',
];

/** A node as the cluster holds it: its pod CIDR, its address the router's nexthop. */
function clusterNode(n: (typeof NODES)[number]): NodeSpecInput {
  return { name: n.name, podCIDRs: [n.podCIDR], addresses: [{ type: 'InternalIP', address: n.ip }] };
}

function cloudConf(os: OpenStack, routerId: string): string {
  return `${globalSection(os.authUrl)}\n[LoadBalancer]\nenabled = false\n\n[Route]\nrouter-id = ${routerId}\n`;
}

/** openstack-cloud-controller-manager's ListRoutes, mirrored: nexthop → the node with that address. */
function upstreamListRoutes(routes: readonly ExtraRoute[]): string[] {
  const byIP = new Map(NODES.map((n) => [n.ip, n.name]));
  return routes.map((r) => `${r.destination}>${byIP.get(r.nexthop) ?? r.nexthop}`).sort();
}

describe(
  'handover from and rollback to openstack-cloud-controller-manager, on Neutron',
  { ...neutronSkip(), timeout: 240_000 },
  () => {
    let os: OpenStack;
    let routerId = '';
    const ports = new Map<string, string>();

    before(async () => {
      os = await OpenStack.start();
      let networkId: string;
      ({ routerId, networkId } = await os.topology());
      for (const n of NODES) ports.set(n.name, await os.port(networkId, [n.ip]));
    });
    after(async () => {
      await os?.stop();
    });

    async function allowed(node: string): Promise<string[]> {
      const r = await os.neutron<{ port: { allowed_address_pairs: { ip_address: string }[] } }>(
        'GET',
        `/ports/${ports.get(node)}`,
      );
      return r.body.port.allowed_address_pairs.map((p) => p.ip_address).sort();
    }

    test('no Neutron write, no patch on handover; its ListRoutes finds the routes written here', async () => {
      const cluster = new MemoryCluster({ clock: new RealClock() });
      // As the CCM left two nodes: extra routes, and each pod CIDR allowed on the node's port.
      await os.setRoutes(
        routerId,
        NODES.slice(0, 2).map((n) => ({ destination: n.podCIDR, nexthop: n.ip })),
      );
      for (const n of NODES.slice(0, 2)) {
        const r = await os.neutron('PUT', `/ports/${ports.get(n.name)}`, {
          port: { allowed_address_pairs: [{ ip_address: n.podCIDR }] },
        });
        assert.equal(r.status, 200);
        addNode(cluster, clusterNode(n), true);
      }
      const provider = buildOpenStackProvider(cloudConf(os, routerId), cluster);
      const controller = handoverController(cluster, provider, ccmFlags(CCM_ARGS));
      const writesBefore = os.neutronRequests('PUT').length + os.neutronRequests('POST').length;

      const handover = await reconcileNow(controller);
      assert.equal(handover.outcome, 'noop', handover.error);
      assert.equal(os.neutronRequests('PUT').length + os.neutronRequests('POST').length, writesBefore);
      assert.deepEqual(cluster.patches, []);

      const n3 = NODES[2]!;
      addNode(cluster, clusterNode(n3), false);
      const grew = await reconcileNow(controller);
      assert.equal(grew.outcome, 'changed', grew.error);
      assert.deepEqual(
        upstreamListRoutes(await os.routes(routerId)),
        NODES.map((n) => `${n.podCIDR}>${n.name}`).sort(),
      );
      assert.deepEqual(await allowed(n3.name), [n3.podCIDR]);
    });
  },
);
