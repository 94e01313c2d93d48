// Shared by the kube-*.test.ts integration tests: RBAC from deploy/base/rbac.yaml,
// admin-side node manipulation through the real apiserver, and a
// RouteController wired to the src/kube adapters and an in-memory cloud.
import * as fs from 'node:fs';
import * as path from 'node:path';
import { Registry } from 'prom-client';
import { parseAllDocuments } from 'yaml';
import { MemoryRoutes } from '../../src/cloud/memory/memory-routes.ts';
import { canonicalCIDR } from '../../src/core/cidr.ts';
import { MemoryLogger } from '../../src/core/ports.ts';
import type { NodeAddress, NodeCondition } from '../../src/core/types.ts';
import { RouteControllerMetrics } from '../../src/controller/metrics.ts';
import type { RouteControllerOptions } from '../../src/controller/options.ts';
import type { ReconcileReport } from '../../src/controller/reconcile.ts';
import { RouteController } from '../../src/controller/route-controller.ts';
import { KubeEventRecorder } from '../../src/kube/event-recorder.ts';
import type { KubeClient } from '../../src/kube/kube-client.ts';
import { createKubeClient } from '../../src/kube/kubeconfig.ts';
import { NodeInformer, type NodeInformerOptions } from '../../src/kube/node-informer.ts';
import { KubeNodeStatusWriter } from '../../src/kube/node-status-writer.ts';
import { apiRequest, type ControlPlane } from '../support/controlplane.ts';
import { testRandom } from '../support/seed.ts';

export const CONTROLLER_USER = 'route-controller-ts';
const RBAC_FILE = path.resolve(import.meta.dirname, '..', '..', 'deploy', 'base', 'rbac.yaml');

type Obj = Record<string, unknown>;

function collectionPath(kind: string, namespace: string | undefined): string {
  const ns = namespace ?? 'default';
  switch (kind) {
    case 'ServiceAccount':
      return `/api/v1/namespaces/${ns}/serviceaccounts`;
    case 'ClusterRole':
      return '/apis/rbac.authorization.k8s.io/v1/clusterroles';
    case 'ClusterRoleBinding':
      return '/apis/rbac.authorization.k8s.io/v1/clusterrolebindings';
    case 'Role':
      return `/apis/rbac.authorization.k8s.io/v1/namespaces/${ns}/roles`;
    case 'RoleBinding':
      return `/apis/rbac.authorization.k8s.io/v1/namespaces/${ns}/rolebindings`;
    default:
      throw new Error(`kube-helpers: unsupported kind ${kind}`);
  }
}

/** The objects of deploy/base/rbac.yaml, parsed. */
export function rbacObjects(): Obj[] {
  return parseAllDocuments(fs.readFileSync(RBAC_FILE, 'utf8'))
    .map((d) => d.toJS() as unknown)
    .filter((o): o is Obj => typeof o === 'object' && o !== null);
}

/** One permission per binding of deploy/base/rbac.yaml. */
const CONTROLLER_GRANTS = [
  { group: '', resource: 'nodes', verb: 'list' }, // ClusterRoleBinding cloud-route-controller
  { group: 'coordination.k8s.io', resource: 'leases', verb: 'create', namespace: 'kube-system' }, // RoleBinding
  { group: 'authentication.k8s.io', resource: 'tokenreviews', verb: 'create' }, // :auth-delegator
];

/**
 * Applies deploy/base/rbac.yaml as admin, binds the test user to exactly its roles,
 * and mints the user's kubeconfig. Waits until the grant is effective.
 */
