/**
 * The product as an operator runs it, on Hetzner Cloud (the API fake of test/support): the image,
 * `helm install`, the chart's pods under podman, real node IPAM and kwok, both modes. Hetzner
 * networks route IPv4 only, so node IPAM here is single-stack.
 */
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { HcloudFake } from '../support/hcloud-fake.ts';
import { startCluster, type Cluster } from '../support/kwok-cluster.ts';
import { helmPath, NAMESPACE, RELEASE, Release } from './release.ts';
import { createObject, deleteNode, leader, registerNode, waitNodesRouted, waitUntil } from './scenario.ts';
import { deploySkip } from './skip.ts';

const SA_USER = `system:serviceaccount:${NAMESPACE}:${RELEASE}`;
const NETWORK = 7;

for (const watch of [true, false]) {
  const mode = watch ? 'watch mode' : 'periodic mode';
  describe(
    `hcloud, ${mode}: the chart's pods from the project's image`,
    { skip: deploySkip(helmPath(), false) },
    () => {
      let cluster: Cluster;
      let fake: HcloudFake;
      let release: Release;
      const names = ['node-0', 'node-1', 'node-2'];
      const routes = (): string[] =>
        fake
          .routes(NETWORK)
          .map((r) => `${r.destination}>${r.gateway}`)
          .sort();

      before(async () => {
        cluster = await startCluster({
          auditedUsers: [SA_USER],
          heartbeatMs: 10_000,
          clusterCIDRs: ['10.244.0.0/16'],
        });
        fake = await HcloudFake.start();
        fake.addNetwork({ id: NETWORK, name: 'k8s', ipRange: '10.0.0.0/8' });
        for (let i = 0; i < names.length; i++) {
          fake.addServer({
            id: 100 + i,
            name: names[i]!,
            privateNet: [{ network: NETWORK, ip: `10.0.0.${10 + i}` }],
          });
        }
        await createObject(cluster, `/api/v1/namespaces/${NAMESPACE}/secrets`, {
          apiVersion: 'v1',
          kind: 'Secret',
          metadata: { name: 'hcloud' },
          stringData: { HCLOUD_TOKEN: fake.token },
        });
        release = new Release(helmPath()!, cluster);
        release.hostPorts = [Number(new URL(fake.endpoint).port)];
        await release.install({
          provider: 'hcloud',
          clusterCIDRs: ['10.244.0.0/16'],
          watchBasedReconciliation: watch,
          cloudConfig: { content: `network: ${NETWORK}\nendpoint: ${fake.endpoint}\n` },
          envFrom: [{ secretRef: { name: 'hcloud' } }],
        });
      });
      after(async () => {
        await release?.stopPods();
        await fake?.close();
        await cluster?.stop();
      });

      test("the chart's defaults (R135): host network, the node's resolver, a secure port that is not the CCM's 10258", () => {
        const spec = release.manifest().deployment.spec.template.spec;
        assert.equal(spec.hostNetwork, true);
        assert.equal(spec.dnsPolicy, 'Default');
        const ports = spec.containers[0]!.ports ?? [];
        assert.deepEqual(
          ports.map((p) => p.containerPort),
          [10272],
        );
        assert.ok(spec.containers[0]!.args!.includes('--secure-port=10272'));
      });

      test('nodes register without pod CIDRs; IPAM assigns them; every node gets its route and NetworkUnavailable False', async () => {
        for (let i = 0; i < names.length; i++)
          await registerNode(cluster, names[i]!, `hcloud://${100 + i}`, `10.0.0.${10 + i}`);
        const routed = await waitNodesRouted(cluster, names, 1);
        const want = names.map((n, i) => `${routed.get(n)!.spec.podCIDRs![0]}>10.0.0.${10 + i}`).sort();
        await waitUntil('the network to route every pod CIDR to its server', 30_000, async () =>
          JSON.stringify(routes()) === JSON.stringify(want) ? true : routes().join(' '),
        );
        assert.ok(
          (await leader(cluster, release.current(), NAMESPACE, RELEASE)) !== undefined,
          'a pod holds the Lease',
        );
      });

      test('deleting a node removes its route and nothing else', async () => {
        const before = routes();
        await deleteNode(cluster, 'node-2');
        await waitUntil('node-2 route gone', 60_000, async () =>
          routes().some((r) => r.endsWith('>10.0.0.12')) ? routes().join(' ') : true,
        );
        assert.deepEqual(
          routes(),
          before.filter((r) => !r.endsWith('>10.0.0.12')),
        );
      });
    },
  );
}
