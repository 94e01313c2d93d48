// The route table room's gauges (R117) as the room tests read them from the controller's registry.
import type { Registry } from 'prom-client';

/** The sum of a metric's series whose labels include `labels`. */
export async function gauge(
  registry: Registry,
  name: string,
  labels: Record<string, string> = {},
): Promise<number> {
  const m = await registry.getSingleMetric(name)!.get();
  return m.values
    .filter((v) => Object.entries(labels).every(([k, val]) => v.labels[k] === val))
    .reduce((s, v) => s + v.value, 0);
}

/** [the cluster's routes, others' routes, the limit] of the route table. */
export async function roomGauges(registry: Registry): Promise<[number, number, number]> {
  return [
    await gauge(registry, 'route_controller_route_table_routes', { owner: 'cluster' }),
    await gauge(registry, 'route_controller_route_table_routes', { owner: 'other' }),
    await gauge(registry, 'route_controller_route_table_route_limit'),
  ];
}
