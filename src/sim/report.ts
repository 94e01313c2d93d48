// Plain-text output of the simulator: scenario line, progress lines, the
// side-by-side table and the checks.
import { formatDuration } from '../core/duration.ts';
import { CAUSES, TRIGGERS, type Comparison, type LatencyStats, type ModeSummary } from './compare.ts';
import type { Progress } from './run.ts';
import type { Scenario } from './scenario.ts';

export function describeScenario(s: Scenario): string {
  const limit =
    s.cloudWriteRatePerSec > 0 ? `${s.cloudWriteRatePerSec}/s (burst ${2 * s.cloudWriteRatePerSec})` : 'none';
  return (
    `scenario ${s.name}: ${s.nodes} nodes, ${formatDuration(s.durationMs)} simulated, ` +
    `heartbeat ${s.heartbeatIntervalMs > 0 ? formatDuration(s.heartbeatIntervalMs) : 'off'}, ` +
    `churn ${s.churn} joins + ${s.churn} leaves per 10m, burst ${s.burst}, ` +
    `cloud latency ${formatDuration(s.cloudLatencyMs)}, write limit ${limit}, seed ${s.seed}`
  );
}

export function describeTimeline(c: Comparison): string {
  const t = c.timeline;
  const w = t.throttleWindow;
  return (
    `timeline: ${t.joins} joins, ${t.leaves} leaves, ${t.addressChanges} address change(s), ` +
    `${t.outOfBandDeletes} out-of-band route delete(s), ` +
    (w ? `cloud throttles every call ${clockTime(w.fromMs)}–${clockTime(w.toMs)}` : 'no throttling window')
  );
}

/** hh:mm:ss of simulated time. */
export function clockTime(ms: number): string {
  const s = Math.round(ms / 1000);
  const p = (n: number): string => String(n).padStart(2, '0');
  return `${p(Math.floor(s / 3600))}:${p(Math.floor(s / 60) % 60)}:${p(s % 60)}`;
}

export function progressLine(p: Progress): string {
  return (
    `[${p.mode.padEnd(8)}] sim ${clockTime(p.simMs)}  nodes ${p.nodes}  routes ${p.routes}  ` +
    `calls list=${p.calls.list} create=${p.calls.create} delete=${p.calls.delete}  ` +
    `reconciles ${p.reconciles}  wall ${(p.wallMs / 1000).toFixed(1)}s`
  );
}

function secs(s: number | undefined): string {
  if (s === undefined || Number.isNaN(s)) return '-';
  if (s < 1) return `${Math.round(s * 1000)}ms`;
  if (s < 100) return `${s.toFixed(2)}s`;
  return formatDuration(Math.round(s) * 1000);
}

/** Label, periodic, watch as upstream ships it, watch with this project's defaults, note. */
type Row = readonly [string, string, string, string, string?];
type Cells = [string, string, string];

const ORDER = ['periodic', 'watchUpstream', 'watch'] as const;
export const COLUMN_LABELS = ['periodic', 'watch (upstream)', 'watch (ours)'] as const;

function latencyRows(
  label: string,
  c: Comparison,
  pick: (m: ModeSummary) => LatencyStats | undefined,
): Row[] {
  const v = (f: (l: LatencyStats | undefined) => number | undefined): Cells =>
    ORDER.map((k) => secs(f(pick(c[k])))) as Cells;
  return [
    [`${label} p50`, ...v((l) => l?.p50)],
    [`${label} p99`, ...v((l) => l?.p99)],
    [`${label} max`, ...v((l) => l?.max)],
  ];
}

