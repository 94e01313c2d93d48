// Test harness: a controller wired to the in-memory cloud and cluster on a
// virtual clock. Shared by the unit tests (not part of the published build).
import { Registry } from 'prom-client';
import { MemoryCluster, type NodeSpecInput } from '../cluster/memory-cluster.ts';
import { MemoryRoutes, type MemoryRoutesOptions, type StoredRoute } from '../cloud/memory/memory-routes.ts';
import { canonicalCIDR } from '../core/cidr.ts';
import { VirtualClock } from '../core/clock.ts';
import { seededRandom } from '../core/random.ts';
import { MemoryLogger } from '../core/ports.ts';
import type { RouteControllerOptions } from '../controller/options.ts';
import type { ReconcileReport } from '../controller/reconcile.ts';
import { RouteController } from '../controller/route-controller.ts';

export interface HarnessOptions {
  clusterCIDRs?: string[];
  clusterName?: string;
  nodes?: NodeSpecInput[];
  routes?: (Partial<StoredRoute> & { destinationCIDR: string })[];
  cloud?: MemoryRoutesOptions;
  controller?: Partial<RouteControllerOptions>;
  synced?: boolean;
  seed?: number;
}

export { seededRandom };

export function harness(o: HarnessOptions = {}) {
  const clock = new VirtualClock();
  const random = seededRandom(o.seed ?? 1);
  const cloud = new MemoryRoutes({ clock, random, ...o.cloud });
  const cluster = new MemoryCluster({ clock, synced: o.synced ?? true });
  const clusterName = o.clusterName ?? 'my-k8s';
  for (const r of o.routes ?? []) cloud.putRoute({ clusterName, ...r });
  for (const n of o.nodes ?? []) cluster.createNode(n);
  const logger = new MemoryLogger();
  const registry = new Registry();
  const reports: ReconcileReport[] = [];
  const controller = new RouteController({
    routes: cloud,
    nodes: cluster,
    statusWriter: cluster,
    recorder: cluster,
    logger,
    clock,
    random,
    registry,
    clusterName,
    clusterCIDRs: o.clusterCIDRs ?? ['10.120.0.0/16'],
    onReconcile: (r) => reports.push(r),
    // As the memory provider declares it: a cloud without a write limit is not probed slowly (R137).
    ...(o.cloud?.writeRateLimit === undefined ? { cloudWriteLimit: 'unlimited' as const } : {}),
    ...o.controller,
  });
  const stop = new AbortController();
  let running: Promise<void> | undefined;
  return {
    clock,
    cloud,
    cluster,
    logger,
    registry,
    controller,
    reports,
    clusterName,
    /** One reconcile now, advancing virtual time until it settles. */
    reconcile: (trigger: 'periodic' | 'node_change' = 'node_change', signal = new AbortController().signal) =>
      settle(clock, controller.reconcileOnce(trigger, signal)),
    start(): void {
      running = controller.run(stop.signal);
    },
    async stop(): Promise<void> {
      stop.abort();
      await clock.advance(0);
      await running;
    },
    /** Sorted "canonical->target[addr,...]" strings of the cloud's table. */
    routeSet(withAddresses = false): string[] {
      return cloud
        .snapshot()
        .map((r) => {
          const addrs = withAddresses
            ? `[${r.targetNodeAddresses
                .map((a) => `${a.type}=${a.address}`)
                .sort()
                .join(',')}]`
            : '';
          return `${canonicalCIDR(r.destinationCIDR) ?? r.destinationCIDR}->${r.targetNode}${r.blackhole ? '(blackhole)' : ''}${addrs}`;
        })
        .sort();
    },
    /** The NetworkUnavailable status/reason per node name, from the cluster's objects. */
    conditions(): Record<string, string> {
      const out: Record<string, string> = {};
      for (const n of cluster.list()) {
        const c = n.status?.conditions?.find((x) => x.type === 'NetworkUnavailable');
        out[n.metadata!.name!] = c ? `${c.status}/${c.reason}` : 'none';
      }
      return out;
    },
    /** Counter value from the registry. */
    async metric(name: string, labels: Record<string, string> = {}): Promise<number> {
      const m = registry.getSingleMetric(name);
      if (!m) throw new Error(`no metric ${name}`);
      const data = await m.get();
      return data.values
        .filter((v) => Object.entries(labels).every(([k, val]) => v.labels[k] === val))
        .filter((v) => !('metricName' in v) || v.metricName === name || v.metricName === `${name}_count`)
        .reduce((s, v) => s + v.value, 0);
    },
  };
}

/** Advances virtual time in small steps until `p` settles (at most 1 virtual hour). */
export async function settle<T>(clock: VirtualClock, p: Promise<T>, stepMs = 10): Promise<T> {
  let done = false;
  p.then(
    () => (done = true),
    () => (done = true),
  );
  const end = clock.now() + 3_600_000;
  await clock.advance(0);
  while (!done && clock.now() < end) {
    const next = clock.nextTimerAt();
    await clock.advanceTo(next === undefined ? clock.now() + stepMs : Math.min(next, clock.now() + 60_000));
  }
  return p;
}

export type Harness = ReturnType<typeof harness>;

export const ip = (address: string) => [{ type: 'InternalIP', address }];

/** Watch mode with one routed-to-be node `a` (10.120.0.0/24 via 10.0.0.1); options merge in. */
export function watching(extra: HarnessOptions = {}): Harness {
  return harness({
    nodes: [{ name: 'a', podCIDRs: ['10.120.0.0/24'], addresses: ip('10.0.0.1') }],
    ...extra,
    controller: { watchBasedReconciliation: true, ...extra.controller },
  });
}

/** Starts the controller and lets the first (listing) reconcile finish. */
export async function started(h: Harness): Promise<void> {
  h.start();
  await h.clock.advance(1);
  if (h.cloud.count('list') !== 1)
    throw new Error(`the first reconcile lists (R65: invalid at start): ${h.cloud.count('list')} lists`);
}
