/**
 * One deploy scenario for the clouds whose chart values are a cloud config file and credentials
 * (azure, gce, openstack): the cloud's fake started as the integration tests start it, the chart
 * installed with that cloud's values as docs/providers/<cloud>.md tells an operator to write them
 * (everything else the chart's defaults: host network, dnsPolicy Default, port 10272), nodes
 * registered as kubelets register them and given pod CIDRs by kube-controller-manager's node IPAM,
 * kwok's node agents. Watch mode only (aws and hcloud run both modes through the same chart).
 */
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { startCluster, type Cluster } from '../support/kwok-cluster.ts';
import { accesses, allows, grants } from './audit.ts';
import { helmPath, NAMESPACE, RELEASE, Release, type Manifest } from './release.ts';
import { leader, registerNode, waitNodesRouted, waitUntil, type KubeNode } from './scenario.ts';
import { deploySkip } from './skip.ts';

export const SA_USER = `system:serviceaccount:${NAMESPACE}:${RELEASE}`;
/** Single-stack: these clouds' next hops are node addresses, and a kwok node here has one. */
export const CLUSTER_CIDRS = ['10.244.0.0/16'];

export interface NodeSpec {
  readonly name: string;
  readonly providerID: string;
  readonly ip: string;
}

/** A running cloud fake and the chart values that point the daemon at it. */
export interface CloudEnv {
  readonly values: Record<string, unknown>;
  /** Loopback ports of the host the pods reach (the fake). */
  readonly hostPorts: number[];
  /** The cloud's routes in the cluster CIDRs as `destination>target`, sorted. */
  routes(): Promise<string[]>;
  /** What routes() must show once every node is routed. */
  expected(nodes: ReadonlyMap<string, KubeNode>): string[];
  stop(): Promise<void>;
}

export interface CloudCase {
  readonly cloud: string;
  /** The fake's own skip (a failure with CI=true), as its integration tests use it. */
  readonly fakeSkip: () => { skip: string | false };
  readonly nodes: readonly NodeSpec[];
  /** Starts the fake and creates what the operator creates first (Secrets); returns the values. */
  start(cluster: Cluster): Promise<CloudEnv>;
}

export const portOf = (url: string): number => Number(new URL(url).port);

/** The chart's own RBAC (and system:auth-delegator, which it binds) covers every request. */
function checkAudit(cluster: Cluster, manifest: Manifest): void {
  const log = accesses(cluster.auditLog, SA_USER);
  assert.ok(log.length > 0, 'the audit log recorded the ServiceAccount');
  assert.deepEqual(
    log.filter((a) => a.code === 403),
    [],
    'requests the chart does not grant',
  );
  const gs = grants(
    manifest.objects,
    { namespace: NAMESPACE, name: RELEASE },
    {
      'system:auth-delegator': [
        { apiGroups: ['authentication.k8s.io'], resources: ['tokenreviews'], verbs: ['create'] },
        { apiGroups: ['authorization.k8s.io'], resources: ['subjectaccessreviews'], verbs: ['create'] },
      ],
    },
  );
  const ungranted = log.filter((a) => !gs.some((g) => allows(g, a)));
  assert.deepEqual([...new Set(ungranted.map((a) => `${a.verb} ${a.apiGroup}/${a.resource}`))], []);
}

export function describeCloud(c: CloudCase): void {
  describe(
    `${c.cloud}, watch mode: the chart's pods from the project's image, the cloud's documented values`,
    { skip: deploySkip(helmPath(), false) || c.fakeSkip().skip },
    () => {
      let cluster: Cluster;
      let env: CloudEnv | undefined;
      let release: Release;
      let manifest: Manifest;
      const names = c.nodes.map((n) => n.name);

      before(async () => {
        cluster = await startCluster({
          auditedUsers: [SA_USER],
          heartbeatMs: 10_000,
          clusterCIDRs: CLUSTER_CIDRS,
        });
        env = await c.start(cluster);
        release = new Release(helmPath()!, cluster);
        release.hostPorts = env.hostPorts;
        manifest = await release.install(env.values);
      });
      after(async () => {
        await release?.stopPods();
        await env?.stop();
        await cluster?.stop();
      });

      test('nodes register without pod CIDRs; IPAM assigns them; every node gets its route and NetworkUnavailable False', async () => {
        const spec = manifest.deployment.spec.template.spec;
        assert.equal(spec.hostNetwork, true, "the chart's default");
        assert.equal(spec.dnsPolicy, 'Default', "the chart's default");
        for (const n of c.nodes) await registerNode(cluster, n.name, n.providerID, n.ip);
        const routed = await waitNodesRouted(cluster, names, 1, 120_000);
        const want = env!.expected(routed);
        assert.equal(want.length, names.length);
        await waitUntil(`the ${c.cloud} routes of every node`, 30_000, async () => {
          const have = await env!.routes();
          return JSON.stringify(have) === JSON.stringify(want) ? true : have.join(' ');
        });
        assert.ok(
          (await leader(cluster, release.current(), NAMESPACE, RELEASE)) !== undefined,
          'a pod holds the Lease',
        );
      });

      test('every request of the pods is one the chart grants (audit log)', () => {
        checkAudit(cluster, manifest);
      });
    },
  );
}
