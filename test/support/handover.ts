// What the handover tests share: nodes as a cloud's own cloud-controller-manager left them (its
// route controller's NetworkUnavailable condition), that CCM's command line read by our flag
// parser, and the controller the daemon would build from them, with its route writes counted.
import assert from 'node:assert/strict';
import { parseFlags, type DaemonFlags } from '../../src/cli/flags.ts';
import type { MemoryCluster, NodeSpecInput } from '../../src/cluster/memory-cluster.ts';
import type { RouteController } from '../../src/controller/route-controller.ts';
import type { CallOptions, CloudProvider, NodeCondition, Route, Routes } from '../../src/core/types.ts';
import { clusterController, targetKeysOf } from './cluster-controller.ts';

/** As the CCM's route controller leaves a routed node (upstream updateNetworkingCondition). */
export const CCM_ROUTED: NodeCondition = {
  type: 'NetworkUnavailable',
  status: 'False',
  reason: 'RouteCreated',
  message: 'RouteController created a route',
  lastTransitionTime: new Date(0).toISOString(),
};

/** A node in the cluster; `routed`: with the condition the CCM's route controller left on it. */
export function addNode(cluster: MemoryCluster, node: NodeSpecInput, routed: boolean): void {
  cluster.createNode({ ...node, ...(routed ? { conditions: [CCM_ROUTED] } : {}) });
}

/** The CCM's command line through our flag parser, which must take it as it is. */
export function ccmFlags(argv: readonly string[]): DaemonFlags {
  const parsed = parseFlags(argv);
  assert.deepEqual(parsed.errors, []);
  return parsed.flags;
}

/** Records the writes the controller sends through the provider, as `create|delete <cidr>`. */
export function counting(inner: Routes): { routes: Routes; writes: string[] } {
  const writes: string[] = [];
  return {
    writes,
    routes: {
      listRoutes: (c: string, o: CallOptions) => inner.listRoutes(c, o),
      createRoute: (c: string, h: string, r: Readonly<Route>, o: CallOptions) => {
        writes.push(`create ${r.destinationCIDR}`);
        return inner.createRoute(c, h, r, o);
      },
      deleteRoute: (c: string, r: Readonly<Route>, o: CallOptions) => {
        writes.push(`delete ${r.destinationCIDR}`);
        return inner.deleteRoute(c, r, o);
      },
    },
  };
}

/** The controller the daemon builds from the CCM's flags and the provider (its routes, or `routes`). */
export function handoverController(
  cluster: MemoryCluster,
  provider: CloudProvider,
  flags: DaemonFlags,
  routes: Routes = provider.routes()!,
): RouteController {
  return clusterController(cluster, {
    routes,
    clusterName: flags.clusterName,
    clusterCIDRs: flags.clusterCIDRs,
    ...targetKeysOf(provider),
  });
}
