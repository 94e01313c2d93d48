// Handover from hcloud-cloud-controller-manager's route controller, and rollback to it, on the
// hcloud API fake. Handover: the network holds the routes as that CCM writes them (destination
// = pod CIDR, gateway = the server's IP in the network) and the nodes the condition its route
// controller leaves; started with that CCM's environment (HCLOUD_NETWORK) and its deploy/
// ccm-networks.yaml arguments, the controller writes nothing. Rollback: that CCM's ListRoutes,
// mirrored (hcloud/routes.go at hetznercloud/hcloud-cloud-controller-manager main, 2026-07:
// every network route; its node is the server whose IP in the network is the gateway), finds
// each route the controller wrote with the right node.
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { CCM_ROUTED, counting } from '../../../test/support/handover.ts';
import { HcloudFake, type FakeRoute } from '../../../test/support/hcloud-fake.ts';
import { parseFlags } from '../../cli/flags.ts';
import { MemoryCluster } from '../../cluster/memory-cluster.ts';
import { RouteController } from '../../controller/route-controller.ts';
import { RealClock } from '../../core/clock.ts';
import { buildHcloudProvider } from './index.ts';

const NET = 7;
const SERVERS = [1, 2, 3].map((i) => ({ id: 100 + i, name: `node-${i}`, ip: `10.0.${i}.1` }));
// hetznercloud/hcloud-cloud-controller-manager deploy/ccm-networks.yaml.
const CCM_ARGS = [
  '--allow-untagged-cloud',
  '--cloud-provider=hcloud',
  '--feature-gates=CloudControllerManagerWatchBasedRoutesReconciliation=true',
  '--route-reconciliation-period=30s',
  '--webhook-secure-port=0',
  '--allocate-node-cidrs=true',
  '--cluster-cidr=10.244.0.0/16',
  '--leader-elect=false',
];

/** The hcloud CCM's ListRoutes, mirrored: destination → server name (the node), or blackhole. */
function upstreamListRoutes(routes: readonly FakeRoute[]): string[] {
  const byIP = new Map(SERVERS.map((s) => [s.ip, s.name]));
  return routes.map((r) => `${r.destination}>${byIP.get(r.gateway) ?? '(blackhole)'}`).sort();
}

describe('handover from and rollback to the hcloud CCM, on the hcloud fake', () => {
  test('no write and no condition patch on handover; the CCM finds our routes as its own', async (t) => {
    const fake = await HcloudFake.start();
    t.after(() => fake.close());
    fake.addNetwork({
      id: NET,
      name: 'k8s',
      ipRange: '10.0.0.0/16',
      // Written by the CCM for node-1 and node-2.
      routes: [
        { destination: '10.244.1.0/24', gateway: '10.0.1.1' },
        { destination: '10.244.2.0/24', gateway: '10.0.2.1' },
      ],
    });
    for (const s of SERVERS)
      fake.addServer({ id: s.id, name: s.name, privateNet: [{ network: NET, ip: s.ip }] });
    const cluster = new MemoryCluster({ clock: new RealClock() });
    for (const s of SERVERS.slice(0, 2)) {
      cluster.createNode({
        name: s.name,
        podCIDRs: [`10.244.${s.id - 100}.0/24`],
        providerID: `hcloud://${s.id}`,
        addresses: [{ type: 'InternalIP', address: s.ip }],
        conditions: [CCM_ROUTED],
      });
    }
    const parsed = parseFlags(CCM_ARGS);
    assert.deepEqual(parsed.errors, []);
    // The CCM's environment, shared: its routes switch (off, for the handover) is not read here.
    const provider = buildHcloudProvider('', cluster, {
      env: {
        HCLOUD_TOKEN: fake.token,
        HCLOUD_ENDPOINT: fake.endpoint,
        HCLOUD_NETWORK: String(NET),
        HCLOUD_NETWORK_ROUTES_ENABLED: 'false',
      },
      pollIntervalMs: 5,
    });
    const { routes, writes } = counting(provider.routes()!);
    const controller = new RouteController({
      routes,
      nodes: cluster,
      statusWriter: cluster,
      recorder: cluster,
      clusterName: parsed.flags.clusterName,
      clusterCIDRs: parsed.flags.clusterCIDRs,
    });

    const handover = await controller.reconcileOnce('periodic', new AbortController().signal);
    assert.equal(handover.outcome, 'noop', handover.error);
    assert.deepEqual(writes, []);
    assert.deepEqual(cluster.patches, []);
    assert.deepEqual(fake.mutations(), []);

    const s3 = SERVERS[2]!;
    cluster.createNode({
      name: s3.name,
      podCIDRs: ['10.244.3.0/24'],
      providerID: `hcloud://${s3.id}`,
      addresses: [{ type: 'InternalIP', address: s3.ip }],
    });
    const grew = await controller.reconcileOnce('periodic', new AbortController().signal);
    assert.equal(grew.outcome, 'changed', grew.error);
    assert.deepEqual(writes, ['create 10.244.3.0/24']);
    assert.deepEqual(upstreamListRoutes(fake.routes(NET)), [
      '10.244.1.0/24>node-1',
      '10.244.2.0/24>node-2',
      '10.244.3.0/24>node-3',
    ]);
  });
});
