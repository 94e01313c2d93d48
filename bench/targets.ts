// The issue's targets, evaluated on a results.json. `pass` undefined: not
// measured in this run.
import { DEFAULTS } from '../src/controller/options.ts';
import type { Results } from './lib/results.ts';
import { shippedTargets } from './targets-shipped.ts';
import type { TargetResult } from './lib/target-result.ts';

export type { TargetResult };
import { isLatency, percentile, round, spread } from './lib/stats.ts';

const med = (xs: readonly (number | undefined)[]): number | undefined => spread(xs.filter(isLatency))?.median;

export function evaluateTargets(r: Results): TargetResult[] {
  const out: TargetResult[] = [];
  const label = (id: string): string => r.meta.variants[id] ?? id;

  // 1. Idle hour: zero heartbeat-caused reconciles in watch mode.
  const watchVirtual = r.idleVirtual.filter((x) => x.mode !== 'periodic');
  const tsWatchReal = r.idleReal.find((x) => x.variant === 'ts-watch');
  if (watchVirtual.length || tsWatchReal) {
    const parts = watchVirtual.map((x) => `${x.label}: ${x.heartbeatCausedReconciles} in ${x.windowHours} h`);
    if (tsWatchReal)
      parts.push(`TS watch, real apiserver: ${round(tsWatchReal.perHour.list, 1)} reconciles/h`);
    const pass =
      watchVirtual.every((x) => x.heartbeatCausedReconciles === 0) && (tsWatchReal?.perHour.list ?? 0) === 0;
    out.push({
      name: 'Idle hour: zero heartbeat-caused reconciles (watch mode)',
      measured: parts.join('; '),
      pass,
      brief: 'Idle hour: no heartbeat-caused reconcile (watch mode)',
      headline: `${watchVirtual.reduce((s, x) => s + x.heartbeatCausedReconciles, 0)} heartbeat-caused`,
    });
  }

  // 2. Watch mode with resync 0 makes no more cloud calls than upstream's watch mode.
  const r0 = r.idleVirtual.find((x) => x.mode === 'watch-r0');
  const w1 = r.idleVirtual.find((x) => x.mode === 'watch');
  const goW = r.idleReal.find((x) => x.variant === 'go-watch');
  if (r0 && goW) {
    const calls = (p: { list: number; create: number; delete: number }): number =>
      p.list + p.create + p.delete;
    out.push({
      name: 'Idle: TS watch (resync 0) cloud calls/h ≤ upstream watch mode',
      measured: `${round(calls(r0.perHour), 2)} vs ${round(calls(goW.perHour), 2)} calls/h`,
      pass: calls(r0.perHour) <= calls(goW.perHour),
      brief: 'Idle cloud calls (watch, resync off) ≤ upstream',
      headline: `${round(calls(r0.perHour), 2)} vs ${round(calls(goW.perHour), 2)} /h`,
    });
  }
  if (w1 && goW) {
    // One ListRoutes per resync period P (the default), whose delay is jittered in [0.9 P, 1.1 P].
    const perHour = 3_600_000 / DEFAULTS.routeResyncPeriodMs / 0.9;
    const p = `${DEFAULTS.routeResyncPeriodMs / 60_000} min`;
    const allowed = goW.perHour.list + perHour;
    out.push({
      name: `Idle: TS watch (default ${p} safety resync) ≤ upstream + one ListRoutes per resync period`,
      measured: `${round(w1.perHour.list, 2)} ListRoutes/h vs upstream ${round(goW.perHour.list, 2)} (+ ≤ ${round(perHour, 2)} allowed)`,
      pass: w1.perHour.list <= allowed && w1.perHour.create + w1.perHour.delete === 0,
      brief: `Idle ListRoutes (watch, ${p} resync) ≤ upstream + 1 per resync`,
      headline: `${round(w1.perHour.list, 2)} vs ${round(goW.perHour.list, 2)} /h`,
    });
  }

  // 3. Burst: no more ListRoutes than upstream, exactly one CreateRoute per route.
  const nodes = r.meta.config.burst.nodes;
  for (const [ts, go] of [
    ['ts-periodic', 'go-periodic'],
    ['ts-watch', 'go-watch'],
  ] as const) {
    const a = r.burst.filter((x) => x.variant === ts);
    const b = r.burst.filter((x) => x.variant === go);
    if (a.length === 0) continue;
    const la = med(a.map((x) => x.burstCalls.list));
    const lb = med(b.map((x) => x.burstCalls.list));
    const converged = (runs: typeof a): string =>
      `${runs.filter((x) => x.converged).length}/${runs.length} converged`;
    if (lb !== undefined && la !== undefined) {
      out.push({
        name: `Burst (${label(ts)}): ListRoutes ≤ upstream (${label(go)})`,
        measured: `${la} vs ${lb} (median; TS ${converged(a)}, upstream ${converged(b)})`,
        pass: la <= lb,
        brief: `Burst of ${nodes.toLocaleString('en-US')}: ListRoutes ≤ upstream`,
        headline: `${ts === 'ts-periodic' ? 'periodic' : 'watch'} ${la} vs ${lb}`,
      });
    }
    if (ts === 'ts-periodic') continue; // unpaced, like upstream: the budget targets are watch mode's
    const creates = a.map((x) => x.burstCalls.create);
    const lists = a.map((x) => x.burstCalls.list);
    const converge = a.map((x) => x.convergeS);
    out.push({
      name: `Burst (${label(ts)}, default flags): CreateRoute ≤ ${nodes + 10}, ListRoutes ≤ 2, every route, converged ≤ 95.7 s`,
      measured: `${creates.join(', ')} CreateRoute, ${lists.join(', ')} ListRoutes, ${a.map((x) => x.routes).join(', ')}/${nodes} routes, ${converge.map((s) => (s === undefined ? '–' : `${round(s, 1)} s`)).join(', ')}`,
      pass: a.every(
        (x) =>
          x.converged &&
          x.routes === nodes &&
          x.burstCalls.create <= nodes + 10 &&
          x.burstCalls.list <= 2 &&
          x.convergeS !== undefined &&
          x.convergeS <= 95.7,
      ),
      brief: `Burst of ${nodes.toLocaleString('en-US')} (watch): one CreateRoute per route, converged ≤ 95.7 s`,
      headline: `${creates.join(', ')} creates, ${converge.map((s) => (s === undefined ? '–' : `${round(s, 1)} s`)).join(', ')}`,
    });
    out.push(...schedulableTarget(r, a, label(ts)));
  }

  // 3b. The burst in virtual time, watch mode with defaults: within 1.15× of the cloud's own bound.
  const bvc = r.meta.config.burstVirtual;
  const bw = r.burstVirtual.find((x) => x.mode === 'watch');
  if (bw) {
    const bound = (bvc.nodes - 2 * bvc.writeRate) / bvc.writeRate; // its burst at once, then its rate
    out.push({
      name: `Burst in virtual time (${bw.label}): converged within 1.15× the cloud's bound (${round(bound, 1)} s), CreateRoute ≤ ${bvc.nodes + 10}, ListRoutes ≤ 2`,
      measured: `${bw.convergeS === undefined ? 'not converged' : `${round(bw.convergeS, 1)} s (${round(bw.convergeS / bound, 2)}×)`}, ${bw.calls.create} CreateRoute, ${bw.calls.list} ListRoutes`,
      pass:
        bw.convergeS !== undefined &&
        bw.convergeS <= 1.15 * bound &&
        bw.calls.create <= bvc.nodes + 10 &&
        bw.calls.list <= 2,
      brief: "Burst in virtual time: ≤ 1.15× the cloud's own bound",
      headline: bw.convergeS === undefined ? 'not converged' : `${round(bw.convergeS / bound, 2)}×`,
    });
  }

  // 3c. The churn hour: about one ListRoutes per hour, exactly the writes the changes need.
  const cw = r.churnVirtual?.find((x) => x.mode === 'watch');
  if (cw) {
    out.push({
      name: `Churn hour (${cw.label}): ListRoutes ≤ 2, writes as required, no heartbeat-caused reconcile, no wrong delete`,
      measured: `${cw.calls.list} ListRoutes; CreateRoute ${cw.calls.create} (${cw.required.create} required), DeleteRoute ${cw.calls.delete} (${cw.required.delete}); ${cw.heartbeatCausedReconciles} heartbeat-caused, ${cw.wrongDeletes} wrong deletes, ${cw.unrouted} unrouted; others: ${(
        r.churnVirtual ?? []
      )
        .filter((x) => x !== cw)
        .map((x) => `${x.label} ${x.calls.list} ListRoutes`)
        .join(', ')}${realChurn(r)}`,
      pass:
        cw.calls.list <= 2 &&
        cw.calls.create === cw.required.create &&
        cw.calls.delete === cw.required.delete &&
        cw.heartbeatCausedReconciles === 0 &&
        cw.wrongDeletes === 0 &&
        cw.unrouted === 0,
      brief: 'Churn hour: ≤ 2 ListRoutes, exact writes, no wrong delete',
      headline: `${cw.calls.list} ListRoutes, ${cw.wrongDeletes} wrong deletes`,
    });
  }

  // 4. Right after the burst: p99 < 100 ms.
  for (const ts of ['ts-periodic', 'ts-watch']) {
    const runs = r.burst.filter((x) => x.variant === ts);
    if (runs.length === 0) continue;
    const all = runs.flatMap((x) => x.singlesLatencies);
    const got = all.filter(isLatency);
    const p99 = percentile(got, 99);
    out.push({
      name: `Right after the burst (${label(ts)}): single-node latency p99 < 100 ms`,
      measured: `p99 ${p99 === undefined ? '–' : `${round(p99, 0)} ms`}, ${got.length}/${all.length} routed`,
      pass: p99 !== undefined && p99 < 100 && got.length === all.length,
      brief: 'A single node right after a burst: p99 < 100 ms',
      headline: `${ts === 'ts-periodic' ? 'periodic' : 'watch'} ${p99 === undefined ? '–' : p99 < 1000 ? `${round(p99, 0)} ms` : `${round(p99 / 1000, 1)} s`}`,
    });
  }

  // 4b. The same once the burst has converged (no cloud limit): nodes 2 s apart and after quiet.
  for (const ts of ['ts-periodic', 'ts-watch']) {
    const runs = r.settle.filter((x) => x.variant === ts);
    if (runs.length === 0) continue;
    for (const [what, pick] of [
      ['2 s apart', (x: (typeof runs)[number]) => x.singlesLatencies],
      ['each after ≥ 10 s of quiet', (x: (typeof runs)[number]) => x.isolatedLatencies],
    ] as const) {
      const all = runs.flatMap(pick);
      const got = all.filter(isLatency);
      const p99 = percentile(got, 99);
      out.push({
        name: `After a converged burst (${label(ts)}): single nodes ${what}, p99 < 100 ms`,
        measured: `p99 ${p99 === undefined ? '–' : `${round(p99, 0)} ms`}, ${got.length}/${all.length} routed`,
        pass: p99 !== undefined && p99 < 100 && got.length === all.length,
        brief: 'A single node after a converged burst: p99 < 100 ms',
        headline: `${ts === 'ts-periodic' ? 'periodic' : 'watch'}${what === '2 s apart' ? '' : ' (isolated)'} ${p99 === undefined ? '–' : p99 < 1000 ? `${round(p99, 0)} ms` : `${round(p99 / 1000, 1)} s`}`,
      });
    }
  }

  // 5. Reconcile CPU at 5,000 dual-stack nodes < 25 ms.
  const c5 = r.reconcileCost.find((x) => x.nodes === 5000 && x.change === 0);
  const p5 = r.processCost.find((x) => x.nodes === 5000 && x.kind === 'ts');
  if (c5) {
    out.push({
      name: 'Reconcile CPU at 5,000 dual-stack nodes < 25 ms (in process, nothing to change)',
      measured: `median ${round(c5.reconcileMs.median, 1)} ms (min ${round(c5.reconcileMs.min, 1)}, max ${round(c5.reconcileMs.max, 1)}); plan alone ${round(c5.planMs.median, 1)} ms${p5 ? `; whole TS process ${round(p5.cpuMsPerReconcile, 1)} ms` : ''}`,
      pass: c5.reconcileMs.median < 25,
      brief: 'Full reconcile CPU at 5,000 nodes < 25 ms',
      headline: `${round(c5.reconcileMs.median, 1)} ms`,
    });
  }

  // 5b. One node event's reconcile ≤ 1 ms CPU at 5,000 and 15,000 dual-stack nodes (watch mode, defaults).
  const ev = (r.eventCost ?? []).filter((x) => x.incremental && (x.nodes === 5000 || x.nodes === 15_000));
  if (ev.length > 0) {
    out.push({
      name: 'CPU of one node event ≤ 1 ms median at 5,000 and 15,000 dual-stack nodes (watch mode, defaults)',
      measured: ev.map((x) => `${x.event} @${x.nodes}: ${round(x.cpuMs.median, 2)} ms`).join('; '),
      pass:
        ev.every((x) => x.cpuMs.median <= 1 && x.sources.every((s) => s === 'cache')) &&
        new Set(ev.map((x) => x.nodes)).size === 2,
      brief: "One node event's CPU ≤ 1 ms at 5,000 and 15,000 nodes",
      headline: `${round(Math.min(...ev.map((x) => x.cpuMs.median)), 2)}–${round(Math.max(...ev.map((x) => x.cpuMs.median)), 2)} ms`,
    });
  }
  // 5c. A full listing reconcile at 15,000 nodes ≤ 3× its 5,000-node cost.
  const c15 = r.reconcileCost.find((x) => x.nodes === 15_000 && x.change === 0);
  if (c5 && c15) {
    const x = c15.reconcileMs.median / c5.reconcileMs.median;
    out.push({
      name: 'Full reconcile at 15,000 nodes ≤ 3× its 5,000-node CPU',
      measured: `${round(c15.reconcileMs.median, 1)} ms vs ${round(c5.reconcileMs.median, 1)} ms: ${round(x, 2)}×`,
      pass: x <= 3,
      brief: 'Full reconcile at 15,000 nodes ≤ 3× 5,000',
      headline: `${round(x, 2)}×`,
    });
  }

  // 6. RSS at 5,000 nodes < 150 MB.
  const src = r.memory.find((x) => x.nodes === 5000 && x.kind === 'ts');
  const js = r.memory.find((x) => x.nodes === 5000 && x.kind === 'ts-js');
  const m5 = js ?? src;
  if (m5) {
    const parts = [
      js
        ? `compiled JS ${round(js.rssMB, 0)} MB (baseline before the list ${round(js.baselineMB, 0)} MB)`
        : '',
      src ? `run from .ts sources ${round(src.rssMB, 0)} MB (baseline ${round(src.baselineMB, 0)} MB)` : '',
    ].filter((x) => x !== '');
    out.push({
      name: 'RSS with 5,000 realistic nodes in the cache < 150 MB',
      measured: parts.join('; '),
      pass: m5.rssMB < 150,
      brief: 'Library with 5,000 nodes cached < 150 MB',
      headline: `${round(m5.rssMB, 0)} MB`,
    });
  }
  out.push(...shippedTargets(r));
  return out;
}

