// The churn-hour section of the benchmark summary.
import { table } from './lib/format.ts';
import type { Results } from './lib/results.ts';

export function churnSection(r: Results): string {
  const c = r.meta.config.churnVirtual;
  const rows = r.churnVirtual ?? [];
  if (!c || rows.length === 0) return '';
  const real = r.churnReal ?? [];
  const rc = r.meta.config.churnReal;
  const realPart =
    real.length === 0 || !rc
      ? []
      : [
          ``,
          `### The same changes against the real kube-apiserver, compressed`,
          ``,
          `The hour's changes (same seed) with their times scaled into ${rc.windowMs / 1000} s, ${rc.nodes} routed nodes heartbeating every ${c.heartbeatMs / 1000} s (${real[0]!.heartbeats} heartbeats), the peers side by side on one cluster, each with its own cloud (${rc.latency} per call, ${rc.writeRate} writes/s). Counted from the end of a 20 s warm-up to 15 s after the window. Compressed, the changes come 6× closer together than in the hour, so a controller that lists per change (R44: at most one list per 10 s) lists less often than it would in the hour.`,
          ``,
          table(
            ['Variant', 'ListRoutes', 'CreateRoute (required)', 'DeleteRoute (required)', 'routes (wanted)'],
            real.map((x) => [
              r.meta.variants[x.variant] ?? x.variant,
              String(x.calls.list),
              `${x.calls.create} (${x.required.create})`,
              `${x.calls.delete} (${x.required.delete})`,
              `${x.routes} (${x.routesWanted})`,
            ]),
          ),
        ];
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
    ...realPart,
  ].join('\n');
}
