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

type Row = readonly [string, string, string, string?];

function latencyRows(label: string, p: LatencyStats | undefined, w: LatencyStats | undefined): Row[] {
  return [
    [`${label} p50`, secs(p?.p50), secs(w?.p50)],
    [`${label} p99`, secs(p?.p99), secs(w?.p99)],
    [`${label} max`, secs(p?.max), secs(w?.max)],
  ];
}

function rows(c: Comparison): (Row | string)[] {
  const { periodic: p, watch: w } = c;
  const n = (f: (m: ModeSummary) => number): [string, string] => [String(f(p)), String(f(w))];
  const out: (Row | string)[] = [
    'cloud API calls',
    ['ListRoutes', ...n((m) => m.calls.list), `${c.listRatio.toFixed(1)}x fewer in watch mode`],
    ['CreateRoute', ...n((m) => m.calls.create)],
    ['DeleteRoute', ...n((m) => m.calls.delete)],
    ['of which throttled', ...n((m) => m.throttledCalls)],
    'reconciles',
    ['total', ...n((m) => m.reconciles)],
    ...TRIGGERS.map((t): Row => [`trigger ${t}`, ...n((m) => m.byTrigger[t])]),
    [
      'changed / noop / error',
      ...((['periodic', 'watch'] as const).map((k) => {
        const o = c[k].byOutcome;
        return `${o.changed}/${o.noop}/${o.error}`;
      }) as [string, string]),
    ],
    ['heartbeat-caused', '-', String(c.control.heartbeatCaused), `${w.heartbeatsSent} heartbeats ignored`],
    `route-creation latency (${p.latency?.n ?? 0} joins; node created -> route created)`,
    ...latencyRows('all', p.latency, w.latency),
    ...(p.latencyUnthrottled?.n !== p.latency?.n
      ? [
          [
            'p99 outside throttling window',
            secs(p.latencyUnthrottled?.p99),
            secs(w.latencyUnthrottled?.p99),
            `${p.latencyUnthrottled?.n ?? 0} joins`,
          ] as const,
        ]
      : []),
    ...CAUSES.filter((k) => p.latencyByCause[k] || w.latencyByCause[k]).map((k): Row => [
      `${k} joins p50 / max`,
      `${secs(p.latencyByCause[k]?.p50)} / ${secs(p.latencyByCause[k]?.max)}`,
      `${secs(w.latencyByCause[k]?.p50)} / ${secs(w.latencyByCause[k]?.max)}`,
    ]),
    [
      'histogram observations',
      ...n((m) => m.latencyMetricCount),
      'route_controller_route_creation_latency_seconds',
    ],
    'drift and retries',
    [
      'route_corrections_total c/d',
      `${p.corrections.create}/${p.corrections.delete}`,
      `${w.corrections.create}/${w.corrections.delete}`,
      'periodic mode counts every change',
    ],
    [
      'out-of-band delete repaired',
      secs(p.oobRepairMs === undefined ? undefined : p.oobRepairMs / 1000),
      secs(w.oobRepairMs === undefined ? undefined : w.oobRepairMs / 1000),
      'after the route vanished',
    ],
    ['workqueue_retries_total', '-', String(w.retries)],
    'end state',
    ['nodes / routes', `${p.final.nodes}/${p.final.routes}`, `${w.final.nodes}/${w.final.routes}`],
    [
      'missing / stale / bad cond.',
      `${p.final.missingRoutes}/${p.final.staleRoutes}/${p.final.badConditions}`,
      `${w.final.missingRoutes}/${w.final.staleRoutes}/${w.final.badConditions}`,
    ],
    ['wall time', `${(p.wallMs / 1000).toFixed(1)}s`, `${(w.wallMs / 1000).toFixed(1)}s`],
  ];
  return out;
}

/** The side-by-side table. */
export function textTable(c: Comparison): string {
  const all = rows(c);
  const body = all.filter((r): r is Row => typeof r !== 'string');
  const w0 = Math.max(30, ...body.map((r) => r[0].length));
  const w1 = Math.max(10, ...body.map((r) => r[1].length));
  const w2 = Math.max(10, ...body.map((r) => r[2].length));
  const line = (a: string, b: string, d: string, note = ''): string =>
    `  ${a.padEnd(w0)}  ${b.padStart(w1)}  ${d.padStart(w2)}${note ? `   ${note}` : ''}`.trimEnd();
  const out = [line('', 'periodic', 'watch')];
  for (const r of all) out.push(typeof r === 'string' ? r : line(r[0], r[1], r[2], r[3]));
  return out.join('\n');
}

export function tableRows(c: Comparison): (Row | string)[] {
  return rows(c);
}

export function checksText(c: Comparison): string {
  const mark = (p: boolean | undefined): string => (p === undefined ? 'N/A ' : p ? 'PASS' : 'FAIL');
  return ['checks', ...c.checks.map((k) => `  ${mark(k.pass)}  ${k.claim}: ${k.detail}`)].join('\n');
}
