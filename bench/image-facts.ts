/**
 * Image facts, measured as operators run the image: its size and what makes it up; the time from
 * `podman run` of the chart's pod to the first converged reconcile; the resident memory of the
 * daemon inside the container at 100 and 1,000 kwok nodes (node IPAM by kube-controller-manager);
 * and upstream's Go peer (gate on) on a control plane of the same kind, same nodes.
 *
 *   node bench/image-facts.ts [--out bench/results/image-facts.json]
 *
 * Needs what `npm run test:deploy` needs (it reuses that suite's pod runner) and the upstream peer
 * (`bash scripts/bench-build-upstream.sh`).
 */
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { startCluster, type Cluster } from '../test/support/kwok-cluster.ts';
import { podman, serviceAccountToken } from '../test/deploy/pod.ts';
import { helmPath, NAMESPACE, Release } from '../test/deploy/release.ts';
import {
  createObject,
  type KubeNode,
  metricSum,
  networkUnavailable,
  registerNode,
  scrape,
  waitUntil,
} from '../test/deploy/scenario.ts';
import { IMAGE } from '../test/deploy/skip.ts';
import { apiRequest } from '../test/support/controlplane.ts';
import { startPeer, VARIANTS } from './lib/peers.ts';
import { parseCommandLine } from '../src/cli/script-args.ts';

const USAGE = `Usage: node bench/image-facts.ts [--out FILE]

Image facts as operators run the image: its size, the time from podman run to the
first converged reconcile, resident memory at 100 and 1,000 kwok nodes, and
upstream's Go peer beside it. Needs what npm run test:deploy needs and the peer
(bash scripts/bench-build-upstream.sh).

Flags:
  --out FILE       where to write (default bench/results/image-facts.json)
  -h, --help       this help
`;

const { values } = parseCommandLine(USAGE, {
  options: { out: { type: 'string', default: 'bench/results/image-facts.json' } },
});
// Room for 1,000 nodes at kube-controller-manager's default masks (/24 and /64).
const CIDRS = ['10.64.0.0/14', 'fd00:10::/48'];
const sleep = (ms: number): Promise<void> => new Promise((r) => setTimeout(r, ms));

function rssMB(pid: number): number {
  const m = /^VmRSS:\s+(\d+) kB/m.exec(fs.readFileSync(`/proc/${pid}/status`, 'utf8'));
  return Math.round((Number(m?.[1] ?? 0) / 1024) * 10) / 10;
}

/** Registers nodes node-<from>..node-<to - 1> as kubelets do, 20 requests in flight. */
async function register(c: Cluster, from: number, to: number): Promise<void> {
  let next = from;
  const worker = async (): Promise<void> => {
    while (next < to) {
      const i = next++;
      await registerNode(c, `node-${i}`, `memory:///node-${i}`, `10.1.${i >> 8}.${i & 255}`);
    }
  };
  await Promise.all(Array.from({ length: 20 }, worker));
}

async function allAssigned(c: Cluster, n: number): Promise<void> {
  await waitUntil(`${n} nodes with pod CIDRs`, 300_000, async () => {
    const r = await apiRequest(c.cp.adminKubeconfig, 'GET', '/api/v1/nodes');
    const items = (JSON.parse(r.body) as { items: { spec: { podCIDRs?: string[] } }[] }).items;
    const done = items.filter((i) => (i.spec.podCIDRs ?? []).length === 2).length;
    return done === n ? true : `${done}/${n}`;
  });
}

/** Nodes whose NetworkUnavailable is False/RouteCreated (their pods are schedulable). */
async function routedNodes(c: Cluster): Promise<number> {
  const r = await apiRequest(c.cp.adminKubeconfig, 'GET', '/api/v1/nodes');
  const items = (JSON.parse(r.body) as { items: KubeNode[] }).items;
  return items.filter((n) => networkUnavailable(n) === 'False/RouteCreated').length;
}

async function imageComposition(): Promise<Record<string, number>> {
  const out = await podman([
    'run',
    '--rm',
    '--user',
    '0',
    '--entrypoint',
    'du',
    IMAGE,
    '-sk',
    '/usr/local/bin/node',
    '/app/node_modules',
    '/app/dist',
    '/usr',
    '/var',
    '/etc',
  ]);
  const kb = new Map(
    out
      .trim()
      .split('\n')
      .map((l) => {
        const [k, p] = l.split('\t');
        return [p!, Number(k)];
      }),
  );
  const size = Number((await podman(['image', 'inspect', '--format', '{{.Size}}', IMAGE])).trim());
  const mb = (k: number): number => Math.round((k / 1024) * 10) / 10;
  return {
    totalMB: Math.round((size / 1e6) * 10) / 10,
    nodeBinaryMB: mb(kb.get('/usr/local/bin/node') ?? 0),
    nodeModulesMB: mb(kb.get('/app/node_modules') ?? 0),
    distMB: mb(kb.get('/app/dist') ?? 0),
    // du counts a path once: /usr here is without the Node binary counted above.
    debianMB: mb((kb.get('/usr') ?? 0) + (kb.get('/var') ?? 0) + (kb.get('/etc') ?? 0)),
  };
}

