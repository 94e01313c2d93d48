// CPU time of one full reconcile, in process: planReconcile alone, and the
// controller's reconcileOnce (list + plan + creates + condition checks)
// against MemoryRoutes with zero latency. Dual-stack nodes, so 2 routes each.
import { Session } from 'node:inspector/promises';
import * as path from 'node:path';
import { Registry } from 'prom-client';
import { MemoryRoutes } from '../../src/cloud/memory/memory-routes.ts';
import { MemoryCluster } from '../../src/cluster/memory-cluster.ts';
import { RouteController } from '../../src/controller/route-controller.ts';
import { parseCIDR } from '../../src/core/cidr.ts';
import { planReconcile } from '../../src/core/plan.ts';
import { CLUSTER_CIDR_V4, CLUSTER_CIDR_V6, nodeName, podCIDRs, routedNodeSpec } from '../lib/nodes.ts';
import { spread, type Spread } from '../lib/stats.ts';

export interface CostRow {
  readonly nodes: number;
  readonly routes: number;
  /** Share of routes missing before each reconcile (0 or 0.01). */
  readonly change: number;
  readonly iterations: number;
  /** CPU ms (user+system) per call. */
  readonly planMs: Spread;
  readonly reconcileMs: Spread;
  /** Median reconcile CPU per node, µs. */
  readonly usPerNode: number;
}

export interface ProfileEntry {
  readonly fn: string;
  readonly where: string;
  readonly selfMs: number;
  readonly share: number;
}

function cpuMs(f: () => void): number {
  const a = process.cpuUsage();
  f();
  const b = process.cpuUsage(a);
  return (b.user + b.system) / 1000;
}

async function cpuMsAsync(f: () => Promise<unknown>): Promise<number> {
  const a = process.cpuUsage();
  await f();
  const b = process.cpuUsage(a);
  return (b.user + b.system) / 1000;
}

interface Setup {
  cluster: MemoryCluster;
  routes: MemoryRoutes;
  controller: RouteController;
  cidrs: string[];
}

function setup(nodes: number): Setup {
  const cluster = new MemoryCluster();
  const routes = new MemoryRoutes({ latencyMs: 0 });
  const now = new Date();
  const cidrs: string[] = [];
  for (let i = 0; i < nodes; i++) {
    const name = nodeName('cost', i);
    const pc = podCIDRs(i, true);
    const n = cluster.createNode(routedNodeSpec(name, i, pc, now, true));
    for (const c of pc) {
      routes.putRoute({
        name: `kubernetes-${n.metadata!.uid}-${c}`,
        clusterName: 'kubernetes',
        targetNode: name,
        destinationCIDR: c,
      });
      cidrs.push(c);
    }
  }
  const controller = new RouteController({
    routes,
    nodes: cluster,
    statusWriter: cluster,
    recorder: cluster,
    clusterCIDRs: [CLUSTER_CIDR_V4, CLUSTER_CIDR_V6],
    registry: new Registry(),
  });
  return { cluster, routes, controller, cidrs };
}

export async function reconcileCost(nodes: number, change: number, iterations: number): Promise<CostRow> {
  const s = setup(nodes);
  const clusterCIDRs = [parseCIDR(CLUSTER_CIDR_V4), parseCIDR(CLUSTER_CIDR_V6)];
  const signal = new AbortController().signal;
  const scope = { signal, reconcile: { id: 'bench', scratch: new Map<string, unknown>() } };
  const victims = change > 0 ? s.cidrs.filter((_, k) => k % Math.round(1 / change) === 0) : [];
  const plan: number[] = [];
  const rec: number[] = [];
  const warmup = 10;
  for (let it = 0; it < warmup + iterations; it++) {
    for (const c of victims) s.routes.removeRoute(c);
    const listed = await s.routes.listRoutes('kubernetes', scope);
    const nodeList = s.cluster.list();
    const p = cpuMs(() => planReconcile(nodeList, listed, clusterCIDRs));
    const r = await cpuMsAsync(() => s.controller.reconcileOnce('periodic', signal));
    if (it >= warmup) {
      plan.push(p);
      rec.push(r);
    }
  }
  const reconcileMs = spread(rec)!;
  return {
    nodes,
    routes: s.cidrs.length,
    change,
    iterations,
    planMs: spread(plan)!,
    reconcileMs,
    usPerNode: (reconcileMs.median * 1000) / nodes,
  };
}

/** Self time per function over `iterations` no-change reconciles, top `top`. */
export async function profileReconcile(nodes: number, iterations: number, top = 12): Promise<ProfileEntry[]> {
  const s = setup(nodes);
  const signal = new AbortController().signal;
  for (let i = 0; i < 3; i++) await s.controller.reconcileOnce('periodic', signal);
  const session = new Session();
  session.connect();
  await session.post('Profiler.enable');
  await session.post('Profiler.setSamplingInterval', { interval: 250 });
  await session.post('Profiler.start');
  for (let i = 0; i < iterations; i++) await s.controller.reconcileOnce('periodic', signal);
  const { profile } = await session.post('Profiler.stop');
  session.disconnect();
  const nodesById = profile.nodes;
  const total = (profile.endTime - profile.startTime) / 1000;
  const samples = profile.samples?.length ?? 1;
  const msPerSample = total / samples;
  const agg = new Map<string, { fn: string; where: string; hits: number }>();
  for (const n of nodesById) {
    const cf = n.callFrame;
    const where = cf.url === '' ? '(native)' : `${path.basename(cf.url)}:${cf.lineNumber + 1}`;
    const fn = cf.functionName === '' ? '(anonymous)' : cf.functionName;
    const key = `${fn}@${where}`;
    const e = agg.get(key) ?? { fn, where, hits: 0 };
    e.hits += n.hitCount ?? 0;
    agg.set(key, e);
  }
  const all = [...agg.values()].filter((e) => e.fn !== '(idle)' && e.fn !== '(program)');
  const busy = all.reduce((a, e) => a + e.hits, 0) || 1;
  return all
    .sort((a, b) => b.hits - a.hits)
    .slice(0, top)
    .map((e) => ({
      fn: e.fn,
      where: e.where,
      selfMs: (e.hits * msPerSample) / iterations,
      share: e.hits / busy,
    }));
}
