// Whole-process numbers with N realistic nodes in the real apiserver: the
// resident memory of each peer once its cache holds them, and the CPU of one
// full reconcile measured in the running process (periodic mode with a 1 ms
// period, so reconciles run back to back; CPU / ListRoutes calls).
import * as fs from 'node:fs';
import type { BenchCluster } from '../lib/apiserver.ts';
import { CLUSTER_CIDR_V4, CLUSTER_CIDR_V6 } from '../lib/nodes.ts';
import { startPeer, type Peer, type Variant } from '../lib/peers.ts';
import { routedCluster } from './realtime.ts';

const sleep = (ms: number): Promise<void> => new Promise((r) => setTimeout(r, ms));

export type MemoryKind = 'ts' | 'ts-js' | 'go';

export interface MemoryRow {
  /** `ts-js`: the same peer compiled to JavaScript, as shipped (no type stripping). */
  readonly kind: MemoryKind;
  readonly nodes: number;
  readonly rssMB: number;
  /** RSS right after start, before the informer's list (empty-process baseline). */
  readonly baselineMB: number;
  readonly syncS: number;
}

export interface ProcessCostRow {
  readonly kind: 'ts' | 'go';
  readonly nodes: number;
  readonly routes: number;
  readonly reconciles: number;
  readonly cpuMsPerReconcile: number;
  readonly wallMsPerReconcile: number;
}

const WATCH: Record<'ts' | 'go', Variant> = {
  ts: { id: 'ts-watch', kind: 'ts', watch: true, label: 'TS' },
  go: { id: 'go-watch', kind: 'go', watch: true, label: 'upstream' },
};
const PERIODIC: Record<'ts' | 'go', Variant> = {
  ts: { id: 'ts-periodic', kind: 'ts', watch: false, label: 'TS' },
  go: { id: 'go-periodic', kind: 'go', watch: false, label: 'upstream' },
};

function removeLogs(logDir: string, tag: string): void {
  for (const f of fs.readdirSync(logDir))
    if (f.startsWith(tag) && f.endsWith('.log')) fs.rmSync(`${logDir}/${f}`);
}

async function firstList(p: Peer, timeoutMs: number): Promise<number | undefined> {
  const s = await p.waitFor((x) => x.list >= 1, timeoutMs);
  return s?.uptimeMs;
}

export async function processSession(
  c: BenchCluster,
  nodes: number,
  opts: { measureMs: number; settleMs: number; cost: boolean },
  logDir: string,
  dataDir: string,
  kinds: readonly ('ts' | 'go')[] = ['ts', 'go'],
  compiledTs?: string,
): Promise<{ memory: MemoryRow[]; cost: ProcessCostRow[] }> {
  const cluster = await routedCluster(c, nodes, dataDir, { dualStack: true });
  const memory: MemoryRow[] = [];
  const cost: ProcessCostRow[] = [];
  const base = {
    clusterCIDRs: [CLUSTER_CIDR_V4, CLUSTER_CIDR_V6],
    latency: '0',
    preload: cluster.preload,
    logDir,
  };
  // All at once: with routes and conditions preset none of them writes anything.
  const tag = `mem${nodes}`;
  const memKinds: MemoryKind[] = [...kinds];
  if (compiledTs !== undefined && kinds.includes('ts')) memKinds.push('ts-js');
  const peers = memKinds.map((kind) =>
    startPeer(kind === 'ts-js' ? { ...WATCH.ts, id: 'ts-js-watch', entry: compiledTs! } : WATCH[kind], {
      ...base,
      kubeconfig: kind === 'go' ? c.goKubeconfig : c.tsKubeconfig,
      reportInterval: '500ms',
      tag,
    }),
  );
  try {
    const first = await Promise.all(peers.map((p) => p.waitFor(() => true, 30_000)));
    const sync = await Promise.all(peers.map((p) => firstList(p, 120_000)));
    await sleep(opts.settleMs);
    memKinds.forEach((kind, i) => {
      const last = peers[i]!.latest()!;
      memory.push({
        kind,
        nodes,
        rssMB: last.rssKB / 1024,
        baselineMB: (first[i]?.rssKB ?? 0) / 1024,
        syncS: (sync[i] ?? NaN) / 1000,
      });
    });
  } finally {
    for (const p of peers) await p.stop();
  }
  removeLogs(logDir, tag);
  if (!opts.cost) return { memory, cost };
  for (const kind of kinds) {
    const tag = `cost${nodes}`;
    const p = startPeer(PERIODIC[kind], {
      ...base,
      kubeconfig: kind === 'ts' ? c.tsKubeconfig : c.goKubeconfig,
      syncPeriod: '1ms',
      reportInterval: '500ms',
      tag,
    });
    try {
      await p.waitFor((x) => x.list >= 3, 120_000);
      await sleep(2000);
      const s0 = p.latest()!;
      await sleep(opts.measureMs);
      const s1 = p.latest()!;
      const n = s1.list - s0.list;
      cost.push({
        kind,
        nodes,
        routes: 2 * nodes,
        reconciles: n,
        cpuMsPerReconcile: n > 0 ? (s1.cpuMs - s0.cpuMs) / n : NaN,
        wallMsPerReconcile: n > 0 ? (s1.t - s0.t) / n : NaN,
      });
    } finally {
      await p.stop();
    }
    removeLogs(logDir, tag);
  }
  return { memory, cost };
}
