// Markdown summary and SVG charts from results.json. Also runnable alone to
// re-render: `node bench/report.ts [results.json] [out dir] [chart prefix]`.
import * as fs from 'node:fs';
import * as path from 'node:path';
import { charts } from './report-charts.ts';
import type { Results } from './lib/results.ts';
import { percentile, round, spread } from './lib/stats.ts';
import { evaluateTargets } from './targets.ts';

export function fmt(x: number | undefined, digits = 1): string {
  if (x === undefined || !Number.isFinite(x)) return '–';
  return round(x, digits).toLocaleString('en-US');
}

/** `median (min–max)` of repeated runs, or the single value. */
export function fmtSpread(values: readonly (number | undefined)[], digits = 1): string {
  const s = spread(values.filter((x): x is number => x !== undefined));
  if (!s) return '–';
  if (s.n === 1) return fmt(s.median, digits);
  return `${fmt(s.median, digits)} (${fmt(s.min, digits)}–${fmt(s.max, digits)})`;
}

export function ratio(ts: number | undefined, go: number | undefined): string {
  if (ts === undefined || go === undefined || !Number.isFinite(ts) || !Number.isFinite(go)) return '–';
  if (go === 0) return ts === 0 ? '1 (both 0)' : '∞';
  return `${round(ts / go, 2)}×`;
}

function table(head: string[], rows: string[][]): string {
  return [
    `| ${head.join(' | ')} |`,
    `|${head.map(() => '---').join('|')}|`,
    ...rows.map((r) => `| ${r.join(' | ')} |`),
  ].join('\n');
}

const med = (xs: readonly (number | undefined)[]): number | undefined =>
  spread(xs.filter((x): x is number => x !== undefined))?.median;

const PAIRS: [string, string, string][] = [
  ['periodic', 'ts-periodic', 'go-periodic'],
  ['watch', 'ts-watch', 'go-watch'],
];

function machineSection(r: Results): string {
  const m = r.meta.machine;
  const v = r.meta.versions;
  return [
    `- Suite: **${r.meta.suite}**, ${r.meta.config.reps} repetition(s) of the timed real-apiserver runs; started ${r.meta.startedAt}, wall time ${fmt((r.meta.wallS ?? 0) / 60, 1)} min`,
    `- Machine: ${m.cpuModel}, ${m.cores} cores, ${m.memoryGiB} GiB RAM, ${m.kernel}, load average at start ${m.loadAvgAtStart.join(' / ')} (shared machine)`,
    ...(r.meta.loadAvg1m
      ? [
          `- Load average (1 min) during the run: median ${fmt(r.meta.loadAvg1m.median, 2)}, max ${fmt(r.meta.loadAvg1m.max, 2)} on ${m.cores} cores (${r.meta.loadAvg1m.samples} samples; other work shares the machine)`,
        ]
      : []),
    `- Versions: Node ${v.node}, kube-apiserver ${v.kubeApiserver ?? '–'}, etcd ${v.etcd ?? '–'}, ${v.go ?? 'Go ?'}; upstream peer ${v.upstreamPeer}; ${v.controller}`,
    ...Object.entries(r.meta.skipped).map(([k, why]) => `- **Skipped ${k}:** ${why}`),
  ].join('\n');
}

function idleSection(r: Results, charts: string): string {
  const rows: string[][] = [];
  for (const x of r.idleVirtual) {
    rows.push([
      `${x.label}`,
      `virtual, ${x.windowHours} h`,
      fmt(x.perHour.list),
      fmt(x.perHour.create + x.perHour.delete),
      fmt(x.reconcilesPerHour),
      String(x.heartbeatCausedReconciles),
      '–',
    ]);
  }
  const goWatch = r.idleReal.find((x) => x.variant === 'go-watch');
  const goPer = r.idleReal.find((x) => x.variant === 'go-periodic');
  for (const x of r.idleReal) {
    const peer = x.variant.startsWith('ts') ? (x.variant === 'ts-watch' ? goWatch : goPer) : undefined;
    rows.push([
      r.meta.variants[x.variant] ?? x.variant,
      `real, ${fmt(x.windowS, 0)} s × ${fmt(3600 / x.windowS, 1)}`,
      fmt(x.perHour.list),
      fmt(x.perHour.create + x.perHour.delete),
      fmt(x.perHour.list),
      '–',
      `${fmt(x.cpuMsPerHour / 1000, 1)} s${peer ? ` (${ratio(x.cpuMsPerHour, peer.cpuMsPerHour)})` : ''}`,
    ]);
  }
  const n = r.idleVirtual[0]?.nodes ?? r.idleReal.length;
  return [
    `## Idle hour`,
    ``,
    `${r.idleVirtual[0]?.nodes ?? '–'} nodes (virtual) / ${r.meta.config.idle.nodes} nodes (real apiserver), routes and conditions already in place, a heartbeat (Ready.lastHeartbeatTime via nodes/status) from every node every 10 s, nothing else changes. Virtual runs count the window after a ${r.idleVirtual[0]?.warmupMinutes ?? '–'} min warm-up; real runs measure a shortened window after start-up and scale it to one hour. One reconcile = one ListRoutes on both sides.`,
    ``,
    table(
      [
        'Variant',
        'Measured',
        'ListRoutes/h',
        'Create+Delete/h',
        'Reconciles/h',
        'Heartbeat-caused',
        'Peer CPU/h (TS ÷ upstream)',
      ],
      rows,
    ),
    ``,
    `![idle](${charts}idle.svg)`,
    n === 0 ? '' : '',
  ].join('\n');
}