/** An empty Node.js process in the same image, same flags as the daemon's shim: the floor. */
async function emptyNode(): Promise<Record<string, number>> {
  const name = `image-facts-floor-${process.pid}`;
  await podman([
    'run',
    '-d',
    '--rm',
    '--name',
    name,
    '--read-only',
    '--cap-drop=ALL',
    '--user',
    '1000:1000',
    '--entrypoint',
    'node',
    IMAGE,
    '--max-semi-space-size=2',
    '-e',
    'setInterval(() => {}, 1000)',
  ]);
  try {
    await sleep(5000);
    const pid = Number((await podman(['inspect', '--format', '{{.State.Pid}}', name])).trim());
    return { rssMB: rssMB(pid) };
  } finally {
    await podman(['rm', '-f', '-t', '0', name]);
  }
}

async function ours(): Promise<Record<string, number>> {
  const c = await startCluster({ auditedUsers: [], heartbeatMs: 300_000, clusterCIDRs: CIDRS });
  try {
    await register(c, 0, 100);
    await allAssigned(c, 100);
    const release = new Release(helmPath()!, c);
    await createObject(c, `/api/v1/namespaces/${NAMESPACE}/serviceaccounts`, {
      apiVersion: 'v1',
      kind: 'ServiceAccount',
      metadata: { name: 'prometheus' },
    });
    const t0 = Date.now();
    await release.install({
      provider: 'memory',
      replicas: 1,
      clusterCIDRs: CIDRS,
      watchBasedReconciliation: true,
      cloudConfig: { content: 'latency: 20ms\n' },
      metrics: { readers: [`${NAMESPACE}/prometheus`] },
    });
    const pod = release.current()[0]!;
    const token = await serviceAccountToken(c.cp.adminKubeconfig, NAMESPACE, 'prometheus');
    const converged = async (n: number): Promise<void> =>
      waitUntil(`${n} nodes routed`, 600_000, async () => {
        const text = await scrape(pod, token);
        const creates = metricSum(
          text,
          'route_controller_cloud_api_calls_total',
          /operation="create",outcome="success"/,
        );
        if (creates < 2 * n) return `${creates} creates`;
        const routed = await routedNodes(c);
        return routed === n ? true : `${routed}/${n} conditions`;
      });
    await converged(100);
    const convergedAt = Date.now();
    const startToConvergedS = (convergedAt - t0) / 1000;
    // podman prints e.g. "2026-12-04 19:05:01.123456789 +0000 UTC".
    const started = (await podman(['inspect', '--format', '{{.State.StartedAt}}', pod.name])).trim();
    const m = /^(\S+) (\d+:\d+:\d+)(\.\d{1,3})?\d* \+0000/.exec(started);
    const containerStartToConvergedS =
      m === null ? NaN : (convergedAt - Date.parse(`${m[1]}T${m[2]}${m[3] ?? ''}Z`)) / 1000;
    const pid = Number((await podman(['inspect', '--format', '{{.State.Pid}}', pod.name])).trim());
    await sleep(20_000);
    const rss100 = rssMB(pid);
    await register(c, 100, 1000);
    await allAssigned(c, 1000);
    await converged(1000);
    await sleep(20_000);
    const rss1000 = rssMB(pid);
    await release.stopPods();
    return { startToConvergedS, containerStartToConvergedS, rss100MB: rss100, rss1000MB: rss1000 };
  } finally {
    await c.stop();
  }
}

async function upstream(): Promise<Record<string, number>> {
  const c = await startCluster({ auditedUsers: [], heartbeatMs: 300_000, clusterCIDRs: CIDRS });
  const logDir = fs.mkdtempSync(path.join(os.tmpdir(), 'image-facts-'));
  try {
    await register(c, 0, 100);
    await allAssigned(c, 100);
    const t0 = Date.now();
    const peer = startPeer(
      VARIANTS.find((v) => v.id === 'go-watch')!,
      {
        kubeconfig: c.cp.adminKubeconfig,
        clusterCIDRs: CIDRS,
        latency: '20ms',
        logDir,
        tag: 'image-facts',
      },
    );
    try {
      const routed = async (n: number): Promise<void> => {
        const s = await peer.waitFor((x) => x.routes >= 2 * n, 600_000);
        if (s === undefined) throw new Error(`upstream: ${n} nodes not routed`);
        await waitUntil(`upstream: ${n} conditions`, 300_000, async () => {
          const routed = await routedNodes(c);
          return routed === n ? true : `${routed}/${n} conditions`;
        });
      };
      await routed(100);
      const startToConvergedS = (Date.now() - t0) / 1000;
      await sleep(20_000);
      const rss100 = rssMB(peer.pid);
      await register(c, 100, 1000);
      await allAssigned(c, 1000);
      await routed(1000);
      await sleep(20_000);
      const rss1000 = rssMB(peer.pid);
      return { startToConvergedS, rss100MB: rss100, rss1000MB: rss1000 };
    } finally {
      await peer.stop();
    }
  } finally {
    await c.stop();
    fs.rmSync(logDir, { recursive: true, force: true });
  }
}

const image = await imageComposition();
console.log('image', image);
const floor = await emptyNode();
console.log('empty Node.js process', floor);
const ts = await ours();
console.log('ours', ts);
const go = await upstream();
console.log('upstream', go);
const result = {
  date: new Date().toISOString(),
  machine: {
    cpus: os.cpus().length,
    cpu: os.cpus()[0]?.model ?? '',
    memGiB: Math.round(os.totalmem() / 2 ** 30),
    kernel: os.release(),
  },
  image,
  emptyNodeProcess: floor,
  ours: ts,
  upstream: go,
};
fs.writeFileSync(values.out!, JSON.stringify(result, null, 2) + '\n');
console.log(JSON.stringify(result, null, 2));