function rows(c: Comparison): (Row | string)[] {
  const { periodic: p, watch: w } = c;
  const each = (f: (m: ModeSummary) => string): Cells => ORDER.map((k) => f(c[k])) as Cells;
  const n = (f: (m: ModeSummary) => number): Cells => each((m) => String(f(m)));
  const out: (Row | string)[] = [
    'cloud API calls',
    [
      'ListRoutes',
      ...n((m) => m.calls.list),
      `${c.listRatio.toFixed(1)}x fewer in watch mode (ours) than periodic`,
    ],
    ['CreateRoute', ...n((m) => m.calls.create)],
    ['DeleteRoute', ...n((m) => m.calls.delete)],
    ['of which throttled', ...n((m) => m.throttledCalls)],
    'reconciles',
    ['total', ...n((m) => m.reconciles)],
    ...TRIGGERS.map((t): Row => [`trigger ${t}`, ...n((m) => m.byTrigger[t])]),
    [
      'changed / noop / error',
      ...each((m) => `${m.byOutcome.changed}/${m.byOutcome.noop}/${m.byOutcome.error}`),
    ],
    [
      'heartbeat-caused',
      '-',
      '-',
      String(c.control.heartbeatCaused),
      `${w.heartbeatsSent} heartbeats ignored`,
    ],
    `route-creation latency (${p.latency?.n ?? 0} joins; node created -> route created)`,
    ...latencyRows('all', c, (m) => m.latency),
    ...(p.latencyUnthrottled?.n !== p.latency?.n
      ? [
          [
            'p99 outside throttling window',
            ...each((m) => secs(m.latencyUnthrottled?.p99)),
            `${p.latencyUnthrottled?.n ?? 0} joins`,
          ] as const,
        ]
      : []),
    ...CAUSES.filter((k) => ORDER.some((m) => c[m].latencyByCause[k])).map((k): Row => [
      `${k} joins p50 / max`,
      ...each((m) => `${secs(m.latencyByCause[k]?.p50)} / ${secs(m.latencyByCause[k]?.max)}`),
    ]),
    [
      'histogram observations',
      ...n((m) => m.latencyMetricCount),
      'route_controller_route_creation_latency_seconds',
    ],
    'drift and retries',
    [
      'route_corrections_total c/d',
      ...each((m) => `${m.corrections.create}/${m.corrections.delete}`),
      'periodic mode counts every change',
    ],
    [
      'out-of-band delete repaired',
      ...each((m) =>
        m.oobUnseen !== undefined
          ? 'no list yet'
          : secs(m.oobRepairMs === undefined ? undefined : m.oobRepairMs / 1000),
      ),
      'after the route vanished',
    ],
    ['workqueue_retries_total', '-', String(c.watchUpstream.retries), String(w.retries)],
    'end state',
    ['nodes / routes', ...each((m) => `${m.final.nodes}/${m.final.routes}`)],
    [
      'missing / stale / bad cond.',
      ...each((m) => `${m.final.missingRoutes}/${m.final.staleRoutes}/${m.final.badConditions}`),
    ],
    ['wrong deletes', ...n((m) => m.wrongDeletes), 'of a route a present node still needed'],
    ['wall time', ...each((m) => `${(m.wallMs / 1000).toFixed(1)}s`)],
  ];
  return out;
}

/** The side-by-side table. */
export function textTable(c: Comparison): string {
  const all = rows(c);
  const body = all.filter((r): r is Row => typeof r !== 'string');
  const w0 = Math.max(30, ...body.map((r) => r[0].length));
  const w = [1, 2, 3].map((i) => Math.max(16, ...body.map((r) => (r[i] ?? '').length)));
  const line = (a: string, cells: readonly string[], note = ''): string =>
    `  ${a.padEnd(w0)}${cells.map((x, i) => `  ${x.padStart(w[i]!)}`).join('')}${note ? `   ${note}` : ''}`.trimEnd();
  const out = [line('', COLUMN_LABELS)];
  for (const r of all) out.push(typeof r === 'string' ? r : line(r[0], [r[1], r[2], r[3]], r[4]));
  return out.join('\n');
}

export function tableRows(c: Comparison): (Row | string)[] {
  return rows(c);
}

export function checksText(c: Comparison): string {
  const mark = (p: boolean | undefined): string => (p === undefined ? 'N/A ' : p ? 'PASS' : 'FAIL');
  return ['checks', ...c.checks.map((k) => `  ${mark(k.pass)}  ${k.claim}: ${k.detail}`)].join('\n');
}