function burstSection(r: Results, charts: string): string {
  const b = r.meta.config.burst;
  const by = (id: string): Results['burst'] => r.burst.filter((x) => x.variant === id);
  const metrics: [string, (runs: Results['burst']) => (number | undefined)[], number][] = [
    ['converged runs', (runs) => [runs.filter((x) => x.converged).length], 0],
    ['routes at end of burst phase', (runs) => runs.map((x) => x.routes), 0],
    ['time until all routes exist (s)', (runs) => runs.map((x) => x.convergeS), 1],
    ['ListRoutes calls', (runs) => runs.map((x) => x.burstCalls.list), 0],
    ['CreateRoute calls', (runs) => runs.map((x) => x.burstCalls.create), 0],
    ['latency p50 (s)', (runs) => runs.map((x) => ms(x.latencyMs.p50)), 1],
    ['latency p99 (s)', (runs) => runs.map((x) => ms(x.latencyMs.p99)), 1],
    ['latency max (s)', (runs) => runs.map((x) => ms(x.latencyMs.max)), 1],
    ['nodes without route at the end', (runs) => runs.map((x) => x.latencyMs.missing), 0],
    ['nodes/status patches', (runs) => runs.map((x) => x.apiserver['patch nodes/status'] ?? 0), 0],
    [
      'Events written (create+patch)',
      (runs) => runs.map((x) => (x.apiserver['create events'] ?? 0) + (x.apiserver['patch events'] ?? 0)),
      0,
    ],
    ['peer CPU (s)', (runs) => runs.map((x) => x.cpuMs / 1000), 1],
    ['peer max RSS (MB)', (runs) => runs.map((x) => x.maxRssMB), 0],
  ];
  const rows = metrics.map(([name, f, d]) => {
    const cells = [name];
    for (const [, ts, go] of PAIRS) {
      const a = f(by(ts));
      const g = f(by(go));
      cells.push(fmtSpread(a, d), fmtSpread(g, d), name === 'converged runs' ? '' : ratio(med(a), med(g)));
    }
    return cells;
  });
  const singles: string[][] = [];
  for (const [, ts, go] of PAIRS) {
    for (const id of [ts, go]) {
      const runs = by(id);
      const all = runs.flatMap((x) => x.singlesLatencies);
      const got = all.filter((x): x is number => x !== undefined);
      singles.push([
        r.meta.variants[id] ?? id,
        String(got.length) + '/' + String(all.length),
        fmt(ms(percentile(got, 50)), 2),
        fmt(ms(percentile(got, 99)), 2),
        fmt(ms(got.length ? Math.max(...got) : undefined), 2),
        fmtSpread(
          runs.map((x) => x.singlesCalls.create),
          0,
        ),
      ]);
    }
  }
  const bv = r.burstVirtual.map((x) => [
    x.label,
    x.converged ? fmt(x.convergeS, 0) : `not within ${r.meta.config.burstVirtual.limitHours} h`,
    String(x.calls.list),
    String(x.calls.create),
    String(x.reconciles),
  ]);
  return [
    `## Burst: ${b.nodes} nodes within ${b.spreadMs / 1000} s (real kube-apiserver)`,
    ``,
    `Cloud: ${b.latency} per call, ${b.writeRate} writes/s (token bucket, burst ${b.writeBurst}; over the limit a call fails as throttled, like the TS MemoryRoutes). Latency is per node, from its create being acknowledged by the apiserver (pod CIDR visible) to its route being created. A run stops waiting after ${b.timeoutMs / 1000} s or ${b.stallMs / 1000} s without a new route. Cells: median (min–max) over runs; ratio = TS ÷ upstream medians.`,
    ``,
    table(['Metric', 'TS periodic', 'upstream off', 'ratio', 'TS watch', 'upstream on', 'ratio'], rows),
    ``,
    `![routes over time](${charts}burst-routes.svg)`,
    ``,
    `![CreateRoute calls over time](${charts}burst-creates.svg)`,
    ``,
    `![latency distribution](${charts}burst-latency.svg)`,
    ``,
    `### Right after the burst: ${b.singles} single nodes, ${b.singleGapMs / 1000} s apart`,
    ``,
    table(['Variant', 'routed', 'p50 (s)', 'p99 (s)', 'max (s)', 'CreateRoute calls'], singles),
    ``,
    `![single nodes](${charts}singles.svg)`,
    ``,
    `### The same burst in virtual time (TS only, no apiserver client limits)`,
    ``,
    table(['Variant', 'time until all routes exist (s)', 'ListRoutes', 'CreateRoute', 'reconciles'], bv),
    ``,
    `![burst in virtual time](${charts}burst-virtual.svg)`,
  ].join('\n');
}

