// The documented Kubernetes maximum: N (15,000) dual-stack realistic nodes in
// the real kube-apiserver, the shipped daemon (memory provider, defaults, watch
// mode) and upstream's Go peer (gate on) one after the other on the same
// routed nodes (nothing needs a write). Per peer: initial sync time, resident
// memory after sync and after the first reconcile, the CPU of that first
// (full, listing) reconcile, and the CPU of one node event each (a join, its
// leave, an address change), read from /proc around the event until the
// reconcile it caused finished.
import * as fs from 'node:fs';
import * as path from 'node:path';
import type { BenchCluster } from '../lib/apiserver.ts';
import { cpuMs, Daemon, rssMB } from '../lib/daemon.ts';
import { CLUSTER_CIDR_V4, CLUSTER_CIDR_V6, makeNode, podCIDRs } from '../lib/nodes.ts';
import { startPeer, type Peer, type Variant } from '../lib/peers.ts';
import { installShipped } from '../lib/shipped-install.ts';
import { spread } from '../lib/stats.ts';
import { routedCluster } from './realtime.ts';
import { shippedKubeconfig } from './shipped.ts';

const sleep = (ms: number): Promise<void> => new Promise((r) => setTimeout(r, ms));
/** Readiness polls, and the peer's reports (its initial sync is read from them, to this resolution). */
const POLL_MS = 20;

/** When the daemon logged its node cache synced (epoch ms). */
function syncedAt(logFile: string): number {
  for (const line of fs.readFileSync(logFile, 'utf8').split('\n')) {
    if (!line.includes('Node cache synced')) continue;
    const ts = (JSON.parse(line) as { ts?: unknown }).ts;
    if (typeof ts === 'number') return ts * 1000;
  }
  throw new Error(`${logFile}: no "Node cache synced" line`);
}
const GO_WATCH: Variant = { id: 'go-watch', kind: 'go', watch: true, label: 'upstream gate on' };

export interface ScaleConfig {
  readonly nodes: number;
  readonly settleMs: number;
}

export interface ScaleRow {
  readonly kind: 'memory' | 'go';
  readonly nodes: number;
  /** The median over the repetitions (each figure's own median). */
  readonly syncS: number;
  /** Every repetition's initial sync, in the order run. */
  readonly syncRunsS?: number[];
  readonly syncedMB: number;
  readonly reconciledMB: number;
  /** CPU from start to the end of the first (listing) reconcile, and of that reconcile alone where known. */
  readonly startCpuMs: number;
  /** CPU of one event and the reconcile it caused. */
  readonly eventCpuMs: Record<'join' | 'leave' | 'address', number>;
}

interface Events {
  join(): Promise<void>;
  leave(): Promise<void>;
  address(): Promise<void>;
}

function events(c: BenchCluster, nodes: number, round: string): Events {
  const extra = makeNode(`scale${round}`, nodes + 1, { routed: false, dualStack: true });
  const name = (extra['metadata'] as { name: string }).name;
  return {
    join: async () => {
      await c.admin.createNode(extra);
    },
    leave: async () => {
      await c.admin.must('DELETE', `/api/v1/nodes/${name}`);
    },
    address: async () => {
      await c.admin.must(
        'PATCH',
        `/api/v1/nodes/idle-00000/status`,
        {
          status: {
            addresses: [{ type: 'InternalIP', address: `192.0.2.${round.startsWith('a') ? 1 : 2}` }],
          },
        },
        'application/merge-patch+json',
      );
    },
  };
}

/** CPU of `event` until `done(k)` reports the k-th reconcile after it. */
async function eventCpu(
  pid: number,
  ev: Events,
  done: () => Promise<number>,
  settleMs: number,
): Promise<ScaleRow['eventCpuMs']> {
  const out = { join: 0, leave: 0, address: 0 };
  for (const kind of ['join', 'leave', 'address'] as const) {
    const before = await done();
    const a = cpuMs(pid);
    await ev[kind]();
    const t0 = Date.now();
    while ((await done()) <= before) {
      if (Date.now() - t0 > 120_000) throw new Error(`no reconcile after the ${kind}`);
      await sleep(100);
    }
    out[kind] = cpuMs(pid) - a;
    await sleep(settleMs);
  }
  return out;
}

