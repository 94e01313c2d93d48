// What the deploy suites do to the cluster and read back: nodes registered as a kubelet registers
// them, the daemon's own metrics over its port-forward, and waits that print what they saw.
import { apiRequest } from '../support/controlplane.ts';
import type { Cluster } from '../support/kwok-cluster.ts';
import type { Pod } from './pod.ts';
import { podGet } from './release.ts';

export interface KubeNode {
  metadata: { name: string; uid: string; resourceVersion: string };
  spec: { podCIDRs?: string[]; providerID?: string };
  status: {
    addresses?: { type: string; address: string }[];
    conditions?: { type: string; status: string; reason?: string }[];
  };
}

/**
 * A kubelet's registration: name, providerID, addresses; no pod CIDRs (node IPAM assigns them
 * later) and no conditions (kwok's node-initialize stage writes them, as a kubelet's first status).
 */
export async function registerNode(
  c: Cluster,
  name: string,
  providerID: string,
  internalIP: string,
): Promise<KubeNode> {
  const r = await apiRequest(c.cp.adminKubeconfig, 'POST', '/api/v1/nodes', {
    apiVersion: 'v1',
    kind: 'Node',
    metadata: { name, labels: { 'kubernetes.io/hostname': name, type: 'kwok' } },
    spec: { providerID },
    status: {
      addresses: [
        { type: 'InternalIP', address: internalIP },
        { type: 'Hostname', address: name },
      ],
    },
  });
  if (r.status !== 201) throw new Error(`register node ${name}: ${r.status} ${r.body}`);
  return JSON.parse(r.body) as KubeNode;
}

export async function getNode(c: Cluster, name: string): Promise<KubeNode | undefined> {
  const r = await apiRequest(c.cp.adminKubeconfig, 'GET', `/api/v1/nodes/${name}`);
  if (r.status === 404) return undefined;
  if (r.status !== 200) throw new Error(`get node ${name}: ${r.status} ${r.body}`);
  return JSON.parse(r.body) as KubeNode;
}

export async function deleteNode(c: Cluster, name: string): Promise<void> {
  const r = await apiRequest(c.cp.adminKubeconfig, 'DELETE', `/api/v1/nodes/${name}`);
  if (r.status !== 200) throw new Error(`delete node ${name}: ${r.status} ${r.body}`);
}

export function networkUnavailable(n: KubeNode | undefined): string {
  const cond = n?.status.conditions?.find((x) => x.type === 'NetworkUnavailable');
  return cond === undefined ? 'none' : `${cond.status}/${cond.reason ?? ''}`;
}

export async function waitUntil(
  what: string,
  timeoutMs: number,
  check: () => Promise<string | true>,
): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  let last = '';
  for (;;) {
    const r = await check();
    if (r === true) return;
    last = r;
    if (Date.now() > deadline)
      throw new Error(`timed out after ${timeoutMs} ms waiting for ${what}; last seen: ${last}`);
    await new Promise((res) => setTimeout(res, 250));
  }
}

/** Every node's pod CIDRs assigned (one per family) and NetworkUnavailable False/RouteCreated. */
export async function waitNodesRouted(
  c: Cluster,
  names: string[],
  families: number,
  timeoutMs = 90_000,
): Promise<Map<string, KubeNode>> {
  const out = new Map<string, KubeNode>();
  await waitUntil(
    `${names.join(',')} routed (pod CIDRs and NetworkUnavailable=False)`,
    timeoutMs,
    async () => {
      const pending: string[] = [];
      for (const name of names) {
        const n = await getNode(c, name);
        if (
          n === undefined ||
          (n.spec.podCIDRs ?? []).length !== families ||
          networkUnavailable(n) !== 'False/RouteCreated'
        ) {
          pending.push(`${name}: ${JSON.stringify(n?.spec.podCIDRs)} ${networkUnavailable(n)}`);
        } else {
          out.set(name, n);
        }
      }
      return pending.length === 0 ? true : pending.join('; ');
    },
  );
  return out;
}

/** The sum of every sample of a metric family (all label sets) in Prometheus text. */
export function metricSum(text: string, name: string, labelFilter?: RegExp): number {
  let sum = 0;
  for (const line of text.split('\n')) {
    if (!line.startsWith(`${name}{`) && !line.startsWith(`${name} `)) continue;
    if (labelFilter !== undefined && !labelFilter.test(line)) continue;
    sum += Number(line.slice(line.lastIndexOf(' ') + 1));
  }
  return sum;
}

export async function scrape(pod: Pod, token: string): Promise<string> {
  const r = await podGet(pod, '/metrics', token);
  if (r.status !== 200) throw new Error(`${pod.name} /metrics: ${r.status} ${r.body}`);
  return r.body;
}

export interface Lease {
  spec: { holderIdentity?: string; renewTime?: string; leaseTransitions?: number };
}

export async function lease(c: Cluster, ns: string, name: string): Promise<Lease | undefined> {
  const r = await apiRequest(
    c.cp.adminKubeconfig,
    'GET',
    `/apis/coordination.k8s.io/v1/namespaces/${ns}/leases/${name}`,
  );
  if (r.status === 404) return undefined;
  if (r.status !== 200) throw new Error(`get lease ${ns}/${name}: ${r.status} ${r.body}`);
  return JSON.parse(r.body) as Lease;
}

/** The pod holding the Lease (leader identities are `<hostname>_<uuid>`, the hostname the pod's). */
export async function leader(
  c: Cluster,
  pods: readonly Pod[],
  ns: string,
  name: string,
): Promise<Pod | undefined> {
  const holder = (await lease(c, ns, name))?.spec.holderIdentity ?? '';
  return pods.find((p) => holder.startsWith(`${p.name}_`));
}

export async function createObject(c: Cluster, path: string, body: object): Promise<void> {
  const r = await apiRequest(c.cp.adminKubeconfig, 'POST', path, body);
  if (r.status !== 201) throw new Error(`POST ${path}: ${r.status} ${r.body}`);
}
