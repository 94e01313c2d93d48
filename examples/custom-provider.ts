// A complete, runnable example: a custom Routes provider (a Map standing in
// for a cloud's route table) driven by the RouteController in watch mode
// against the in-memory cluster. Run: npx node examples/custom-provider.ts
import {
  MemoryCluster,
  RouteController,
  type CallOptions,
  type CloudProvider,
  type Route,
  type Routes,
  throwIfAborted,
} from '../src/index.ts';

/** A provider keeps only cloud translation: no retries, no counting (SPEC R6, R7). */
export class MapRoutes implements Routes {
  readonly table = new Map<string, Route>();

  async listRoutes(_clusterName: string, opts: CallOptions): Promise<Route[]> {
    throwIfAborted(opts.signal);
    return [...this.table.values()];
  }

  async createRoute(
    clusterName: string,
    nameHint: string,
    route: Readonly<Route>,
    opts: CallOptions,
  ): Promise<void> {
    throwIfAborted(opts.signal);
    // Idempotent (R2): same destination and target is a success; another target is replaced.
    this.table.set(route.destinationCIDR, {
      ...route,
      name: `${clusterName}-${nameHint}-${route.destinationCIDR}`,
    });
  }

  async deleteRoute(_clusterName: string, route: Readonly<Route>, opts: CallOptions): Promise<void> {
    throwIfAborted(opts.signal);
    this.table.delete(route.destinationCIDR); // deleting a missing route succeeds (R3)
  }
}

export async function runExample(): Promise<{ routes: string[]; condition: string | undefined }> {
  const cloud = new MapRoutes();
  const provider: CloudProvider = { name: 'map', routes: () => cloud };
  const cluster = new MemoryCluster();
  cluster.createNode({
    name: 'node-a',
    podCIDRs: ['10.244.1.0/24'],
    addresses: [{ type: 'InternalIP', address: '192.0.2.10' }],
  });

  const controller = new RouteController({
    routes: provider.routes()!,
    nodes: cluster, // any NodeSource: the Kubernetes informer in the daemon
    statusWriter: cluster,
    recorder: cluster,
    clusterCIDRs: ['10.244.0.0/16'],
    watchBasedReconciliation: true,
    minReconcileIntervalMs: 100,
  });
  const stop = new AbortController();
  const running = controller.run(stop.signal);
  // The first reconcile runs right after the cache synced; wait for its condition write.
  const written = (): boolean => cluster.patches.length > 0;
  for (let i = 0; i < 500 && !written(); i++) await new Promise((r) => setTimeout(r, 10));
  stop.abort();
  await running;
  const node = cluster.get('node-a');
  const c = node?.status?.conditions?.find((x) => x.type === 'NetworkUnavailable');
  return {
    routes: [...cloud.table.values()].map((r) => `${r.destinationCIDR} -> ${r.targetNode}`),
    condition: c && `${c.status}/${c.reason}`,
  };
}

if (import.meta.main) {
  const { routes, condition } = await runExample();
  console.log('routes:', routes);
  console.log('node-a NetworkUnavailable:', condition);
}
