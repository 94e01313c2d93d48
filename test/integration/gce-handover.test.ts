// Handover from cloud-provider-gcp's route controller, and rollback to it, against Google's
// MockGCE (testenv/gce-fake), with that CCM's own route code (k8s.io/cloud-provider-gcp/providers
// v0.28.2, built by scripts/gce-upstream.sh from testenv/gce-upstream) reading the same gce.conf
// the controller is given, and the fake as the metadata server both ask for the zone and for the
// token that authenticates gce.conf's token-url.
// Handover: upstream's CreateRoute writes the routes (name `<cluster name cut to 26>-<node UID>`,
// the UID being the name hint its route controller passes) and the nodes carry the condition its
// route controller leaves; the controller, started with that CCM's gce.conf and the command line
// of kubernetes' configure-helper.sh, writes no route and patches no condition. Rollback:
// upstream's ListRoutes reads back the route the controller wrote for a new node and finds it as
// its own, with the right target node.
// Run: scripts/gce-fake.sh build && scripts/gce-upstream.sh build &&
//      node --test test/integration/gce-handover.test.ts
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { after, before, describe, test } from 'node:test';
import { gceProviderFactory } from '../../src/cloud/gce/index.ts';
import { MemoryCluster } from '../../src/cluster/memory-cluster.ts';
import type { RouteController } from '../../src/controller/route-controller.ts';
import { RealClock } from '../../src/core/clock.ts';
import { reconcileNow } from '../support/cluster-controller.ts';
import { gceFakeSkip, startGceFake, type FakeRoute, type GceFake } from '../support/gce-fake.ts';
import { gceUpstream, gceUpstreamSkip } from '../support/gce-upstream.ts';
import { addNode, ccmFlags, counting, handoverController } from '../support/handover.ts';
import { upstreamCreate, upstreamList } from '../support/upstream-binary.ts';

const PROJECT = 'k8s-project';
// The zone the fake's metadata server reports; gce.conf names none, as kube-up's does not.
const ZONE = 'europe-west1-b';
const NETWORK = 'k8s-net';
const CLUSTER = 'kubernetes';
const NODES = [1, 2, 3].map((i) => ({
  name: `kubernetes-minion-${i}`,
  uid: `0b3a9c7e-2222-4d7e-9a57-00000000000${i}`,
  podCIDR: `10.64.${i}.0/24`,
}));
// kubernetes cluster/gce/gci/configure-helper.sh start-cloud-controller-manager (kubenet).
const CCM_ARGS = [
  '--v=4',
  '--cloud-config=/etc/gce.conf',
  '--secure-port=10258',
  '--use-service-account-credentials',
  '--cloud-provider=gce',
  '--concurrent-node-syncs=10',
  `--cluster-name=${CLUSTER}`,
  '--cluster-cidr=10.64.0.0/14',
  '--allocate-node-cidrs=true',
];
const ENV_KEYS = ['GOOGLE_APPLICATION_CREDENTIALS', 'CLOUDSDK_CONFIG', 'GCE_METADATA_HOST'] as const;

let fake: GceFake;
let metadataHost: string;
let gcloudDir: string;
let savedEnv: (string | undefined)[];

/** The gce.conf kube-up writes (no local-zone), its API and token-url pointed at the fake. */
function gceConf(): string {
  return (
    `[global]\nproject-id = ${PROJECT}\nnetwork-name = ${NETWORK}\nnode-tags = kubernetes-minion\n` +
    `node-instance-prefix = kubernetes-minion\nmultizone = true\napi-endpoint = ${fake.api}\n` +
    `token-url = ${fake.endpoint}/alt-token\ntoken-body = "{\\"scope\\": \\"compute\\"}"\n`
  );
}

function addMinion(cluster: MemoryCluster, n: (typeof NODES)[number], routed: boolean): void {
  addNode(
    cluster,
    {
      name: n.name,
      uid: n.uid,
      podCIDRs: [n.podCIDR],
      providerID: `gce://${PROJECT}/${ZONE}/${n.name}`,
      addresses: [{ type: 'InternalIP', address: `10.128.0.${NODES.indexOf(n) + 2}` }],
    },
    routed,
  );
}

/** Upstream's ListRoutes, as `name=destination>target node`. */
async function upstreamSees(): Promise<string[]> {
  const routes = await upstreamList(gceUpstream(gceConf(), metadataHost), CLUSTER);
  return routes.map((r) => `${r.name}=${r.destinationCIDR}>${r.blackhole ? '(blackhole)' : r.targetNode}`);
}

