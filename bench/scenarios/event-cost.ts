// CPU of one node event in watch mode (issue: cost per node event independent
// of cluster size): a routed cluster of N dual-stack nodes, the controller
// running in watch mode with its defaults (route cache, incremental planning,
// real clock), MemoryRoutes with zero latency. Each sample is one event (a
// join, a leave, an address change) and the reconcile it causes, measured with
// process.cpuUsage from the event to the reconcile's report; nothing else
// changes meanwhile. The same run with incremental planning off shows what a
// plan of the whole cluster costs per event.
import { Registry } from 'prom-client';
import { MemoryRoutes } from '../../src/cloud/memory/memory-routes.ts';
import { MemoryCluster } from '../../src/cluster/memory-cluster.ts';
import type { ReconcileReport } from '../../src/controller/reconcile.ts';
import { RouteController } from '../../src/controller/route-controller.ts';
import { CLUSTER_CIDR_V4, CLUSTER_CIDR_V6, nodeName, podCIDRs, routedNodeSpec } from '../lib/nodes.ts';
import { spread, type Spread } from '../lib/stats.ts';

export type EventKind = 'join' | 'leave' | 'address';

export interface EventCostRow {
  readonly nodes: number;
  readonly incremental: boolean;
  readonly event: EventKind;
  readonly samples: number;
  /** CPU ms (user+system) from the event to its reconcile's report. */
  readonly cpuMs: Spread;
  /** Nodes the reconcile planned (median). */
  readonly planned: number;
  /** Where its routes came from: every sample must be 'cache' for the numbers to mean one event. */
  readonly sources: string[];
}

async function routedCluster(n: number, incremental: boolean) {
  const cluster = new MemoryCluster();
  const routes = new MemoryRoutes({ latencyMs: 0 });
  const now = new Date();
  for (let i = 0; i < n; i++) {
    const name = nodeName('ev', i);
    const pc = podCIDRs(i, true);
    const node = cluster.createNode(routedNodeSpec(name, i, pc, now, true));
    for (const c of pc)
      routes.putRoute({
        name: `kubernetes-${node.metadata!.uid}-${c}`,
        clusterName: 'kubernetes',
        targetNode: name,
        destinationCIDR: c,
      });
  }
  let waiter: ((r: ReconcileReport) => void) | undefined;
  const controller = new RouteController({
    routes,
    nodes: cluster,
    statusWriter: cluster,
    recorder: cluster,
    clusterCIDRs: [CLUSTER_CIDR_V4, CLUSTER_CIDR_V6],
    registry: new Registry(),
    watchBasedReconciliation: true,
    // The memory provider's own declaration (src/cloud/memory/factory.ts), as the daemon runs it.
    routeTargetKeys: ['uid'],
    incrementalPlanning: incremental,
    onReconcile: (r) => {
      const w = waiter;
      waiter = undefined;
      w?.(r);
    },
  });
  const next = (): Promise<ReconcileReport> => new Promise((resolve) => (waiter = resolve));
  const stop = new AbortController();
  const first = next();
  const running = controller.run(stop.signal);
  await first;
  return { cluster, next, stop: () => (stop.abort(), running) };
}

export async function eventCost(
  nodes: number,
  incremental: boolean,
  samples: number,
): Promise<EventCostRow[]> {
  const c = await routedCluster(nodes, incremental);
  const now = new Date();
  const rows: EventCostRow[] = [];
  const events: Record<EventKind, (k: number) => void> = {
    join: (k) => {
      const i = nodes + k;
      c.cluster.createNode(routedNodeSpec(nodeName('ev', i), i, podCIDRs(i, true), now, true));
    },
    leave: (k) => c.cluster.deleteNode(nodeName('ev', nodes + k)), // the nodes that joined leave again
    address: (k) =>
      c.cluster.setAddresses(nodeName('ev', k), [{ type: 'InternalIP', address: `192.0.2.${k}` }]),
  };
  const warmup = 5;
  for (const kind of ['join', 'leave', 'address'] as EventKind[]) {
    const cpu: number[] = [];
    const planned: number[] = [];
    const sources: string[] = [];
    for (let k = 0; k < warmup + samples; k++) {
      const done = c.next();
      const a = process.cpuUsage();
      events[kind](k);
      const report = await done;
      const b = process.cpuUsage(a);
      if (k < warmup) continue;
      cpu.push((b.user + b.system) / 1000);
      planned.push(report.plan?.nodes.length ?? 0);
      sources.push(report.source);
    }
    rows.push({
      nodes,
      incremental,
      event: kind,
      samples,
      cpuMs: spread(cpu)!,
      planned: spread(planned)!.median,
      sources: [...new Set(sources)],
    });
  }
  await c.stop();
  return rows;
}
