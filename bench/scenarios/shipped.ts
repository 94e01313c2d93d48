// The shipped executable against the real kube-apiserver: the packed tarball
// installed with npm, `bin/cloud-route-controller.js run` with leader election,
// both servers and watch mode, for each provider at N realistic
// IPv4 nodes (routes and conditions preset, so nothing is written). Resident
// memory after the cache synced (/readyz) and after the first reconcile
// (/metrics), next to upstream's Go peer on the same nodes in the same run;
// then CPU per hour of both while every node heartbeats.
import * as fs from 'node:fs';
import * as path from 'node:path';
import type { BenchCluster } from '../lib/apiserver.ts';
import { cpuMs, Daemon, rssMB } from '../lib/daemon.ts';
import { CLUSTER_CIDR_V4 } from '../lib/nodes.ts';
import { startPeer, type Variant } from '../lib/peers.ts';
import type { ShippedInstall } from '../lib/shipped-install.ts';
import { routedCluster } from './realtime.ts';
import { startFloor } from './shipped-floor.ts';
import { memoryProvider, type ProviderFactory } from './shipped-providers.ts';

const sleep = (ms: number): Promise<void> => new Promise((r) => setTimeout(r, ms));

export const SHIPPED_USER = 'route-controller-shipped';
const FEATURE_GATE = '--feature-gates=CloudControllerManagerWatchBasedRoutesReconciliation=true';
const GO_WATCH: Variant = { id: 'go-watch', kind: 'go', watch: true, label: 'upstream' };

/** `floor`: bench/peer/node-floor.mjs, a dependency-free Node program doing the same I/O. */
export type ShippedKind =
  'memory' | 'linux' | 'hcloud' | 'aws' | 'azure' | 'gce' | 'openstack' | 'go' | 'floor';

export interface ShippedMemoryRow {
  readonly kind: ShippedKind;
  readonly nodes: number;
  /** Right after start-up, before the cache lists (the fixed cost). */
  readonly startMB: number;
  readonly syncedMB: number;
  readonly reconciledMB: number;
  readonly syncS: number;
}

export interface ShippedIdleRow {
  readonly kind: ShippedKind;
  readonly nodes: number;
  readonly windowS: number;
  readonly heartbeats: number;
  readonly cpuMsPerHour: number;
  readonly rssMB: number;
}

export interface ShippedResults {
  /** Peak resident memory of `import(specifier)` from the installed tarball, per specifier. */
  libraryImportMB: Record<string, number>;
  tarballKB: number;
  memory: ShippedMemoryRow[];
  idle: ShippedIdleRow[];
  /** Provider kinds not measured, with the reason. */
  skipped: Record<string, string>;
}

/** The daemon's own identity: the route controller's bootstrap role plus its Lease. */
export async function shippedKubeconfig(c: BenchCluster): Promise<string> {
  const rbac = '/apis/rbac.authorization.k8s.io/v1';
  const ignoreExists = async (p: Promise<unknown>): Promise<void> => {
    try {
      await p;
    } catch (err) {
      if (!String(err).includes('HTTP 409')) throw err;
    }
  };
  await ignoreExists(
    c.admin.must('POST', `${rbac}/clusterroles`, {
      apiVersion: 'rbac.authorization.k8s.io/v1',
      kind: 'ClusterRole',
      metadata: { name: 'routebench-shipped-lease' },
      rules: [
        { apiGroups: ['coordination.k8s.io'], resources: ['leases'], verbs: ['get', 'create', 'update'] },
      ],
    }),
  );
  for (const role of ['system:controller:route-controller', 'routebench-shipped-lease'])
    await ignoreExists(
      c.admin.must('POST', `${rbac}/clusterrolebindings`, {
        apiVersion: 'rbac.authorization.k8s.io/v1',
        kind: 'ClusterRoleBinding',
        metadata: { name: `routebench-shipped-${role.replaceAll(':', '-')}` },
        roleRef: { apiGroup: 'rbac.authorization.k8s.io', kind: 'ClusterRole', name: role },
        subjects: [{ apiGroup: 'rbac.authorization.k8s.io', kind: 'User', name: SHIPPED_USER }],
      }),
    );
  return c.cp.userKubeconfig(SHIPPED_USER);
}

