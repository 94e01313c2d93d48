// A RouteController on a MemoryCluster (the cluster is its node source, status writer and Event
// recorder), reconciled by hand: how the provider tests that need no apiserver drive a real
// plug-in against a fake cloud, one reconcile at a time.
import type { MemoryCluster } from '../../src/cluster/memory-cluster.ts';
import type { RouteControllerOptions } from '../../src/controller/options.ts';
import type { ReconcileReport } from '../../src/controller/reconcile.ts';
import { RouteController } from '../../src/controller/route-controller.ts';
import type { CloudProvider } from '../../src/core/types.ts';

export type ClusterControllerOptions = Omit<RouteControllerOptions, 'nodes' | 'statusWriter' | 'recorder'>;

export function clusterController(cluster: MemoryCluster, o: ClusterControllerOptions): RouteController {
  return new RouteController({ ...o, nodes: cluster, statusWriter: cluster, recorder: cluster });
}

/** The provider's routeTargetKeys, as the daemon passes them on (R67). */
export function targetKeysOf(provider: CloudProvider): Pick<RouteControllerOptions, 'routeTargetKeys'> {
  return provider.routeTargetKeys ? { routeTargetKeys: provider.routeTargetKeys } : {};
}

/** One periodic reconcile, never aborted. */
export function reconcileNow(controller: RouteController): Promise<ReconcileReport> {
  return controller.reconcileOnce('periodic', new AbortController().signal);
}
