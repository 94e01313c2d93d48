// Nodes that register as kubelets do, on a control plane whose other components behave like real
// ones (test/support/kwok-cluster.ts): etcd + kube-apiserver, kube-controller-manager running
// only its node IPAM controller (pod CIDRs assigned after registration) and kwok as the kubelets
// (first conditions, Leases, status heartbeats; never NetworkUnavailable). Each variant gets a
// fresh control plane and a fresh peer; the nodes are POSTed in one burst with bounded
// concurrency, without pod CIDRs or conditions, and an admin watch timestamps per node when its
// pod CIDRs, its Ready condition and NetworkUnavailable=False (its pods become schedulable)
// first appear. The peers' cloud is the same in-memory one as in the burst.
import * as fs from 'node:fs';
import * as path from 'node:path';
import { execFileSync } from 'node:child_process';
import { benchClusterOn, GO_USER, TS_USER, type BenchCluster } from '../lib/apiserver.ts';
import { makeNode, nodeName } from '../lib/nodes.ts';
import { startPeer, type Peer, type Sample, type Variant } from '../lib/peers.ts';
import { NodeTimeline, type WatchedNode } from '../lib/node-timeline.ts';
import { nodeAgentBinaries, startCluster } from '../../test/support/kwok-cluster.ts';

const sleep = (ms: number): Promise<void> => new Promise((r) => setTimeout(r, ms));

export interface IpamConfig {
  readonly nodes: number;
  /** Registration POSTs in flight at once. */
  readonly concurrency: number;
  /** kube-controller-manager's --cluster-cidr and the peers' (one family, /24 per node). */
  readonly clusterCIDR: string;
  /** kwok's status heartbeat period (a kubelet's nodeStatusReportFrequency is 5 min). */
  readonly heartbeatMs: number;
  readonly latency: string;
  readonly writeRate: number;
  readonly writeBurst: number;
  /** From the first POST; a run also stops after stallMs without a node becoming schedulable. */
  readonly timeoutMs: number;
  readonly stallMs: number;
}

/**
 * Per-node latencies (ms, from the node's create being acknowledged). Percentiles are over all
 * `n` nodes, a node that never got there counting as later than any that did: undefined where
 * the percentile falls on such a node (e.g. p50 when more than half never got there).
 */
export interface Percentiles {
  readonly n: number;
  /** Nodes where the event was never seen within the run. */
  readonly missing: number;
  readonly p50?: number;
  readonly p90?: number;
  readonly p99?: number;
  readonly max?: number;
}

export interface IpamRun {
  readonly variant: string;
  /** Every node reached NetworkUnavailable=False within the run. */
  readonly converged: boolean;
  readonly nodes: number;
  readonly schedulable: number;
  /** First POST sent → last POST acknowledged (s). */
  readonly registerS: number;
  /** First POST sent → last node's NetworkUnavailable=False (s); undefined unless converged. */
  readonly lastSchedulableS: number | undefined;
  /** First POST sent → last node's pod CIDRs seen (s). */
  readonly lastPodCIDRS: number | undefined;
  /** First POST sent → last route created in the cloud (s). */
  readonly lastRouteS: number | undefined;
  /** Created → NetworkUnavailable=False, created → pod CIDRs, → Ready=True (kwok), → route in the cloud. */
  readonly schedulableMs: Percentiles;
  readonly podCIDRMs: Percentiles;
  readonly readyMs: Percentiles;
  readonly routeMs: Percentiles;
  /** Route created → NetworkUnavailable=False seen (the status patch's share), over the nodes with both. */
  readonly routeToConditionMs: Percentiles;
  /** Nodes ever seen with NetworkUnavailable=True (a failed route, reported). */
  readonly markedUnavailable: number;
  /** Cloud calls from the peer's start until the last node was schedulable (or the run gave up). */
  readonly calls: { list: number; create: number; delete: number; throttled: number };
  readonly apiserver: Record<string, number>;
  readonly cpuMs: number;
  readonly maxRssMB: number;
  /** Per node, in creation order: its create acknowledged, ms after the first POST was sent. */
  readonly createdMs: number[];
  /** Per node: created → NetworkUnavailable=False (ms; null in the JSON: never within the run). */
  readonly latencies: (number | undefined)[];
  /** Per node: created → pod CIDRs seen (ms). */
  readonly podCIDRLatencies: (number | undefined)[];
  /** Per node: created → its route created in the cloud (ms). */
  readonly routeLatencies: (number | undefined)[];
  readonly cluster: { kubeControllerManager: string; kwok: string };
  readonly wallS: number;
}