export async function setupControllerUser(cp: ControlPlane): Promise<string> {
  const objs = rbacObjects();
  for (const o of objs) {
    const md = o['metadata'] as { namespace?: string };
    const r = await apiRequest(
      cp.adminKubeconfig,
      'POST',
      collectionPath(String(o['kind']), md.namespace),
      o,
    );
    if (r.status !== 201 && r.status !== 409)
      throw new Error(`apply ${String(o['kind'])}: ${r.status} ${r.body}`);
  }
  // The test user stands in for the ServiceAccount: same roles, extra bindings.
  for (const o of objs.filter((x) => x['kind'] === 'ClusterRoleBinding' || x['kind'] === 'RoleBinding')) {
    const md = o['metadata'] as { name: string; namespace?: string };
    const binding = {
      ...o,
      metadata: { ...md, name: `${md.name}-${CONTROLLER_USER}` },
      subjects: [{ apiGroup: 'rbac.authorization.k8s.io', kind: 'User', name: CONTROLLER_USER }],
    };
    const r = await apiRequest(
      cp.adminKubeconfig,
      'POST',
      collectionPath(String(o['kind']), md.namespace),
      binding,
    );
    if (r.status !== 201 && r.status !== 409) throw new Error(`bind ${md.name}: ${r.status} ${r.body}`);
  }
  const kubeconfig = await cp.userKubeconfig(CONTROLLER_USER);
  // The apiserver's RBAC authorizer sees each binding on its own (RoleBindings through another
  // informer than ClusterRoleBindings): one effective grant says nothing of the others, so wait
  // for one permission of every binding.
  await waitFor('RBAC grant effective', 20_000, async () => {
    for (const resourceAttributes of CONTROLLER_GRANTS) {
      const r = await apiRequest(
        kubeconfig,
        'POST',
        '/apis/authorization.k8s.io/v1/selfsubjectaccessreviews',
        {
          apiVersion: 'authorization.k8s.io/v1',
          kind: 'SelfSubjectAccessReview',
          spec: { resourceAttributes },
        },
      );
      if (
        r.status !== 201 ||
        (JSON.parse(r.body) as { status?: { allowed?: boolean } }).status?.allowed !== true
      )
        return false;
    }
    return true;
  });
  return kubeconfig;
}

export async function waitFor(
  what: string,
  timeoutMs: number,
  cond: () => boolean | Promise<boolean>,
  intervalMs = 100,
): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    if (await cond()) return;
    if (Date.now() > deadline) throw new Error(`timed out after ${timeoutMs} ms waiting for: ${what}`);
    await new Promise((r) => setTimeout(r, intervalMs));
  }
}

export interface KubeNode {
  metadata: { name: string; uid: string; resourceVersion: string };
  spec?: { podCIDRs?: string[] };
  status?: { addresses?: NodeAddress[]; conditions?: NodeCondition[] };
}

/** Admin-side node operations, as kubelets, IPAM and operators would do them. */
export class Admin {
  readonly kubeconfig: string;
  constructor(kubeconfig: string) {
    this.kubeconfig = kubeconfig;
  }

  async createNode(
    name: string,
    podCIDRs: string[],
    addresses: NodeAddress[] = [],
    providerID = `memory:///${name}`,
  ): Promise<KubeNode> {
    const r = await apiRequest(this.kubeconfig, 'POST', '/api/v1/nodes', {
      apiVersion: 'v1',
      kind: 'Node',
      metadata: { name, labels: { 'kubernetes.io/hostname': name } },
      spec: podCIDRs.length > 0 ? { podCIDR: podCIDRs[0], podCIDRs, providerID } : {},
      status: {
        addresses,
        conditions: [
          {
            type: 'Ready',
            status: 'True',
            reason: 'KubeletReady',
            message: 'kubelet is posting ready status',
            lastHeartbeatTime: new Date().toISOString().replace(/\.\d+Z$/, 'Z'),
            lastTransitionTime: new Date().toISOString().replace(/\.\d+Z$/, 'Z'),
          },
        ],
      },
    });
    if (r.status !== 201) throw new Error(`create node ${name}: ${r.status} ${r.body}`);
    return JSON.parse(r.body) as KubeNode;
  }

  async getNode(name: string): Promise<KubeNode | undefined> {
    const r = await apiRequest(this.kubeconfig, 'GET', `/api/v1/nodes/${name}`);
    if (r.status === 404) return undefined;
    if (r.status !== 200) throw new Error(`get node ${name}: ${r.status} ${r.body}`);
    return JSON.parse(r.body) as KubeNode;
  }

  async deleteNode(name: string): Promise<void> {
    const r = await apiRequest(this.kubeconfig, 'DELETE', `/api/v1/nodes/${name}`);
    if (r.status !== 200) throw new Error(`delete node ${name}: ${r.status} ${r.body}`);
  }

  /** Strategic merge patch of nodes/<name>/status (as a kubelet does). */
  async patchStatus(name: string, status: object): Promise<KubeNode> {
    return this.patch(`/api/v1/nodes/${name}/status`, { status });
  }

  /** Strategic merge patch of the node object (labels, annotations). */
  async patchNode(name: string, patch: object): Promise<KubeNode> {
    return this.patch(`/api/v1/nodes/${name}`, patch);
  }

