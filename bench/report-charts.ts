// One SVG chart per scenario, from results.json.
import * as path from 'node:path';
import { barChart, ecdfChart, lineChart, renderSvg, scalingChart, stripChart } from './lib/charts.ts';
import type { Results } from './lib/results.ts';
import { ipamChart } from './report-ipam.ts';
import { isLatency, round, spread } from './lib/stats.ts';

type Row = Record<string, string | number | null>;

const med = (xs: readonly (number | undefined)[]): number | undefined => spread(xs.filter(isLatency))?.median;

export async function charts(r: Results, dir: string): Promise<void> {
  const label = (id: string): string => r.meta.variants[id] ?? id;
  const idleRows: Row[] = [
    ...r.idleVirtual.map((x) => ({ variant: `${x.label} (virtual)`, v: round(x.perHour.list, 1) })),
    ...r.idleReal.map((x) => ({
      variant: `${label(x.variant)} (real, scaled)`,
      v: round(x.perHour.list, 1),
    })),
  ];
  if (idleRows.length) {
    await renderSvg(
      barChart(
        'Idle hour: ListRoutes calls per hour',
        idleRows,
        { field: 'v', title: 'ListRoutes / h (symlog)', scale: 'symlog' },
        'variant',
      ),
      path.join(dir, 'idle.svg'),
    );
  }
  const first = (id: string): Results['burst'][number] | undefined => r.burst.find((x) => x.variant === id);
  const routeRows: Row[] = [];
  const createRows: Row[] = [];
  for (const id of Object.keys(r.meta.variants)) {
    const run = first(id);
    if (!run) continue;
    for (const p of run.series) {
      routeRows.push({ series: label(id), s: p.s, v: p.routes });
      createRows.push({ series: label(id), s: p.s, v: p.create });
    }
  }
  if (routeRows.length) {
    await renderSvg(
      lineChart(
        'Burst: routes in the cloud (first run)',
        routeRows,
        { field: 's', title: 's since the first node' },
        { field: 'v', title: 'routes' },
      ),
      path.join(dir, 'burst-routes.svg'),
    );
    await renderSvg(
      lineChart(
        'Burst: CreateRoute calls, cumulative (first run)',
        createRows,
        { field: 's', title: 's since the first node' },
        { field: 'v', title: 'CreateRoute calls' },
      ),
      path.join(dir, 'burst-creates.svg'),
    );
    const lat: Record<string, number[]> = {};
    const singles: Record<string, number[]> = {};
    const totals: Record<string, number> = {};
    for (const x of r.burst) {
      totals[label(x.variant)] = (totals[label(x.variant)] ?? 0) + x.latencies.length;
      (lat[label(x.variant)] ??= []).push(...x.latencies.filter(isLatency).map((v) => v / 1000));
      (singles[label(x.variant)] ??= []).push(...x.singlesLatencies.filter(isLatency).map((v) => v / 1000));
    }
    await renderSvg(
      ecdfChart(
        'Burst: per-node latency, pod CIDR visible → route created (all runs)',
        lat,
        'latency (s)',
        totals,
      ),
      path.join(dir, 'burst-latency.svg'),
    );
    await renderSvg(
      stripChart('Single nodes right after the burst: latency (all runs)', singles, 'latency (s)'),
      path.join(dir, 'singles.svg'),
    );
  }
  await ipamChart(r, dir);
  if (r.settle.length) {
    const samples: Record<string, number[]> = {};
    for (const x of r.settle) {
      const ok = isLatency;
      (samples[`${label(x.variant)}: 2 s apart`] ??= []).push(
        ...x.singlesLatencies.filter(ok).map((v) => v / 1000),
      );
      (samples[`${label(x.variant)}: after quiet`] ??= []).push(
        ...x.isolatedLatencies.filter(ok).map((v) => v / 1000),
      );
    }
    await renderSvg(
      stripChart('After a converged burst: single-node latency (all runs)', samples, 'latency (s)'),
      path.join(dir, 'settle.svg'),
    );
  }
  if (r.burstVirtual.length) {
    const rows: Row[] = r.burstVirtual.flatMap((x) =>
      x.routesAt.map((p) => ({ series: x.label, s: p.s, v: p.routes })),
    );
    await renderSvg(
      lineChart(
        'Burst in virtual time (TS): routes in the cloud',
        rows,
        { field: 's', title: 'virtual s since the first node' },
        { field: 'v', title: 'routes' },
      ),
      path.join(dir, 'burst-virtual.svg'),
    );
  }
  const failRows: Row[] = [];
  for (const id of Object.keys(r.meta.variants)) {
    const run = r.failure.find((x) => x.variant === id);
    if (run) for (const p of run.series) failRows.push({ series: label(id), s: p.s, v: p.routes });
  }
  if (failRows.length) {
    const end = med(r.failure.map((x) => x.failEndS));
    await renderSvg(
      lineChart(
        'Failure recovery: routes in the cloud (first run)',
        failRows,
        { field: 's', title: 's since the nodes were created' },
        { field: 'v', title: 'routes' },
        { ...(end !== undefined ? { rule: end } : {}), ruleLabel: 'cloud recovers' },
      ),
      path.join(dir, 'failure.svg'),
    );
  }
  const costRows: Row[] = [
    ...r.reconcileCost.map((x) => ({
      series: `TS reconcileOnce, ${x.change * 100}% change`,
      nodes: x.nodes,
      ms: round(x.reconcileMs.median, 2),
    })),
    ...r.reconcileCost
      .filter((x) => x.change === 0)
      .map((x) => ({ series: 'TS planReconcile', nodes: x.nodes, ms: round(x.planMs.median, 2) })),
    ...r.processCost.map((x) => ({
      series: x.kind === 'ts' ? 'TS process, per reconcile' : 'upstream process, per reconcile',
      nodes: x.nodes,
      ms: round(x.cpuMsPerReconcile, 2),
    })),
  ];
  if (costRows.length)
    await renderSvg(
      scalingChart('Reconcile CPU time (median)', costRows, 'CPU ms per reconcile'),
      path.join(dir, 'cost.svg'),
    );
  if (r.memory.length) {
    const rows: Row[] = r.memory.map((x) => ({
      nodes: `${x.nodes} nodes`,
      peer: x.kind === 'ts' ? 'TS' : 'upstream',
      v: round(x.rssMB, 0),
    }));
    await renderSvg(
      barChart(
        'Resident memory with the node cache filled',
        rows,
        { field: 'v', title: 'RSS (MB)' },
        'nodes',
        'peer',
      ),
      path.join(dir, 'memory.svg'),
    );
  }
}