export function percentiles(values: readonly (number | undefined)[]): Percentiles {
  const got = values.filter((x): x is number => x !== undefined).sort((a, b) => a - b);
  const n = values.length;
  const out: Percentiles = { n, missing: n - got.length };
  // Nearest rank over all n (as percentile() in lib/stats.ts); ranks past `got` are missing nodes.
  const at = (p: number): number | undefined => got[Math.max(1, Math.ceil((p / 100) * n)) - 1];
  const p50 = at(50);
  const p90 = at(90);
  const p99 = at(99);
  const max = got.length === n && n > 0 ? got[n - 1] : undefined;
  return {
    ...out,
    ...(p50 !== undefined ? { p50 } : {}),
    ...(p90 !== undefined ? { p90 } : {}),
    ...(p99 !== undefined ? { p99 } : {}),
    ...(max !== undefined ? { max } : {}),
  };
}

/**
 * The Node a kubelet registers (`--cloud-provider=external`, provider ID known): name, labels,
 * spec.providerID, addresses (InternalIP, Hostname), capacity and nodeInfo; no pod CIDRs (node
 * IPAM assigns them) and no conditions (kwok's node-initialize stage writes the first). The
 * in-memory cloud targets routes by node name and UID, so the provider ID is the made-up EC2 one
 * of the other scenarios.
 */
export function registeringNode(i: number): Record<string, unknown> {
  const n = makeNode('ipam', i);
  const spec = n['spec'] as Record<string, unknown>;
  delete spec['podCIDR'];
  delete spec['podCIDRs'];
  const status = n['status'] as Record<string, unknown>;
  delete status['conditions'];
  const metadata = n['metadata'] as Record<string, unknown>;
  delete metadata['managedFields'];
  delete (metadata['annotations'] as Record<string, string>)['node.alpha.kubernetes.io/ttl'];
  return n;
}

/** Waits for the peer's first report plus a moment for its informer to sync an empty cluster. */
async function started(p: Peer): Promise<Sample> {
  const s = await p.waitFor(() => true, 30_000);
  if (s === undefined) throw new Error(`peer ${p.pid} did not start`);
  await sleep(2000);
  return p.latest()!;
}

/**
 * One node through the whole path before the measured run, so that kube-controller-manager's
 * and kwok's informers are surely up: registered, given a pod CIDR, Ready; then deleted (its CIDR
 * is released).
 */
async function probe(c: BenchCluster): Promise<void> {
  const name = 'ipam-probe';
  const node = registeringNode(0);
  (node['metadata'] as Record<string, unknown>)['name'] = name;
  await c.admin.must('POST', '/api/v1/nodes', node);
  for (let i = 0; ; i++) {
    const o = JSON.parse((await c.admin.must('GET', `/api/v1/nodes/${name}`)).body) as WatchedNode;
    const ready = o.status?.conditions?.some((x) => x.type === 'Ready' && x.status === 'True') ?? false;
    if ((o.spec?.podCIDRs?.length ?? 0) > 0 && ready) break;
    if (i > 300)
      throw new Error(`probe node: no pod CIDR or not Ready after 60 s: ${JSON.stringify(o.spec)}`);
    await sleep(200);
  }
  await c.admin.deleteAllNodes();
}

function version(bin: string, re: RegExp): string {
  try {
    const out = execFileSync(bin, ['--version'], { encoding: 'utf8', timeout: 10_000 });
    return re.exec(out)?.[1] ?? out.trim();
  } catch (err) {
    return `? (${(err as Error).message.slice(0, 80)})`;
  }
}

export function nodeAgentsMissing(): string | undefined {
  return nodeAgentBinaries() === undefined
    ? 'kube-controller-manager/kwok missing: run `bash scripts/testenv.sh build`'
    : undefined;
}

