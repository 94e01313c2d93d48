// Summary sections for reconcile cost and memory.
import { fmt, ratio, table } from './lib/format.ts';
import { round } from './lib/stats.ts';
import type { Results } from './lib/results.ts';

export function costSection(r: Results, charts: string): string {
  const base = new Map<number, number>();
  for (const x of r.reconcileCost) if (!base.has(x.change)) base.set(x.change, x.usPerNode);
  const rows = r.reconcileCost.map((x) => [
    fmt(x.nodes, 0),
    fmt(x.routes, 0),
    `${x.change * 100}%`,
    `${fmt(x.planMs.median, 2)} (${fmt(x.planMs.min, 2)}–${fmt(x.planMs.max, 2)})`,
    `${fmt(x.reconcileMs.median, 2)} (${fmt(x.reconcileMs.min, 2)}–${fmt(x.reconcileMs.max, 2)})`,
    fmt(x.usPerNode, 2),
    `${round(x.usPerNode / (base.get(x.change) ?? x.usPerNode), 2)}`,
  ]);
  const nodes = [...new Set(r.processCost.map((x) => x.nodes))];
  const prow = nodes.map((n) => {
    const ts = r.processCost.find((x) => x.nodes === n && x.kind === 'ts');
    const go = r.processCost.find((x) => x.nodes === n && x.kind === 'go');
    return [
      fmt(n, 0),
      `${fmt(ts?.cpuMsPerReconcile, 2)} (${ts?.reconciles ?? 0} runs)`,
      `${fmt(go?.cpuMsPerReconcile, 2)} (${go?.reconciles ?? 0} runs)`,
      ratio(ts?.cpuMsPerReconcile, go?.cpuMsPerReconcile),
    ];
  });
  // Sampling inflates absolute times, so shares are applied to the unprofiled median.
  const profiled = r.reconcileCost.find((x) => x.nodes === r.profile?.nodes && x.change === 0);
  const prof = r.profile
    ? table(
        ['function', 'where', 'share of self time', '≈ ms of the median reconcile'],
        r.profile.entries.map((e) => [
          `\`${e.fn}\``,
          e.where,
          `${fmt(e.share * 100, 1)}%`,
          fmt(e.share * (profiled?.reconcileMs.median ?? NaN), 2),
        ]),
      )
    : '';
  return [
    `## Reconcile cost`,
    ``,
    `In process: CPU time (process.cpuUsage, user+system) of \`planReconcile\` alone and of the controller's \`reconcileOnce\` (ListRoutes + plan + creates + condition checks; MemoryRoutes with zero latency, MemoryCluster, metrics on, logger off), dual-stack nodes, nothing to change or 1% of routes missing before each pass. ${r.meta.config.cost.iterations} measured passes after 10 warm-up passes; median (min–max) ms. The last column is µs per node relative to the smallest size: 1.0 means linear.`,
    ``,
    table(['nodes', 'routes', 'to change', 'plan ms', 'reconcile ms', 'µs/node', 'vs smallest'], rows),
    ``,
    `Whole process against the real apiserver (periodic mode with a 1 ms period, nothing to change, CPU of the peer process ÷ ListRoutes calls; includes informer, logging and GC; upstream logs one Info line per node and CIDR):`,
    ``,
    table(['nodes (dual-stack)', 'TS ms CPU/reconcile', 'upstream ms CPU/reconcile', 'ratio'], prow),
    ``,
    `![reconcile cost](${charts}cost.svg)`,
    ``,
    eventCostText(r),
    ``,
    r.profile
      ? `CPU profile of the in-process reconcile at ${r.profile.nodes} nodes (self time, top functions):\n\n${prof}`
      : '',
  ].join('\n');
}

