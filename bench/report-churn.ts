// The churn-hour section of the benchmark summary.
import { table } from './lib/format.ts';
import type { Results } from './lib/results.ts';

export function churnSection(r: Results): string {
  const c = r.meta.config.churnVirtual;
  const rows = r.churnVirtual ?? [];
  if (!c || rows.length === 0) return '';
  return [
    `## Churn hour (virtual time)`,
    ``,
    `${c.nodes} routed nodes heartbeating every ${c.heartbeatMs / 1000} s; in one hour (after ${c.warmupMinutes} min of warm-up) ${c.joins} nodes join, ${c.leaves} leave and ${c.addressChanges} change their InternalIP, at random times (seed ${c.seed}). Cloud: 20 ms per call, routes listed without addresses, as the \`memory\` provider does. Required writes: one CreateRoute per join, one DeleteRoute per leave (an address change needs none). Heartbeat-caused reconciles: reconcile starts that the same hour without heartbeats does not have. A wrong delete removes the route of a node that exists and still has that pod CIDR.`,
    ``,
    table(
      [
        'Variant',
        'ListRoutes',
        'CreateRoute (required)',
        'DeleteRoute (required)',
        'reconciles',
        'heartbeat-caused',
        'wrong deletes',
        'unrouted at the end',
      ],
      rows.map((x) => [
        x.label,
        String(x.calls.list),
        `${x.calls.create} (${x.required.create})`,
        `${x.calls.delete} (${x.required.delete})`,
        String(x.reconciles),
        String(x.heartbeatCausedReconciles),
        String(x.wrongDeletes),
        String(x.unrouted),
      ]),
    ),
  ].join('\n');
}
