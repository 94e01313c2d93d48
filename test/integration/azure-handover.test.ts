// Handover from cloud-provider-azure's route controller, and rollback to it, against
// Microsoft's armnetwork fake (testenv/azure-fake). Handover: the route table holds the routes
// exactly as that CCM's pkg/provider/azure_routes.go writes them (main, 2026-07: ipv6DualStack-
// Enabled is always true, so every route is named `<node>____<cidr without ':' '.' '/'>`;
// VirtualAppliance next hop = the node's InternalIP) and the nodes carry the condition its
// route controller leaves; started with its azure.json and the arguments of its
// examples/out-of-tree/cloud-controller-manager.yaml, the controller makes no ARM write and
// patches no condition. Rollback: that CCM's listing, mirrored (a route's node is its name up
// to `____`), finds each route written here with the right node; its cleanupOutdatedRoutes,
// mirrored, would replace the one this plug-in named `<node>` (a one-family node): the hazard
// `plan` reports (SPEC R124).
// Run: scripts/azure-fake.sh build && node --test test/integration/azure-handover.test.ts
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { buildAzureProvider, type AzureCredential } from '../../src/cloud/azure/index.ts';
import { MemoryCluster } from '../../src/cluster/memory-cluster.ts';
import { RealClock } from '../../src/core/clock.ts';
import { azureFakeSkip, startAzureFake, type AzureFake, type FakeRoute } from '../support/azure-fake.ts';
import { reconcileNow } from '../support/cluster-controller.ts';
import { addNode, ccmFlags, handoverController } from '../support/handover.ts';

const SUB = '00000000-0000-0000-0000-0000000000b2';
const RG = 'k8s-rg';
const TABLE = 'k8s-routes';
const STATIC_TOKEN: AzureCredential = {
  getToken: async () => ({ token: 'static-test-token', expiresOnTimestamp: Date.now() + 3_600_000 }),
};
const NODES = [1, 2, 3].map((i) => ({
  name: `k8s-agent-${i}`,
  ip: `10.240.0.${i + 3}`,
  podCIDR: `10.244.${i}.0/24`,
}));
// kubernetes-sigs/cloud-provider-azure examples/out-of-tree/cloud-controller-manager.yaml.
const CCM_ARGS = [
  '--allocate-node-cidrs=true',
  '--cloud-config=/etc/kubernetes/cloud-config/azure.json',
  '--cloud-provider=azure',
  '--cluster-cidr=10.244.0.0/16',
  '--cluster-name=k8s',
  '--controllers=*,-cloud-node',
  '--configure-cloud-routes=true',
  '--leader-elect=true',
  '--route-reconciliation-period=10s',
  '--v=4',
  '--secure-port=10267',
];

function ccmRoute(n: (typeof NODES)[number]): FakeRoute {
  return {
    name: `${n.name}____${n.podCIDR.replace(/[:./]/g, '')}`,
    properties: { addressPrefix: n.podCIDR, nextHopType: 'VirtualAppliance', nextHopIpAddress: n.ip },
  };
}

/** cloud-provider-azure's processRoutes, mirrored: a route's node is its name up to `____`. */
function upstreamListRoutes(routes: readonly FakeRoute[] | undefined): string[] {
  return (routes ?? []).map((r) => `${r.properties.addressPrefix}>${r.name.split('____')[0]}`).sort();
}

/** Its cleanupOutdatedRoutes, mirrored: routes of known nodes named without `____` go. */
function upstreamOutdated(routes: readonly FakeRoute[] | undefined): string[] {
  const known = new Set(NODES.map((n) => n.name));
  return (routes ?? []).filter((r) => known.has(r.name) && !r.name.includes('____')).map((r) => r.name);
}

describe(
  'handover from and rollback to cloud-provider-azure, against the armnetwork fake',
  { ...azureFakeSkip(), timeout: 120_000 },
  () => {
    let fake: AzureFake;
    before(async () => {
      fake = await startAzureFake();
    });
    after(async () => {
      await fake?.stop();
    });

    test('no ARM write, no patch on handover; its listing finds the routes written here', async () => {
      await fake.putTable(SUB, RG, TABLE, {
        location: 'westeurope',
        properties: { routes: NODES.slice(0, 2).map(ccmRoute) },
      });
      const cluster = new MemoryCluster({ clock: new RealClock() });
      for (const n of NODES.slice(0, 2)) {
        addNode(
          cluster,
          {
            name: n.name,
            podCIDRs: [n.podCIDR],
            providerID: `azure:///subscriptions/${SUB}/resourceGroups/${RG}/providers/Microsoft.Compute/virtualMachines/${n.name}`,
            addresses: [{ type: 'InternalIP', address: n.ip }],
          },
          true,
        );
      }
      const flags = ccmFlags(CCM_ARGS);
      // azure.json as AKS-engine/CAPZ write it (keys this plug-in does not use included).
      const azureJson = JSON.stringify({
        cloud: 'AzurePublicCloud',
        tenantId: '00000000-0000-0000-0000-0000000000c3',
        subscriptionId: SUB,
        resourceGroup: RG,
        location: 'westeurope',
        vmType: 'standard',
        subnetName: 'k8s-subnet',
        securityGroupName: 'k8s-nsg',
        vnetName: 'k8s-vnet',
        routeTableName: TABLE,
        loadBalancerSku: 'standard',
        useManagedIdentityExtension: true,
        useInstanceMetadata: true,
        resourceManagerEndpoint: fake.endpoint,
      });
      const provider = await buildAzureProvider(azureJson, cluster, { env: {}, credential: STATIC_TOKEN });
      const controller = handoverController(cluster, provider, flags);
      const writes = async (): Promise<number> =>
        (await fake.requests()).filter((r) => r.method === 'PUT' || r.method === 'DELETE').length;
      const before = await writes();

      const handover = await reconcileNow(controller);
      assert.equal(handover.outcome, 'noop', handover.error);
      assert.equal(await writes(), before);
      assert.deepEqual(cluster.patches, []);

      const n3 = NODES[2]!;
      addNode(
        cluster,
        { name: n3.name, podCIDRs: [n3.podCIDR], addresses: [{ type: 'InternalIP', address: n3.ip }] },
        false,
      );
      const grew = await reconcileNow(controller);
      assert.equal(grew.outcome, 'changed', grew.error);
      const table = await fake.table(TABLE);
      assert.deepEqual(
        upstreamListRoutes(table?.properties.routes),
        NODES.map((n) => `${n.podCIDR}>${n.name}`).sort(),
      );
      const added = table?.properties.routes?.find((r) => r.name === n3.name);
      assert.deepEqual(added?.properties.nextHopType, 'VirtualAppliance');
      assert.deepEqual(added?.properties.nextHopIpAddress, n3.ip);
      // The hazard: the CCM keeps the routes it named, and would replace the one named `<node>` once.
      assert.deepEqual(upstreamOutdated(table?.properties.routes), [n3.name]);
      assert.equal(provider.rollbackHazards?.(flags.clusterCIDRs).length, 1);
    });
  },
);
