/**
 * The product as an operator runs it on OpenStack (the real neutron-server behind the Keystone
 * stand-in of test/support/openstack.ts, over HTTPS with a private CA): the image, `helm install`
 * with docs/providers/openstack.md's values (openstack-cloud-controller-manager's `cloud-config`
 * Secret mounted whole at /etc/config, its cloud.conf naming the CA file beside it), the chart's
 * pods under podman, node IPAM and kwok.
 */
import * as fs from 'node:fs';
import { CREDENTIALS, OpenStack, neutronSkip } from '../support/openstack.ts';
import { getPki } from '../support/pki.ts';
import { CLUSTER_CIDRS, describeCloud, portOf } from './clouds.ts';
import { NAMESPACE } from './release.ts';
import { createObject } from './scenario.ts';

const nodes = [0, 1, 2].map((i) => ({
  name: `node-${i}`,
  providerID: `openstack:///0000000${i}-aaaa-bbbb-cccc-dddddddddddd`,
  ip: `10.0.0.${10 + i}`,
}));

describeCloud({
  cloud: 'openstack',
  fakeSkip: neutronSkip,
  nodes,
  async start(cluster) {
    const pki = await getPki(); // a test CA and a 127.0.0.1 server certificate signed by it
    const cloud = await OpenStack.start({
      tls: {
        cert: fs.readFileSync(pki.apiserverCrt, 'utf8'),
        key: fs.readFileSync(pki.apiserverKey, 'utf8'),
      },
    });
    const { routerId, networkId } = await cloud.topology();
    for (const n of nodes) await cloud.port(networkId, [n.ip]);
    const c = CREDENTIALS;
    // cloud.conf as openstack-cloud-controller-manager reads it (docs/providers/openstack.md).
    const cloudConf = [
      '[Global]',
      `auth-url = ${cloud.authUrl}`,
      `username = ${c.username}`,
      `password = "${c.password.replace(/["\\]/g, (m) => `\\${m}`)}"`,
      `user-domain-name = ${c.domain}`,
      `tenant-id = ${c.projectId}`,
      'region = RegionOne',
      'ca-file = /etc/config/ca.crt',
      '',
      '[Route]',
      `router-id = ${routerId}`,
      '',
    ].join('\n');
    await createObject(cluster, `/api/v1/namespaces/${NAMESPACE}/secrets`, {
      apiVersion: 'v1',
      kind: 'Secret',
      metadata: { name: 'cloud-config' },
      stringData: { 'cloud.conf': cloudConf, 'ca.crt': fs.readFileSync(pki.caCrt, 'utf8') },
    });
    return {
      values: {
        provider: 'openstack',
        clusterCIDRs: CLUSTER_CIDRS,
        cloudConfig: {
          existingSecret: 'cloud-config',
          existingSecretKey: 'cloud.conf',
          existingSecretMountPath: '/etc/config',
        },
      },
      hostPorts: [portOf(cloud.authUrl)],
      routes: async () => (await cloud.routeList(routerId)).map((r) => r.replace('=', '>')).sort(),
      expected: (routed) => nodes.map((n) => `${routed.get(n.name)!.spec.podCIDRs![0]}>${n.ip}`).sort(),
      stop: () => cloud.stop(),
    };
  },
});