  async heartbeat(name: string): Promise<KubeNode> {
    const now = new Date().toISOString().replace(/\.\d+Z$/, 'Z');
    return this.patchStatus(name, { conditions: [{ type: 'Ready', lastHeartbeatTime: now }] });
  }

  async condition(name: string, type = 'NetworkUnavailable'): Promise<NodeCondition | undefined> {
    return (await this.getNode(name))?.status?.conditions?.find((c) => c.type === type);
  }

  async events(fieldSelector: string): Promise<Obj[]> {
    const r = await apiRequest(
      this.kubeconfig,
      'GET',
      `/api/v1/namespaces/default/events?fieldSelector=${encodeURIComponent(fieldSelector)}`,
    );
    if (r.status !== 200) throw new Error(`list events: ${r.status} ${r.body}`);
    return (JSON.parse(r.body) as { items: Obj[] }).items;
  }

  private async patch(p: string, body: object): Promise<KubeNode> {
    const r = await apiRequest(
      this.kubeconfig,
      'PATCH',
      p,
      JSON.stringify(body),
      'application/strategic-merge-patch+json',
    );
    if (r.status !== 200) throw new Error(`patch ${p}: ${r.status} ${r.body}`);
    return JSON.parse(r.body) as KubeNode;
  }
}

export interface RunningController {
  readonly controller: RouteController;
  readonly informer: NodeInformer;
  readonly recorder: KubeEventRecorder;
  readonly client: KubeClient;
  readonly cloud: MemoryRoutes;
  readonly logger: MemoryLogger;
  readonly metrics: RouteControllerMetrics;
  readonly registry: Registry;
  readonly reports: ReconcileReport[];
  stop(): Promise<void>;
}

export interface StartOptions {
  readonly kubeconfig: string;
  readonly watch: boolean;
  readonly cloud?: MemoryRoutes;
  readonly clusterCIDRs?: string[];
  readonly informer?: Partial<NodeInformerOptions>;
  readonly controller?: Partial<RouteControllerOptions>;
}

export const CLUSTER_CIDRS = ['10.244.0.0/16', 'fd00:10:244::/56'];

/** A RouteController as the daemon would wire it, with short intervals for tests. */
export function startController(o: StartOptions): RunningController {
  const client = createKubeClient({ kubeconfig: o.kubeconfig, qps: 50, burst: 100 });
  const logger = new MemoryLogger(4);
  const registry = new Registry();
  const metrics = new RouteControllerMetrics(registry);
  const cloud = o.cloud ?? new MemoryRoutes({ random: testRandom('cloud') });
  const informer = new NodeInformer({
    client,
    logger,
    metrics,
    random: testRandom('informer'),
    ...o.informer,
  });
  const recorder = new KubeEventRecorder({ client, logger, retryDelayMs: 500 });
  const reports: ReconcileReport[] = [];
  const controller = new RouteController({
    routes: cloud,
    nodes: informer,
    statusWriter: new KubeNodeStatusWriter(client),
    recorder,
    logger,
    metrics,
    clusterName: 'it',
    clusterCIDRs: o.clusterCIDRs ?? CLUSTER_CIDRS,
    watchBasedReconciliation: o.watch,
    minReconcileIntervalMs: 200,
    routeReconciliationPeriodMs: 500,
    routeResyncPeriodMs: 0,
    random: testRandom('controller'),
    onReconcile: (r) => reports.push(r),
    ...o.controller,
  });
  const stopper = new AbortController();
  informer.start();
  const running = controller.run(stopper.signal);
  return {
    controller,
    informer,
    recorder,
    client,
    cloud,
    logger,
    metrics,
    registry,
    reports,
    async stop() {
      stopper.abort();
      await running;
      await informer.stop();
      await recorder.close();
      client.close();
    },
  };
}

/** Canonical destination → target node of the cloud's routes. */
export function routeMap(cloud: MemoryRoutes): Map<string, string> {
  return new Map(
    cloud.snapshot().map((r) => [canonicalCIDR(r.destinationCIDR) ?? r.destinationCIDR, r.targetNode]),
  );
}

/** The route table as sorted "cidr->node" strings, for readable assertions. */
export function routeList(cloud: MemoryRoutes): string[] {
  return [...routeMap(cloud)].map(([c, n]) => `${c}->${n}`).sort();
}

export function internalIP(address: string): NodeAddress[] {
  return [{ type: 'InternalIP', address }];
}
