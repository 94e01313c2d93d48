// Simulator-style runs in virtual time (MemoryCluster + MemoryRoutes +
// VirtualClock): hours of cluster life in seconds, TypeScript controller only
// (the Go peer has no virtual clock; its real-time runs are scaled instead).
import { MemoryRoutes } from '../../src/cloud/memory/memory-routes.ts';
import { MemoryCluster } from '../../src/cluster/memory-cluster.ts';
import { DEFAULTS } from '../../src/controller/options.ts';
import { RouteController } from '../../src/controller/route-controller.ts';
import type { ReconcileReport } from '../../src/controller/reconcile.ts';
import { VirtualClock } from '../../src/core/clock.ts';
// Deterministic jitter, so repeated runs report identical counts.
import { seededRandom } from '../../src/core/random.ts';
import { CLUSTER_CIDR_V4, nodeName, podCIDRv4, routedNodeSpec } from '../lib/nodes.ts';

/** `watch`: the defaults (route cache, adaptive pacing); `watch-legacy`: both off, as before them. */
export type VirtualMode = 'periodic' | 'watch' | 'watch-r0' | 'watch-legacy';

export const VIRTUAL_LABELS: Record<VirtualMode, string> = {
  periodic: 'TS periodic',
  watch: 'TS watch (defaults)',
  'watch-r0': 'TS watch (defaults, resync 0)',
  'watch-legacy': 'TS watch, no cache, unpaced',
};

export interface Rig {
  clock: VirtualClock;
  cluster: MemoryCluster;
  routes: MemoryRoutes;
  controller: RouteController;
  reports: { at: number; report: ReconcileReport }[];
  stop: AbortController;
  running: Promise<void>;
}

export function rig(mode: VirtualMode, opts: { latencyMs: number; writeRate?: number }): Rig {
  const clock = new VirtualClock();
  const cluster = new MemoryCluster({ clock });
  const routes = new MemoryRoutes({
    clock,
    latencyMs: opts.latencyMs,
    ...(opts.writeRate ? { writeRateLimit: { ratePerSec: opts.writeRate, burst: 2 * opts.writeRate } } : {}),
    random: seededRandom(7),
  });
  const reports: Rig['reports'] = [];
  const controller = new RouteController({
    routes,
    nodes: cluster,
    statusWriter: cluster,
    recorder: cluster,
    clusterCIDRs: [CLUSTER_CIDR_V4],
    clock,
    random: seededRandom(1),
    watchBasedReconciliation: mode !== 'periodic',
    routeResyncPeriodMs: mode === 'watch-r0' ? 0 : DEFAULTS.routeResyncPeriodMs,
    onReconcile: (report) => reports.push({ at: clock.now(), report }),
    // The daemon's defaults: the memory provider declares its write limit (R68).
    cloudWriteLimit: opts.writeRate ? { qps: opts.writeRate, burst: 2 * opts.writeRate } : 'unlimited',
    routeTargetKeys: ['uid'],
    ...(mode === 'watch-legacy' ? { routeCache: false, cloudWriteQPS: 0 } : {}),
  });
  return {
    clock,
    cluster,
    routes,
    controller,
    reports,
    stop: new AbortController(),
    running: Promise.resolve(),
  };
}

/** A node that already has its route, as in a running cluster. */
export function addRoutedNode(r: Rig, i: number, prefix = 'idle'): void {
  const name = nodeName(prefix, i);
  const now = new Date(r.clock.now());
  const node = r.cluster.createNode(routedNodeSpec(name, i, [podCIDRv4(i)], now));
  r.routes.putRoute({
    name: `kubernetes-${node.metadata!.uid}-${podCIDRv4(i)}`,
    clusterName: 'kubernetes',
    targetNode: name,
    destinationCIDR: podCIDRv4(i),
  });
}

/** Heartbeats every node once per `intervalMs`, spread evenly over 100 ms ticks. */
function startHeartbeats(r: Rig, names: readonly string[], intervalMs: number): { count: number } {
  const stats = { count: 0 };
  const tickMs = 100;
  const ticks = intervalMs / tickMs;
  let tick = 0;
  const step = (): void => {
    if (r.stop.signal.aborted) return;
    for (let k = tick % ticks; k < names.length; k += ticks) {
      r.cluster.heartbeat(names[k]!);
      stats.count++;
    }
    tick++;
    r.clock.setTimeout(step, tickMs);
  };
  r.clock.setTimeout(step, tickMs);
  return stats;
}

export interface IdleVirtualResult {
  readonly mode: VirtualMode;
  readonly label: string;
  readonly nodes: number;
  readonly windowHours: number;
  readonly warmupMinutes: number;
  readonly heartbeatsPerHour: number;
  /** Cloud calls per hour in the window (after warm-up). */
  readonly perHour: { list: number; create: number; delete: number };
  readonly reconcilesPerHour: number;
  readonly reconcilesByTrigger: Record<string, number>;
  /** Reconciles in the window triggered by node events (heartbeats are the only events). */
  readonly heartbeatCausedReconciles: number;
  /** Start-up, before the window: reconciles and list calls. */
  readonly startup: { reconciles: number; list: number };
  /** Virtual time (h) → cumulative list calls, for the chart. */
  readonly series: { hour: number; list: number }[];
  readonly wallMs: number;
}