const ms = (x: number | undefined): number | undefined => (x === undefined ? undefined : x / 1000);

function failureSection(r: Results, charts: string): string {
  const f = r.meta.config.failure;
  const by = (id: string): Results['failure'] => r.failure.filter((x) => x.variant === id);
  const metrics: [string, (runs: Results['failure']) => (number | undefined)[], number][] = [
    ['recovered runs', (runs) => [runs.filter((x) => x.converged).length], 0],
    ['routes at the end', (runs) => runs.map((x) => x.routes), 0],
    ['recovery: failure end → all routes (s)', (runs) => runs.map((x) => x.recoveryS), 1],
    ['CreateRoute calls while failing', (runs) => runs.map((x) => x.duringFailure.create), 0],
    ['ListRoutes calls while failing', (runs) => runs.map((x) => x.duringFailure.list), 0],
    ['CreateRoute calls after recovery', (runs) => runs.map((x) => x.afterFailure.create), 0],
  ];
  const rows = metrics.map(([name, fn, d]) => {
    const cells = [name];
    for (const [, ts, go] of PAIRS) {
      const a = fn(by(ts));
      const g = fn(by(go));
      cells.push(fmtSpread(a, d), fmtSpread(g, d), name === 'recovered runs' ? '' : ratio(med(a), med(g)));
    }
    return cells;
  });
  return [
    `## Failure recovery: every create fails for ${f.failForMs / 1000} s`,
    ``,
    `${f.nodes} nodes created right after the controller started; the cloud answers every CreateRoute with a retryable HTTP 503 for the first ${f.failForMs / 1000} s of the process, then recovers (${f.latency} per call, no rate limit). Runs wait ${f.recoveryTimeoutMs / 1000} s after the failure ends.`,
    ``,
    table(['Metric', 'TS periodic', 'upstream off', 'ratio', 'TS watch', 'upstream on', 'ratio'], rows),
    ``,
    `![failure recovery](${charts}failure.svg)`,
  ].join('\n');
}

function costSection(r: Results, charts: string): string {
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
    r.profile
      ? `CPU profile of the in-process reconcile at ${r.profile.nodes} nodes (self time, top functions):\n\n${prof}`
      : '',
  ].join('\n');
}

function memorySection(r: Results, charts: string): string {
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

export function summaryMarkdown(r: Results, chartPrefix = ''): string {
  const targets = evaluateTargets(r);
  return [
    `# Benchmark summary (${r.meta.suite})`,
    ``,
    machineSection(r),
    ``,
    `## Targets`,
    ``,
    table(
      ['Target', 'Measured', 'Result'],
      targets.map((t) => [t.name, t.measured, t.pass === undefined ? 'n/a' : t.pass ? 'PASS' : '**MISS**']),
    ),
    ``,
    idleSection(r, chartPrefix),
    ``,
    burstSection(r, chartPrefix),
    ``,
    failureSection(r, chartPrefix),
    ``,
    costSection(r, chartPrefix),
    ``,
    memorySection(r, chartPrefix),
    ``,
  ].join('\n');
}

export async function writeReport(r: Results, outDir: string, chartPrefix = ''): Promise<void> {
  await charts(r, outDir);
  fs.writeFileSync(path.join(outDir, 'summary.md'), summaryMarkdown(r, chartPrefix));
}

if (import.meta.main) {
  const file = process.argv[2] ?? path.join(import.meta.dirname, 'out', 'results.json');
  const outDir = process.argv[3] ?? path.dirname(file);
  fs.mkdirSync(outDir, { recursive: true });
  await writeReport(JSON.parse(fs.readFileSync(file, 'utf8')) as Results, outDir, process.argv[4] ?? '');
}