export interface ShippedSessionOptions {
  readonly install: ShippedInstall;
  readonly kubeconfig: string;
  readonly providers: ReadonlyMap<ShippedKind, ProviderFactory>;
  readonly settleMs: number;
  readonly logDir: string;
  readonly dataDir: string;
  readonly withGo: boolean;
}

function daemonArgs(kubeconfig: string, name: string): string[] {
  return [
    `--kubeconfig=${kubeconfig}`,
    `--cluster-cidr=${CLUSTER_CIDR_V4}`,
    FEATURE_GATE,
    '--leader-elect=true',
    `--leader-elect-resource-name=${name}`,
  ];
}

/** Memory rows for every provider (one at a time) and the Go peer at `nodes`. */
export async function shippedMemorySession(
  c: BenchCluster,
  nodes: number,
  o: ShippedSessionOptions,
): Promise<ShippedMemoryRow[]> {
  const rows: ShippedMemoryRow[] = [];
  // Nodes without a cloud's provider IDs serve the Go peer, the floor, `memory` and `linux`;
  // `hcloud` and `aws` get nodes with theirs. Creating 5,000 nodes takes a while: reuse.
  const base = await routedCluster(c, nodes, o.dataDir);
  let clusterIsBase = true;
  rows.push(await floorRow(o, nodes));
  if (o.withGo) rows.push(await goRow(c, nodes, base.preload, o));
  for (const [kind, provider] of o.providers) {
    const dir = fs.mkdtempSync(path.join(o.dataDir, `${kind}-`));
    const setup = await provider(nodes, dir);
    try {
      if (setup.providerID !== undefined || !clusterIsBase) {
        // Nodes as this cloud's node controller would leave them (its provider IDs).
        await routedCluster(c, nodes, dir, setup.providerID ? { providerID: setup.providerID } : {});
        clusterIsBase = setup.providerID === undefined;
      }
      const d = await Daemon.start(
        o.install.bin,
        [...daemonArgs(o.kubeconfig, `shipped-${kind}-${nodes}`), ...setup.args],
        path.join(o.logDir, `shipped-${kind}-${nodes}.log`),
        setup.env,
      );
      try {
        await sleep(1000);
        const startMB = d.rssMB();
        const t0 = Date.now();
        await d.synced(300_000);
        const syncS = (Date.now() - t0) / 1000;
        await sleep(o.settleMs);
        const syncedMB = d.rssMB();
        await d.reconciled(1, 300_000);
        await sleep(o.settleMs);
        rows.push({ kind, nodes, startMB, syncedMB, reconciledMB: d.rssMB(), syncS });
      } finally {
        await d.stop();
      }
    } finally {
      await setup.close();
    }
  }
  const order: ShippedKind[] = [
    'memory',
    'linux',
    'hcloud',
    'aws',
    'azure',
    'gce',
    'openstack',
    'floor',
    'go',
  ];
  return rows.sort((x, y) => order.indexOf(x.kind) - order.indexOf(y.kind));
}

/** Upstream's Go peer (watch mode) on the routes in `preload`. */
async function goRow(
  c: BenchCluster,
  nodes: number,
  preload: string,
  o: ShippedSessionOptions,
): Promise<ShippedMemoryRow> {
  const p = startPeer(GO_WATCH, {
    kubeconfig: c.goKubeconfig,
    clusterCIDRs: [CLUSTER_CIDR_V4],
    latency: '0',
    preload,
    reportInterval: '500ms',
    logDir: o.logDir,
    tag: `shipped${nodes}`,
  });
  try {
    const first = await p.waitFor(() => true, 30_000);
    const t0 = Date.now();
    // In watch mode upstream lists only on a node event or its resync: with no nodes, never.
    const listed = await p.waitFor((s) => s.list >= 1, nodes === 0 ? o.settleMs : 300_000);
    if (first === undefined || (listed === undefined && nodes > 0))
      throw new Error('upstream peer did not list');
    await sleep(o.settleMs);
    const mb = p.latest()!.rssKB / 1024;
    // The peer lists as soon as its cache synced: both points are the same for it.
    return {
      kind: 'go',
      nodes,
      startMB: first.rssKB / 1024,
      syncedMB: mb,
      reconciledMB: mb,
      syncS: (Date.now() - t0) / 1000,
    };
  } finally {
    await p.stop();
  }
}

