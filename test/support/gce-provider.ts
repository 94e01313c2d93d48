// The gce plug-in's provider-level integration tests share this: Google's MockGCE (testenv/gce-fake)
// started once per suite and reset before each test with the nodes' instances, the nodes, and a
// GceRoutes built from a gce.conf pointing at the fake (test/integration/gce.test.ts,
// gce-errors.test.ts).
import { after, before, beforeEach } from 'node:test';
import { errorKind } from '../../src/core/errors.ts';
import type { Node } from '../../src/core/types.ts';
import { ComputeClient, GceRoutes, parseGceCloudConfig } from '../../src/cloud/gce/index.ts';
import type { TokenSource } from '../../src/cloud/gce/index.ts';
import { startGceFake } from './gce-fake.ts';
import type { FakeRoute, GceFake } from './gce-fake.ts';
import { nodeLister } from './provider-calls.ts';

export const PROJECT = 'k8s-project';
export const ZONE = 'europe-west1-b';
export const NETWORK = 'k8s-net';
export const UID1 = '0b3a9c7e-1111-4d7e-9a57-0000000000a1';
export const UID10 = '0b3a9c7e-1111-4d7e-9a57-0000000000a2';
export const UIDDS = '0b3a9c7e-1111-4d7e-9a57-0000000000a3';
export const STATIC: TokenSource = async () => 'static-test-token';

export function node(name: string, uid: string, podCIDRs: string[], providerID?: string): Node {
  return {
    metadata: { name, uid },
    spec: { podCIDRs, ...(providerID !== undefined ? { providerID } : {}) },
    status: { addresses: [{ type: 'InternalIP', address: '10.0.0.1' }] },
  };
}

export const NODES = [
  node('node1', UID1, ['10.244.1.0/24'], `gce://${PROJECT}/${ZONE}/node1`),
  // Its instance is not named like the node: only the providerID finds it.
  node('node10', UID10, ['10.244.10.0/24'], `gce://${PROJECT}/${ZONE}/vm-node10`),
  node('ds', UIDDS, ['10.244.2.0/24', 'fd00:10:244:2::/64'], `gce://${PROJECT}/${ZONE}/ds`),
  node('byname', '0b3a9c7e-1111-4d7e-9a57-0000000000a4', ['10.244.4.0/24']),
];
export const INSTANCES = ['node1', 'vm-node10', 'ds', 'byname'].map((name) => ({
  project: PROJECT,
  zone: ZONE,
  name,
}));

/** name=dest>instance of every route in the fake, sorted. */
export function summary(routes: FakeRoute[]): string[] {
  return routes
    .map((r) => `${r.name}=${r.destRange}>${(r.nextHopInstance ?? r.nextHopIp ?? '').split('/').pop()}`)
    .sort();
}

export function gceConf(api: string, extra = ''): string {
  return `[global]\nproject-id = ${PROJECT}\nnetwork-name = ${NETWORK}\nnode-tags = k8s-node\napi-endpoint = ${api}\n${extra}`;
}

export async function kindOf(p: Promise<unknown>): Promise<string> {
  try {
    await p;
    return 'ok';
  } catch (err) {
    return errorKind(err);
  }
}

/** The suite's fake and provider; `routes` is rebuilt before each test, `localZone` cleared. */
export interface GceProviderFixture {
  fake: GceFake;
  routes: GceRoutes;
  localZone: string | undefined;
  build(nodes?: Node[]): GceRoutes;
}

/** Installs the suite's hooks (call inside a describe) and returns what its tests use. */
export function gceProviderFixture(): GceProviderFixture {
  const ctx = {
    localZone: undefined,
    build(nodes = NODES): GceRoutes {
      const zone = ctx.localZone ? `local-zone = ${ctx.localZone}\n` : '';
      const config = parseGceCloudConfig(gceConf(ctx.fake.api, zone));
      return new GceRoutes(
        new ComputeClient({ apiEndpoint: config.apiEndpoint, token: STATIC }),
        config,
        nodeLister(nodes),
      );
    },
  } as GceProviderFixture;
  before(async () => {
    ctx.fake = await startGceFake();
  });
  after(async () => {
    await ctx.fake?.stop();
  });
  beforeEach(async () => {
    await ctx.fake.reset();
    await ctx.fake.addInstances(...INSTANCES);
    ctx.localZone = undefined;
    ctx.routes = ctx.build();
  });
  return ctx;
}