/** The churn target's real-time part: every peer's ListRoutes in the compressed run. */
function realChurn(r: Results): string {
  const runs = r.churnReal ?? [];
  if (runs.length === 0) return '';
  const label = (id: string): string => r.meta.variants[id] ?? id;
  return `; hour compressed into ${runs[0]!.windowS} s against the real apiserver: ${runs.map((x) => `${label(x.variant)} ${x.calls.list}`).join(', ')} ListRoutes`;
}

/** Pods schedulable with their route: p99 created → NetworkUnavailable=False ≤ route convergence + 2 s. */
function schedulableTarget(r: Results, a: Results['burst'], tsLabel: string): TargetResult[] {
  if (!a.some((x) => x.schedulableMs !== undefined)) return []; // measured since the burst watched conditions
  const p99 = (x: Results['burst'][number]): number | undefined =>
    x.schedulableMs?.p99 === undefined ? undefined : x.schedulableMs.p99 / 1000;
  const cell = (x: Results['burst'][number]): string => `${fmtS(p99(x))} vs ${fmtS(x.convergeS)}`;
  const upstream = (['go-watch', 'go-periodic'] as const).map((id) => {
    const runs = r.burst.filter((x) => x.variant === id);
    const never = runs.map((x) => x.schedulableMs.missing).filter((n) => n > 0);
    const q =
      never.length > 0
        ? `${never.join(', ')} of ${r.meta.config.burst.nodes} never schedulable in the run`
        : `p99 ${fmtS(med(runs.map(p99)))}`;
    return `${r.meta.variants[id] ?? id} ${q} (routes ${fmtS(med(runs.map((x) => x.convergeS)))})`;
  });
  return [
    {
      name: `Burst (${tsLabel}, defaults): p99 node created → NetworkUnavailable=False ≤ route convergence + 2 s`,
      measured: `p99 vs convergence per run: ${a.map(cell).join('; ')}; ${upstream.join('; ')}`,
      pass: a.every((x) => {
        const q = p99(x);
        return (
          x.schedulableMs.missing === 0 &&
          q !== undefined &&
          x.convergeS !== undefined &&
          q <= x.convergeS + 2
        );
      }),
      brief: 'Burst: pods schedulable within 2 s of route convergence (p99)',
      headline: a.map(cell).join(', '),
    },
  ];
}

const fmtS = (s: number | undefined): string => (s === undefined ? '–' : `${round(s, 1)} s`);