/** The Node.js floor at `nodes` (the cluster as it is): resident memory after its LIST, and again later. */
async function floorRow(o: ShippedSessionOptions, nodes: number): Promise<ShippedMemoryRow> {
  const dir = fs.mkdtempSync(path.join(o.dataDir, 'floor-'));
  const floor = startFloor(o.kubeconfig, dir, path.join(o.logDir, `shipped-floor-${nodes}.log`));
  try {
    await sleep(1000);
    const startMB = rssMB(floor.pid);
    const t0 = Date.now();
    await floor.synced;
    const syncS = (Date.now() - t0) / 1000;
    await sleep(o.settleMs);
    const syncedMB = rssMB(floor.pid);
    await sleep(o.settleMs);
    return { kind: 'floor', nodes, startMB, syncedMB, reconciledMB: rssMB(floor.pid), syncS };
  } finally {
    floor.stop();
  }
}

export interface ShippedIdleConfig {
  readonly nodes: number;
  readonly warmupMs: number;
  readonly windowMs: number;
  readonly heartbeatMs: number;
}

/**
 * The `memory` daemon, the Node.js floor and the Go peer side by side on the same routed nodes
 * while every node heartbeats every `heartbeatMs` (nothing needs a write):
 * CPU time over the window, scaled to an hour.
 */
export async function shippedIdleSession(
  c: BenchCluster,
  cfg: ShippedIdleConfig,
  o: ShippedSessionOptions,
): Promise<ShippedIdleRow[]> {
  const cluster = await routedCluster(c, cfg.nodes, o.dataDir);
  const dir = fs.mkdtempSync(path.join(o.dataDir, 'idle-'));
  const setup = await memoryProvider(cfg.nodes, dir);
  const d = await Daemon.start(
    o.install.bin,
    [...daemonArgs(o.kubeconfig, 'shipped-idle'), ...setup.args],
    path.join(o.logDir, 'shipped-idle.log'),
  );
  const floor = startFloor(o.kubeconfig, dir, path.join(o.logDir, 'shipped-idle-floor.log'));
  const p = o.withGo
    ? startPeer(GO_WATCH, {
        kubeconfig: c.goKubeconfig,
        clusterCIDRs: [CLUSTER_CIDR_V4],
        latency: '0',
        preload: cluster.preload,
        reportInterval: '1s',
        logDir: o.logDir,
        tag: 'shipped-idle',
      })
    : undefined;
  let stopBeats = false;
  let heartbeats = 0;
  const beats = (async () => {
    // Every node once per heartbeatMs, spread evenly, like kubelets.
    const gap = cfg.heartbeatMs / cluster.names.length;
    let k = 0;
    const t0 = Date.now();
    while (!stopBeats) {
      const due = t0 + k * gap;
      const wait = due - Date.now();
      if (wait > 0) await sleep(wait);
      void c.admin.heartbeat(cluster.names[k % cluster.names.length]!).then(
        () => heartbeats++,
        () => {},
      );
      k++;
    }
  })();
  try {
    await d.synced(300_000);
    await d.reconciled(1, 300_000);
    if (p) await p.waitFor((s) => s.list >= 1, 300_000);
    await floor.synced;
    await sleep(cfg.warmupMs);
    const h0 = heartbeats;
    const t0 = Date.now();
    const d0 = d.cpuMs();
    const f0 = cpuMs(floor.pid);
    const g0 = p?.latest()?.cpuMs ?? 0;
    await sleep(cfg.windowMs);
    const windowS = (Date.now() - t0) / 1000;
    const row = (kind: ShippedKind, cpuMsUsed: number, rss: number): ShippedIdleRow => ({
      kind,
      nodes: cfg.nodes,
      windowS,
      heartbeats: heartbeats - h0,
      cpuMsPerHour: (cpuMsUsed * 3600) / windowS,
      rssMB: rss,
    });
    const rows = [
      row('memory', d.cpuMs() - d0, d.rssMB()),
      row('floor', cpuMs(floor.pid) - f0, rssMB(floor.pid)),
    ];
    const last = p?.latest();
    if (last) rows.push(row('go', last.cpuMs - g0, last.rssKB / 1024));
    return rows;
  } finally {
    stopBeats = true;
    await beats;
    await d.stop();
    await p?.stop();
    floor.stop();
    await setup.close();
  }
}
