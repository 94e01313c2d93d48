/**
 * The product as an operator runs it on Google Cloud (test/support/gce-fake.ts: Google's MockGCE
 * served as the Compute Engine API, with a metadata server): the image, `helm install` with
 * docs/providers/gce.md's values (cloud-provider-gcp's gce.conf as the chart's cloud config,
 * Application Default Credentials), the chart's pods under podman, node IPAM and kwok. ADC finds
 * the fake's metadata server through GCE_METADATA_HOST (the pods here cannot reach
 * metadata.google.internal), as in test/integration/gce-daemon.test.ts.
 */
import { gceFakeSkip, startGceFake } from '../support/gce-fake.ts';
import { CLUSTER_CIDRS, describeCloud, portOf } from './clouds.ts';

const PROJECT = 'k8s-project';
const ZONE = 'europe-west1-b';
const NETWORK = 'k8s-net';
const nodes = [0, 1, 2].map((i) => ({
  name: `node-${i}`,
  providerID: `gce://${PROJECT}/${ZONE}/node-${i}`,
  ip: `10.0.0.${10 + i}`,
}));

describeCloud({
  cloud: 'gce',
  fakeSkip: gceFakeSkip,
  nodes,
  async start() {
    const fake = await startGceFake();
    await fake.addInstances(...nodes.map((n) => ({ project: PROJECT, zone: ZONE, name: n.name })));
    // gce.conf as kube-up and cloud-provider-gcp write it (docs/providers/gce.md, "Cloud config").
    const gceConf = [
      '[global]',
      `project-id = ${PROJECT}`,
      `network-name = ${NETWORK}`,
      'subnetwork-name = k8s-subnet',
      'node-tags = k8s-node',
      'multizone = true',
      `local-zone = ${ZONE}`,
      `api-endpoint = ${fake.api}`,
      '',
    ].join('\n');
    return {
      values: {
        provider: 'gce',
        clusterCIDRs: CLUSTER_CIDRS,
        cloudConfig: { content: gceConf },
        extraEnv: [{ name: 'GCE_METADATA_HOST', value: fake.endpoint.replace('http://', '') }],
      },
      hostPorts: [...new Set([portOf(fake.endpoint), portOf(fake.api)])],
      routes: async () =>
        (await fake.routes())
          .map((r) => `${r.destRange}>${r.nextHopInstance?.split('/').pop() ?? ''}`)
          .sort(),
      expected: (routed) => nodes.map((n) => `${routed.get(n.name)!.spec.podCIDRs![0]}>${n.name}`).sort(),
      stop: () => fake.stop(),
    };
  },
});
