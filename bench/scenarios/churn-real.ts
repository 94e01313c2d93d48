// The churn hour against the real kube-apiserver, compressed: the virtual
// hour's change sequence (same seed) with its times scaled into a shorter
// window, every node heartbeating every 10 s throughout, the given peers side
// by side on the same cluster (each with its own cloud). Counts each peer's
// cloud calls; the upstream peer has no virtual clock, so this is where it is
// measured on the same changes.
import type { BenchCluster } from '../lib/apiserver.ts';
import { CLUSTER_CIDR_V4, makeNode, nodeName } from '../lib/nodes.ts';
import { startPeer, type Peer, type Variant } from '../lib/peers.ts';
import { churnPlan, type ChurnConfig } from './churn.ts';
import { routedCluster } from './realtime.ts';

const sleep = (ms: number): Promise<void> => new Promise((r) => setTimeout(r, ms));
const HOUR_MS = 3_600_000;
const WARMUP_MS = 20_000;
/** After the window: time for the last change's route write to land. */
const GRACE_MS = 15_000;

export interface ChurnRealConfig {
  readonly nodes: number;
  /** The hour's changes are compressed into this window. */
  readonly windowMs: number;
  readonly latency: string;
  readonly writeRate: number;
}

export interface ChurnRealRun {
  readonly variant: string;
  readonly nodes: number;
  readonly seed: number;
  readonly windowS: number;
  readonly heartbeats: number;
  readonly changes: { joins: number; leaves: number; addressChanges: number };
  readonly calls: { list: number; create: number; delete: number };
  readonly required: { create: number; delete: number };
  /** Routes in the peer's cloud at the end, and how many the cluster's nodes need. */
  readonly routes: number;
  readonly routesWanted: number;
}

/** A heartbeat racing its node's deletion finds it gone; anything else is an error. */
function gone(err: unknown): void {
  if (!(err instanceof Error && err.message.includes('404'))) throw err;
}

export async function churnRealSession(
  c: BenchCluster,
  variants: readonly Variant[],
  hour: ChurnConfig,
  cfg: ChurnRealConfig,
  logDir: string,
): Promise<ChurnRealRun[]> {
  const plan = churnPlan({ ...hour, nodes: cfg.nodes });
  const scale = cfg.windowMs / HOUR_MS;
  const cluster = await routedCluster(c, cfg.nodes, logDir);
  const peers: Peer[] = variants.map((v) =>
    startPeer(v, {
      kubeconfig: v.kind === 'ts' ? c.tsKubeconfig : c.goKubeconfig,
      clusterCIDRs: [CLUSTER_CIDR_V4],
      latency: cfg.latency,
      writeRate: cfg.writeRate,
      writeBurst: 2 * cfg.writeRate,
      preload: cluster.preload,
      reportInterval: '1s',
      logDir,
      tag: 'churn',
    }),
  );
  try {
    for (const p of peers)
      if ((await p.waitFor(() => true, 30_000)) === undefined) throw new Error(`peer ${p.pid} did not start`);
    await sleep(WARMUP_MS);
    const s0 = peers.map((p) => p.latest()!);
    const alive = new Set(cluster.names);
    const tickMs = 100;
    const ticks = hour.heartbeatMs / tickMs;
    const t0 = Date.now();
    let beats = 0;
    let next = 0;
    const pending: Promise<unknown>[] = [];
    for (let tick = 0; Date.now() < t0 + cfg.windowMs; tick++) {
      const due = t0 + tick * tickMs;
      if (due > Date.now()) await sleep(due - Date.now());
      while (next < plan.length && t0 + plan[next]!.at * scale <= Date.now()) {
        const ch = plan[next++]!;
        if (ch.kind === 'join') {
          // It heartbeats once the apiserver has it.
          pending.push(c.admin.createNode(makeNode('churn', ch.i)).then((m) => alive.add(m.name)));
        } else if (ch.kind === 'leave') {
          const name = nodeName('idle', ch.i);
          alive.delete(name);
          pending.push(c.admin.must('DELETE', `/api/v1/nodes/${name}`));
        } else {
          const name = nodeName('idle', ch.i);
          pending.push(
            c.admin.must(
              'PATCH',
              `/api/v1/nodes/${name}/status`,
              {
                status: { addresses: [{ type: 'InternalIP', address: `172.31.${ch.i >> 8}.${ch.i & 255}` }] },
              },
              'application/merge-patch+json',
            ),
          );
        }
      }
      // Kubelets heartbeat in index slots; a node that left stops, a joined one starts.
      const batch: Promise<void>[] = [];
      for (const name of alive) {
        const i = Number(name.slice(name.lastIndexOf('-') + 1));
        if (i % ticks === tick % ticks) batch.push(c.admin.heartbeat(name).catch(gone));
      }
      await Promise.all(batch);
      beats += batch.length;
    }
    await Promise.all(pending);
    await sleep(GRACE_MS);
    const n = (k: string): number => plan.filter((x) => x.kind === k).length;
    return variants.map((v, i) => {
      const a = s0[i]!;
      const b = peers[i]!.latest()!;
      return {
        variant: v.id,
        nodes: cfg.nodes,
        seed: hour.seed,
        windowS: cfg.windowMs / 1000,
        heartbeats: beats,
        changes: { joins: n('join'), leaves: n('leave'), addressChanges: n('address') },
        calls: { list: b.list - a.list, create: b.create - a.create, delete: b.delete - a.delete },
        required: { create: n('join'), delete: n('leave') },
        routes: b.routes,
        routesWanted: cfg.nodes + n('join') - n('leave'),
      };
    });
  } finally {
    for (const p of peers) await p.stop();
  }
}