export function memorySection(r: Results, charts: string): string {
  const nodes = [...new Set(r.memory.map((x) => x.nodes))];
  const rows = nodes.map((n) => {
    const get = (k: string): Results['memory'][number] | undefined =>
      r.memory.find((x) => x.nodes === n && x.kind === k);
    const ts = get('ts');
    const js = get('ts-js');
    const go = get('go');
    const cell = (m: typeof ts): string =>
      m ? `${fmt(m.rssMB, 0)} (${fmt(m.baselineMB, 0)} + ${fmt(m.rssMB - m.baselineMB, 0)})` : '–';
    return [fmt(n, 0), cell(ts), cell(js), cell(go), ratio((js ?? ts)?.rssMB, go?.rssMB)];
  });
  return [
    `## Memory`,
    ``,
    `Resident set size (VmRSS) of each peer in watch mode once its cache holds N realistic dual-stack nodes (kubelet-like labels, 4 conditions, 40 images, nodeInfo, managedFields; about 11 KB of JSON each) and the initial reconcile is done. Cells: RSS MB (baseline + growth), where baseline is the process's first report, before its informer listed anything. "TS source" runs the .ts files through Node's type stripping; "TS compiled" is the same peer compiled by tsc, as the published package runs.`,
    ``,
    table(['nodes', 'TS source', 'TS compiled', 'upstream', 'ratio (TS compiled ÷ upstream)'], rows),
    ``,
    `![memory](${charts}memory.svg)`,
    ``,
    informerMemoryTable(r),
  ].join('\n');
}

interface MemSample {
  rssMiB?: number;
  heapUsedMiB?: number;
}

/** The kube team's scripts/informer-memory.ts: fresh child processes, RSS after forced GC. */
function informerMemoryTable(r: Results): string {
  const im = r.informerMemory;
  if (!im) return '';
  const cell = (x: unknown): string => {
    const s = x as MemSample | undefined;
    return s?.rssMiB === undefined ? '–' : `${fmt(s.rssMiB, 0)} (heap ${fmt(s.heapUsedMiB, 0)})`;
  };
  const rows = ['informer', 'controller', 'raw'].map((mode) => {
    const m = (im[mode] ?? {}) as Record<string, unknown>;
    return [
      mode,
      cell(m['started']),
      cell(m['imported']),
      cell(m['synced'] ?? m['held']),
      cell(m['reconciled']),
      fmt(m['peakRssMiB'] as number | undefined, 0),
    ];
  });
  return [
    `Breakdown by \`scripts/informer-memory.ts\` (${String(im['nodes'])} nodes of about ${fmt(im['avgNodeJsonBytes'] as number | undefined, 0)} bytes of JSON; each mode in a fresh \`--expose-gc\` process, sampled after a forced GC; MiB): \`informer\` = client + NodeInformer, \`controller\` = plus RouteController after its first reconcile, \`raw\` = the untransformed list held as parsed JSON.`,
    ``,
    table(['mode', 'at start', 'after imports', 'synced / held', 'after first reconcile', 'peak RSS'], rows),
  ].join('\n');
}

function eventCostText(r: Results): string {
  const ev = r.eventCost ?? [];
  if (ev.length === 0) return '';
  const rows = ev.map((x) => [
    fmt(x.nodes, 0),
    x.incremental ? 'on (default)' : 'off',
    x.event,
    `${fmt(x.cpuMs.median, 3)} (${fmt(x.cpuMs.min, 3)}–${fmt(x.cpuMs.max, 3)})`,
    fmt(x.planned, 0),
    x.sources.join(', '),
  ]);
  return [
    `One node event in watch mode, in process: a routed cluster of dual-stack nodes, the controller running with its defaults (route cache, incremental planning, real clock; MemoryRoutes with zero latency), CPU time (process.cpuUsage) from the event to its reconcile's report, ${ev[0]!.samples} events of each kind after 5 warm-up ones; median (min–max) ms. A join adds a routed-to-be node, a leave deletes one of those, an address change rewrites a node's InternalIP. "off" plans every node on each event, as before incremental planning (SPEC R103).`,
    ``,
    table(['nodes', 'incremental planning', 'event', 'CPU ms', 'nodes planned', 'routes from'], rows),
  ].join('\n');
}