export async function ipamSession(
  v: Variant,
  cfg: IpamConfig,
  logDir: string,
  tag: string,
): Promise<IpamRun> {
  const wall = Date.now();
  const bins = nodeAgentBinaries();
  if (bins === undefined) throw new Error(nodeAgentsMissing());
  const cluster = {
    kubeControllerManager: version(bins.kubeControllerManager, /Kubernetes (v\S+)/),
    kwok: version(bins.kwok, /kwok version (v\S+)/),
  };
  const kc = await startCluster({
    auditedUsers: [TS_USER, GO_USER],
    heartbeatMs: cfg.heartbeatMs,
    clusterCIDRs: [cfg.clusterCIDR],
  });
  const keepLogs = (): void => {
    for (const f of ['kube-controller-manager.log', 'kwok.log']) {
      const from = path.join(kc.cp.dir, f);
      if (fs.existsSync(from)) fs.copyFileSync(from, path.join(logDir, `${tag}-${v.id}-${f}`));
    }
  };
  let c: BenchCluster;
  try {
    c = await benchClusterOn(kc.cp, kc.auditLog, () => kc.stop(), cfg.concurrency + 8);
  } catch (err) {
    await kc.stop();
    throw err;
  }
  let p: Peer | undefined;
  const timeline = new NodeTimeline(kc.cp.adminKubeconfig);
  try {
    await probe(c);
    await timeline.start();
    c.audit.mark();
    p = startPeer(v, {
      kubeconfig: v.kind === 'ts' ? c.tsKubeconfig : c.goKubeconfig,
      clusterCIDRs: [cfg.clusterCIDR],
      latency: cfg.latency,
      writeRate: cfg.writeRate,
      writeBurst: cfg.writeBurst,
      logDir,
      tag,
    });
    const s0 = await started(p);

    // Registration: all nodes at once, `concurrency` POSTs in flight.
    const manifests = Array.from({ length: cfg.nodes }, (_, i) => registeringNode(i));
    const createdAt: number[] = new Array<number>(cfg.nodes);
    const t0 = Date.now();
    let next = 0;
    const worker = async (): Promise<void> => {
      for (let k = next++; k < cfg.nodes; k = next++) {
        const r = await c.admin.request('POST', '/api/v1/nodes', manifests[k]);
        if (r.status !== 201) throw new Error(`POST node ${k}: HTTP ${r.status} ${r.body.slice(0, 200)}`);
        createdAt[k] = r.at;
      }
    };
    await Promise.all(Array.from({ length: Math.min(cfg.concurrency, cfg.nodes) }, worker));
    const registered = Date.now();

    // Until every node is schedulable, the timeout, or no progress for stallMs.
    let last = timeline.schedulable;
    let lastProgress = Date.now();
    while (timeline.schedulable < cfg.nodes) {
      await sleep(250);
      if (timeline.schedulable !== last) {
        last = timeline.schedulable;
        lastProgress = Date.now();
      }
      if (Date.now() - lastProgress > cfg.stallMs || Date.now() - t0 > cfg.timeoutMs) break;
    }
    const sEnd = p.latest()!;
    await p.stop();
    timeline.stop();
    const audit = c.audit.countSinceMark();
    const converged = timeline.schedulable >= cfg.nodes;

    const at = p.created;
    const times = manifests.map((_, i) => timeline.nodes.get(nodeName('ipam', i)) ?? {});
    const routeAt = times.map((t) => {
      const ts = (t.podCIDRs ?? []).map((cidr) => at[cidr]);
      return ts.length > 0 && ts.every((x) => x !== undefined) ? Math.max(...(ts as number[])) : undefined;
    });
    const since = (xs: (number | undefined)[]): (number | undefined)[] =>
      xs.map((x, i) => (x === undefined ? undefined : x - createdAt[i]!));
    const lastOf = (xs: (number | undefined)[]): number | undefined =>
      xs.every((x) => x !== undefined) ? (Math.max(...(xs as number[])) - t0) / 1000 : undefined;
    const schedulableAt = times.map((t) => t.schedulableAt);
    const podCIDRAt = times.map((t) => t.podCIDRAt);
    const latencies = since(schedulableAt);
    const podCIDRLatencies = since(podCIDRAt);
    const routeLatencies = since(routeAt);
    return {
      variant: v.id,
      converged,
      nodes: cfg.nodes,
      schedulable: timeline.schedulable,
      registerS: (registered - t0) / 1000,
      lastSchedulableS: converged ? lastOf(schedulableAt) : undefined,
      lastPodCIDRS: lastOf(podCIDRAt),
      lastRouteS: lastOf(routeAt),
      schedulableMs: percentiles(latencies),
      podCIDRMs: percentiles(podCIDRLatencies),
      readyMs: percentiles(since(times.map((t) => t.readyAt))),
      routeMs: percentiles(routeLatencies),
      routeToConditionMs: percentiles(
        schedulableAt
          .map((s, i) => (s === undefined || routeAt[i] === undefined ? undefined : s - routeAt[i]))
          .filter((x) => x !== undefined),
      ),
      markedUnavailable: times.filter((t) => t.unavailable === true).length,
      calls: {
        list: sEnd.list - s0.list,
        create: sEnd.create - s0.create,
        delete: sEnd.delete - s0.delete,
        throttled: sEnd.throttled - s0.throttled,
      },
      apiserver: audit[v.kind === 'ts' ? TS_USER : GO_USER] ?? {},
      cpuMs: sEnd.cpuMs - s0.cpuMs,
      maxRssMB: Math.max(...p.samples.map((x) => x.rssKB)) / 1024,
      createdMs: createdAt.map((x) => x - t0),
      latencies,
      podCIDRLatencies,
      routeLatencies,
      cluster,
      wallS: (Date.now() - wall) / 1000,
    };
  } finally {
    timeline.stop();
    await p?.stop();
    keepLogs();
    await c.stop();
  }
}