export async function scaleSession(
  c: BenchCluster,
  cfg: ScaleConfig,
  o: { withGo: boolean; logDir: string; log: (m: string) => void; reps?: number },
): Promise<ScaleRow[]> {
  const install = installShipped();
  const runs: ScaleRow[] = [];
  try {
    const dir = fs.mkdtempSync(path.join(install.dir, 'scale-'));
    o.log(`scale: ${cfg.nodes} dual-stack nodes`);
    const cluster = await routedCluster(c, cfg.nodes, dir, { dualStack: true });
    const kubeconfig = await shippedKubeconfig(c);
    // Every route already there, as the Go peer's preload has it; `initialRoutes` keeps the cloud in
    // memory afterwards, like the peer's (a stateFile would read and write 30,000 routes per call).
    const state = path.join(dir, 'memory-routes.json');
    fs.writeFileSync(
      state,
      JSON.stringify(
        cluster.names.flatMap((node, i) =>
          podCIDRs(i, true).map((destinationCIDR) => ({
            name: '',
            clusterName: 'kubernetes',
            targetNode: node,
            targetNodeAddresses: [],
            destinationCIDR,
            blackhole: false,
          })),
        ),
      ),
    );
    const config = path.join(dir, 'memory.yaml');
    fs.writeFileSync(config, `initialRoutes: ${JSON.stringify(state)}\n`);
    // The two peers alternate, so a slow spell of the machine does not land on one side only.
    const reps = Math.max(1, o.reps ?? 1);
    for (let rep = 1; rep <= reps; rep++) {
      o.log(`scale ${rep}/${reps}: shipped daemon`);
      runs.push(await memoryRow(c, cfg, { bin: install.bin, kubeconfig, config, logDir: o.logDir, rep }));
      if (o.withGo) {
        o.log(`scale ${rep}/${reps}: upstream`);
        runs.push(await goRow(c, cfg, cluster.preload, { logDir: o.logDir, rep }));
      }
    }
  } finally {
    await c.admin.deleteAllNodes();
    install.remove();
  }
  return (['memory', 'go'] as const).flatMap((k) => {
    const mine = runs.filter((r) => r.kind === k);
    return mine.length === 0 ? [] : [medianRow(mine)];
  });
}

/** Each figure's median over the repetitions; the sync times are kept one by one as well. */
function medianRow(rows: ScaleRow[]): ScaleRow {
  const of = (f: (r: ScaleRow) => number): number => spread(rows.map(f))!.median;
  return {
    kind: rows[0]!.kind,
    nodes: rows[0]!.nodes,
    syncS: of((r) => r.syncS),
    syncRunsS: rows.map((r) => r.syncS),
    syncedMB: of((r) => r.syncedMB),
    reconciledMB: of((r) => r.reconciledMB),
    startCpuMs: of((r) => r.startCpuMs),
    eventCpuMs: {
      join: of((r) => r.eventCpuMs.join),
      leave: of((r) => r.eventCpuMs.leave),
      address: of((r) => r.eventCpuMs.address),
    },
  };
}

async function memoryRow(
  c: BenchCluster,
  cfg: ScaleConfig,
  o: { bin: string; kubeconfig: string; config: string; logDir: string; rep: number },
): Promise<ScaleRow> {
  const logFile = path.join(o.logDir, `scale-memory-${cfg.nodes}-${o.rep}.log`);
  const spawned = Date.now();
  const d = await Daemon.start(
    o.bin,
    [
      `--kubeconfig=${o.kubeconfig}`,
      `--cluster-cidr=${CLUSTER_CIDR_V4},${CLUSTER_CIDR_V6}`,
      '--feature-gates=CloudControllerManagerWatchBasedRoutesReconciliation=true',
      '--leader-elect=true',
      `--leader-elect-resource-name=scale-memory-${o.rep}`,
      '--cloud-provider=memory',
      `--cloud-config=${o.config}`,
    ],
    logFile,
  );
  try {
    await d.synced(600_000, POLL_MS);
    // The moment its node cache synced, from its own log: a readiness poll answered during the
    // first reconcile (CPU-bound at this size) would add that reconcile to the sync.
    const syncS = (syncedAt(logFile) - spawned) / 1000;
    await sleep(cfg.settleMs);
    const syncedMB = d.rssMB();
    await d.reconciled(1, 600_000);
    const startCpuMs = d.cpuMs();
    await sleep(cfg.settleMs);
    const reconciledMB = d.rssMB();
    const eventCpuMs = await eventCpu(
      d.pid,
      events(c, cfg.nodes, `a${o.rep}`),
      () => d.reconciles(),
      cfg.settleMs,
    );
    return { kind: 'memory', nodes: cfg.nodes, syncS, syncedMB, reconciledMB, startCpuMs, eventCpuMs };
  } finally {
    await d.stop();
  }
}

async function goRow(
  c: BenchCluster,
  cfg: ScaleConfig,
  preload: string,
  o: { logDir: string; rep: number },
): Promise<ScaleRow> {
  const p: Peer = startPeer(GO_WATCH, {
    kubeconfig: c.goKubeconfig,
    clusterCIDRs: [CLUSTER_CIDR_V4, CLUSTER_CIDR_V6],
    latency: '0',
    preload,
    reportInterval: `${POLL_MS}ms`,
    logDir: o.logDir,
    tag: `scale${cfg.nodes}-${o.rep}`,
  });
  try {
    const t0 = Date.now();
    // It lists as soon as its cache synced: the first list marks both.
    const listed = await p.waitFor((s) => s.list >= 1, 600_000);
    if (listed === undefined) throw new Error('upstream peer did not list');
    const syncS = (Date.now() - t0) / 1000;
    await sleep(cfg.settleMs);
    const mb = rssMB(p.pid);
    const startCpuMs = cpuMs(p.pid);
    const eventCpuMs = await eventCpu(
      p.pid,
      events(c, cfg.nodes, `b${o.rep}`),
      async () => {
        await sleep(600); // its report interval
        return p.latest()?.list ?? 0;
      },
      cfg.settleMs,
    );
    return { kind: 'go', nodes: cfg.nodes, syncS, syncedMB: mb, reconciledMB: mb, startCpuMs, eventCpuMs };
  } finally {
    await p.stop();
  }
}
