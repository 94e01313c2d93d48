// The churn hour in virtual time (issue: routes within one cloud call of a node
// event, at about one ListRoutes per hour): N routed nodes heartbeating, plus
// joins, leaves and address changes at seeded random times. Counts cloud calls
// against what the changes require, reconciles caused by heartbeats (by
// comparison with the same hour without heartbeats) and wrong deletions.
import { canonicalCIDR } from '../../src/core/cidr.ts';
import { seededRandom } from '../../src/core/random.ts';
import { neededBy } from '../../src/sim/needed-by.ts';
import type { CallOptions, Route } from '../../src/core/types.ts';
import { nodeName, podCIDRv4, routedNodeSpec } from '../lib/nodes.ts';
import { addRoutedNode, rig, VIRTUAL_LABELS, type Rig, type VirtualMode } from './virtual.ts';

export interface ChurnConfig {
  readonly nodes: number;
  readonly joins: number;
  readonly leaves: number;
  readonly addressChanges: number;
  readonly heartbeatMs: number;
  readonly warmupMinutes: number;
  readonly seed: number;
}

export interface ChurnVirtualResult {
  readonly mode: VirtualMode;
  readonly label: string;
  readonly seed: number;
  readonly nodes: number;
  readonly changes: { joins: number; leaves: number; addressChanges: number };
  /** Cloud calls in the hour. */
  readonly calls: { list: number; create: number; delete: number };
  /** Writes the changes require: one create per join, one delete per leave. */
  readonly required: { create: number; delete: number };
  readonly reconciles: number;
  readonly heartbeatCausedReconciles: number;
  readonly wrongDeletes: number;
  readonly unrouted: number;
  readonly wallMs: number;
}

type Change = { at: number; kind: 'join' | 'leave' | 'address'; i: number };

/** The hour's changes: joins of new nodes, leaves and address changes of initial ones, at seeded times. */
export function churnPlan(cfg: ChurnConfig): Change[] {
  const random = seededRandom(cfg.seed);
  const hour = 3_600_000;
  const pick = new Set<number>();
  const initial = (): number => {
    for (;;) {
      const i = Math.floor(random() * cfg.nodes);
      if (!pick.has(i)) return (pick.add(i), i);
    }
  };
  const out: Change[] = [];
  for (let k = 0; k < cfg.joins; k++) out.push({ at: random() * hour, kind: 'join', i: cfg.nodes + k });
  for (let k = 0; k < cfg.leaves; k++) out.push({ at: random() * hour, kind: 'leave', i: initial() });
  for (let k = 0; k < cfg.addressChanges; k++)
    out.push({ at: random() * hour, kind: 'address', i: initial() });
  return out.sort((a, b) => a.at - b.at);
}

async function runHour(
  mode: VirtualMode,
  cfg: ChurnConfig,
  heartbeats: boolean,
): Promise<{ r: Rig; starts: string[]; wrong: number; t0: number }> {
  const r = rig(mode, { latencyMs: 20 });
  const names: string[] = [];
  for (let i = 0; i < cfg.nodes; i++) {
    addRoutedNode(r, i, 'churn');
    names.push(nodeName('churn', i));
  }
  // A wrong delete: a route a node present at that moment still needs (src/sim/needed-by.ts).
  let wrong = 0;
  const del = r.routes.deleteRoute.bind(r.routes);
  r.routes.deleteRoute = (cluster: string, route: Readonly<Route>, opts: CallOptions) => {
    if (neededBy(r.cluster.get(route.targetNode), route)) wrong++;
    return del(cluster, route, opts);
  };
  r.running = r.controller.run(r.stop.signal);
  const live = new Set(names);
  if (heartbeats) {
    const step = (): void => {
      if (r.stop.signal.aborted) return;
      for (const n of live) r.cluster.heartbeat(n);
      r.clock.setTimeout(step, cfg.heartbeatMs);
    };
    r.clock.setTimeout(step, cfg.heartbeatMs);
  }
  await r.clock.advance(cfg.warmupMinutes * 60_000);
  const t0 = r.clock.now();
  for (const ch of churnPlan(cfg)) {
    r.clock.setTimeout(() => {
      const name = nodeName('churn', ch.i);
      if (ch.kind === 'join') {
        r.cluster.createNode(routedNodeSpec(name, ch.i, [podCIDRv4(ch.i)], new Date(r.clock.now())));
        live.add(name);
      } else if (ch.kind === 'leave') {
        r.cluster.deleteNode(name);
        live.delete(name);
      } else {
        r.cluster.setAddresses(name, [{ type: 'InternalIP', address: `172.31.${ch.i >> 8}.${ch.i & 255}` }]);
      }
    }, ch.at);
  }
  await r.clock.advance(3_600_000);
  const starts = r.reports
    .filter((x) => x.at - x.report.durationMs >= t0)
    .map((x) => `${x.at - x.report.durationMs}:${x.report.trigger}`);
  r.stop.abort();
  await r.clock.advance(60_000);
  await r.running;
  return { r, starts, wrong, t0 };
}

export async function churnHourVirtual(mode: VirtualMode, cfg: ChurnConfig): Promise<ChurnVirtualResult> {
  const wall = Date.now();
  const { r, starts, wrong, t0 } = await runHour(mode, cfg, true);
  const control = new Set((await runHour(mode, cfg, false)).starts);
  const calls = r.routes.calls.filter((c) => c.start >= t0 && c.start < t0 + 3_600_000);
  const expected = new Set(
    r.cluster.list().flatMap((n) => (n.spec?.podCIDRs ?? []).map((p) => canonicalCIDR(p))),
  );
  const routed = new Set(r.routes.snapshot().map((x) => canonicalCIDR(x.destinationCIDR)));
  return {
    mode,
    label: VIRTUAL_LABELS[mode],
    seed: cfg.seed,
    nodes: cfg.nodes,
    changes: { joins: cfg.joins, leaves: cfg.leaves, addressChanges: cfg.addressChanges },
    calls: {
      list: calls.filter((c) => c.op === 'list').length,
      create: calls.filter((c) => c.op === 'create').length,
      delete: calls.filter((c) => c.op === 'delete').length,
    },
    required: { create: cfg.joins, delete: cfg.leaves },
    reconciles: starts.length,
    heartbeatCausedReconciles: starts.filter((s) => !control.has(s)).length,
    wrongDeletes: wrong,
    unrouted: [...expected].filter((c) => !routed.has(c)).length,
    wallMs: Date.now() - wall,
  };
}
