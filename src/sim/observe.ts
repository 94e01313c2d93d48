// Reads what an operator would see: the controller's Prometheus registry and
// the end state of cluster and cloud.
import type { Registry } from 'prom-client';
import type { MemoryCluster } from '../cluster/memory-cluster.ts';
import type { MemoryRoutes } from '../cloud/memory/memory-routes.ts';
import { canonicalCIDR } from '../core/cidr.ts';
import { currentNetworkCondition } from '../core/condition.ts';

export interface MetricTotals {
  /** route_controller_cloud_api_calls_total by operation, then outcome. */
  readonly cloudCalls: Record<string, Record<string, number>>;
  /** route_controller_route_corrections_total by operation. */
  readonly corrections: Record<string, number>;
  /** workqueue_retries_total{name="Routes"}. */
  readonly retries: number;
  /** route_controller_route_creation_latency_seconds: count and sum over all families. */
  readonly creationLatency: { readonly count: number; readonly sum: number };
}

interface MetricValue {
  readonly value: number;
  readonly labels: Record<string, string | number | undefined>;
  readonly metricName?: string;
}

async function values(registry: Registry, name: string): Promise<readonly MetricValue[]> {
  const m = registry.getSingleMetric(name);
  if (!m) return [];
  return (await m.get()).values as readonly MetricValue[];
}

export async function collectMetrics(registry: Registry): Promise<MetricTotals> {
  const cloudCalls: Record<string, Record<string, number>> = {};
  for (const v of await values(registry, 'route_controller_cloud_api_calls_total')) {
    const op = String(v.labels['operation']);
    const outcome = String(v.labels['outcome']);
    const byOutcome = (cloudCalls[op] ??= {});
    byOutcome[outcome] = (byOutcome[outcome] ?? 0) + v.value;
  }
  const corrections: Record<string, number> = {};
  for (const v of await values(registry, 'route_controller_route_corrections_total')) {
    const op = String(v.labels['operation']);
    corrections[op] = (corrections[op] ?? 0) + v.value;
  }
  let retries = 0;
  for (const v of await values(registry, 'workqueue_retries_total')) retries += v.value;
  let count = 0;
  let sum = 0;
  for (const v of await values(registry, 'route_controller_route_creation_latency_seconds')) {
    if (v.metricName?.endsWith('_count')) count += v.value;
    else if (v.metricName?.endsWith('_sum')) sum += v.value;
  }
  return { cloudCalls, corrections, retries, creationLatency: { count, sum } };
}

export interface FinalState {
  readonly nodes: number;
  readonly routes: number;
  /** Nodes without a route for their pod CIDR to themselves. */
  readonly missingRoutes: number;
  /** Routes whose target is no current node, or that point at the wrong node. */
  readonly staleRoutes: number;
  /** Nodes whose NetworkUnavailable is not False/RouteCreated. */
  readonly badConditions: number;
}

export function finalState(cluster: MemoryCluster, cloud: MemoryRoutes): FinalState {
  const nodes = cluster.list();
  const routes = cloud.snapshot();
  const byDest = new Map<string, string>();
  for (const r of routes) byDest.set(canonicalCIDR(r.destinationCIDR) ?? r.destinationCIDR, r.targetNode);
  const wanted = new Map<string, string>();
  let missingRoutes = 0;
  let badConditions = 0;
  for (const n of nodes) {
    const name = n.metadata?.name ?? '';
    let ok = true;
    for (const p of n.spec?.podCIDRs ?? []) {
      const c = canonicalCIDR(p) ?? p;
      wanted.set(c, name);
      if (byDest.get(c) !== name) ok = false;
    }
    if (!ok) missingRoutes++;
    const cond = currentNetworkCondition(n);
    if (cond?.status !== 'False' || cond.reason !== 'RouteCreated') badConditions++;
  }
  let staleRoutes = 0;
  for (const [dest, target] of byDest) if (wanted.get(dest) !== target) staleRoutes++;
  return { nodes: nodes.length, routes: routes.length, missingRoutes, staleRoutes, badConditions };
}