function expected(nodes: readonly (typeof NODES)[number][]): string[] {
  return nodes.map((n) => `${CLUSTER}-${n.uid}=${n.podCIDR}>${n.name}`);
}

/** The stored routes, minus what the API stamps on each (id, creation time). */
function stored(routes: readonly FakeRoute[]): string[] {
  return routes
    .map((r) => `${r.name} ${r.destRange} ${r.network} ${r.nextHopInstance} ${r.priority} ${r.description}`)
    .sort();
}

const skip = gceFakeSkip().skip || gceUpstreamSkip().skip;

describe(
  'handover from and rollback to cloud-provider-gcp, against MockGCE',
  { skip, timeout: 180_000 },
  () => {
    const cluster = new MemoryCluster({ clock: new RealClock() });
    let controller: RouteController;
    let writes: string[];

    before(async () => {
      fake = await startGceFake();
      metadataHost = fake.endpoint.replace('http://', '');
      // Every Compute call must carry a token the fake issued: both sides authenticate for real.
      await fake.configure({ requireIssuedTokens: true });
      await fake.addInstances(...NODES.map((n) => ({ project: PROJECT, zone: ZONE, name: n.name })));
      // The daemon's Application Default Credentials find no key file (an empty gcloud config) and
      // ask the metadata server, as on a GCE instance.
      savedEnv = ENV_KEYS.map((k) => process.env[k]);
      gcloudDir = mkdtempSync(path.join(os.tmpdir(), 'gce-handover-'));
      delete process.env['GOOGLE_APPLICATION_CREDENTIALS'];
      process.env['CLOUDSDK_CONFIG'] = gcloudDir;
      process.env['GCE_METADATA_HOST'] = metadataHost;
      // Two nodes the CCM routed, each with upstream's own CreateRoute (name hint: the node's UID).
      for (const n of NODES.slice(0, 2)) {
        addMinion(cluster, n, true);
        await upstreamCreate(gceUpstream(gceConf(), metadataHost), CLUSTER, {
          nameHint: n.uid,
          node: n.name,
          cidr: n.podCIDR,
        });
      }
      const flags = ccmFlags(CCM_ARGS);
      assert.equal(flags.routesEnabled, true);
      const provider = await gceProviderFactory(gceConf(), cluster);
      const counted = counting(provider.routes()!);
      writes = counted.writes;
      controller = handoverController(cluster, provider, flags, counted.routes);
    });
    after(async () => {
      ENV_KEYS.forEach((k, i) => {
        if (savedEnv?.[i] === undefined) delete process.env[k];
        else process.env[k] = savedEnv[i];
      });
      if (gcloudDir) rmSync(gcloudDir, { recursive: true, force: true });
      await fake?.stop();
    });

    test('handover: the CCM-written routes and conditions need no route write and no condition patch', async () => {
      const before = await fake.routes();
      // What upstream's CreateRoute left: one route per node, to its instance, tagged as its own.
      const network = `${fake.api}projects/${PROJECT}/global/networks/${NETWORK}`;
      const instance = (name: string): string =>
        `https://www.googleapis.com/compute/v1/projects/${PROJECT}/zones/${ZONE}/instances/${name}`;
      assert.deepEqual(
        stored(before),
        NODES.slice(0, 2).map(
          (n) => `${CLUSTER}-${n.uid} ${n.podCIDR} ${network} ${instance(n.name)} 1000 k8s-node-route`,
        ),
      );
      assert.deepEqual(await upstreamSees(), expected(NODES.slice(0, 2)));

      const report = await reconcileNow(controller);
      assert.equal(report.outcome, 'noop', report.error);
      assert.deepEqual(writes, []);
      assert.deepEqual(cluster.patches, []);
      assert.deepEqual(stored(await fake.routes()), stored(before));
    });

    test('rollback: the CCM lists the route written here as its own, with the right node', async () => {
      addMinion(cluster, NODES[2]!, false);
      const report = await reconcileNow(controller);
      assert.equal(report.outcome, 'changed', report.error);
      assert.deepEqual(writes, [`create ${NODES[2]!.podCIDR}`]);
      // Upstream's route controller would find every node's route under the name and node it
      // expects, so it would create and delete nothing.
      assert.deepEqual(await upstreamSees(), expected(NODES));
      const log = await fake.requests();
      assert.deepEqual(
        log.filter((e) => e.status === 401),
        [],
        'every Compute call carried a token the fake issued',
      );
    });
  },
);