export async function idleHourVirtual(
  mode: VirtualMode,
  cfg: { nodes: number; windowHours: number; warmupMinutes: number; heartbeatMs: number },
): Promise<IdleVirtualResult> {
  const wall = Date.now();
  const r = rig(mode, { latencyMs: 20 });
  const names: string[] = [];
  for (let i = 0; i < cfg.nodes; i++) {
    addRoutedNode(r, i);
    names.push(nodeName('idle', i));
  }
  r.running = r.controller.run(r.stop.signal);
  const hb = startHeartbeats(r, names, cfg.heartbeatMs);
  const t0 = r.clock.now();
  await r.clock.advance(cfg.warmupMinutes * 60_000);
  const startup = { reconciles: r.reports.length, list: r.routes.count('list') };
  const hbStart = hb.count;
  const windowStart = r.clock.now();
  const series: { hour: number; list: number }[] = [];
  const stepMs = 5 * 60_000;
  for (let t = 0; t < cfg.windowHours * 3_600_000; t += stepMs) {
    await r.clock.advance(stepMs);
    series.push({ hour: (r.clock.now() - t0) / 3_600_000, list: r.routes.count('list') });
  }
  const inWindow = r.reports.filter((x) => x.at >= windowStart);
  const calls = r.routes.calls.filter((c) => c.start >= windowStart);
  const byTrigger: Record<string, number> = {};
  for (const x of inWindow) byTrigger[x.report.trigger] = (byTrigger[x.report.trigger] ?? 0) + 1;
  const heartbeatsPerHour = (hb.count - hbStart) / cfg.windowHours;
  r.stop.abort();
  await r.clock.advance(60_000);
  await r.running;
  const h = cfg.windowHours;
  return {
    mode,
    label: VIRTUAL_LABELS[mode],
    nodes: cfg.nodes,
    windowHours: h,
    warmupMinutes: cfg.warmupMinutes,
    heartbeatsPerHour,
    perHour: {
      list: calls.filter((c) => c.op === 'list').length / h,
      create: calls.filter((c) => c.op === 'create').length / h,
      delete: calls.filter((c) => c.op === 'delete').length / h,
    },
    reconcilesPerHour: inWindow.length / h,
    reconcilesByTrigger: byTrigger,
    heartbeatCausedReconciles: inWindow.filter(
      (x) => x.report.trigger === 'node_change' || x.report.trigger === 'condition_drift',
    ).length,
    startup,
    series,
    wallMs: Date.now() - wall,
  };
}

export interface BurstVirtualResult {
  readonly mode: VirtualMode;
  readonly label: string;
  /** The controller paced its writes (the default in watch mode, R68). */
  readonly writeBudget: boolean;
  readonly nodes: number;
  readonly converged: boolean;
  /** From the first node's creation until the last route exists (virtual seconds). */
  readonly convergeS: number | undefined;
  readonly calls: { list: number; create: number; delete: number };
  readonly reconciles: number;
  readonly routesAt: { s: number; routes: number }[];
}

/** The burst of the real-time scenario in virtual time: same cloud, no apiserver client limits. */
export async function burstVirtual(
  mode: VirtualMode,
  cfg: { nodes: number; spreadMs: number; writeRate: number; latencyMs: number; limitHours: number },
): Promise<BurstVirtualResult> {
  const writeBudget = mode === 'watch' || mode === 'watch-r0';
  const r = rig(mode, { latencyMs: cfg.latencyMs, writeRate: cfg.writeRate });
  r.running = r.controller.run(r.stop.signal);
  await r.clock.advance(3000);
  const t0 = r.clock.now();
  for (let i = 0; i < cfg.nodes; i++) {
    const at = (i * cfg.spreadMs) / cfg.nodes;
    r.clock.setTimeout(() => {
      r.cluster.createNode({
        name: nodeName('burst', i),
        podCIDRs: [podCIDRv4(i)],
        addresses: [{ type: 'InternalIP', address: `172.16.${(i >> 8) & 255}.${i & 255}` }],
      });
    }, at);
  }
  const routesAt: { s: number; routes: number }[] = [];
  let convergeS: number | undefined;
  const limit = t0 + cfg.limitHours * 3_600_000;
  while (r.clock.now() < limit) {
    await r.clock.advance(1000);
    const n = r.routes.snapshot().length;
    const s = (r.clock.now() - t0) / 1000;
    if (routesAt.length === 0 || routesAt[routesAt.length - 1]!.routes !== n) routesAt.push({ s, routes: n });
    if (n >= cfg.nodes) {
      const lastOk = Math.max(
        ...r.routes.calls.filter((c) => c.op === 'create' && c.outcome === 'ok').map((c) => c.end),
      );
      convergeS = (lastOk - t0) / 1000;
      break;
    }
  }
  const calls = {
    list: r.routes.calls.filter((c) => c.op === 'list' && c.start >= t0).length,
    create: r.routes.count('create'),
    delete: r.routes.count('delete'),
  };
  const reconciles = r.reports.filter((x) => x.at >= t0).length;
  r.stop.abort();
  await r.clock.advance(60_000);
  await r.running;
  return {
    mode,
    label: `${VIRTUAL_LABELS[mode]}${writeBudget ? `, paced from the cloud's ${cfg.writeRate}/s` : mode === 'watch-legacy' ? '' : ', unpaced'}`,
    writeBudget,
    nodes: cfg.nodes,
    converged: convergeS !== undefined,
    convergeS,
    calls,
    reconciles,
    routesAt,
  };
}
