// The throttle scenario's section of the summary: a burst into a cloud that
// throttles, the TS peers told no limit, twice the real one, or unpaced, beside
// upstream (SPEC R111, R112; kubernetes/kubernetes#41671).
import { fmt, fmtSpread, table } from './lib/format.ts';
import type { Results } from './lib/results.ts';

export function throttleSection(r: Results): string {
  const t = r.meta.config.throttle;
  const runs = r.throttle ?? [];
  if (t === undefined || runs.length === 0) return '';
  const ids = [...new Set(runs.map((x) => x.variant))];
  const bound = Math.max(0, t.nodes - t.writeBurst) / t.writeRate;
  const rows = ids.map((id) => {
    const by = runs.filter((x) => x.variant === id);
    return [
      r.meta.variants[id] ?? id,
      `${by.filter((x) => x.converged).length}/${by.length}`,
      fmtSpread(
        by.map((x) => x.convergeS),
        1,
      ),
      fmtSpread(
        by.map((x) => x.burstCalls.create),
        0,
      ),
      fmtSpread(
        by.map((x) => x.burstCalls.throttled),
        0,
      ),
      fmtSpread(
        by.map((x) => x.burstCalls.list),
        0,
      ),
    ];
  });
  return [
    `## A burst into a throttling cloud`,
    ``,
    `${t.nodes} nodes join within ${t.spreadMs / 1000} s; the cloud takes ${t.writeRate} writes/s with a burst of ${t.writeBurst} (${t.latency} per call) and answers the rest throttled with the time of its next token; its own bound for every route is ${fmt(bound, 1)} s. The TS peers run the daemon's defaults with the provider declaring no limit (the library's default for a plug-in that does not know its cloud's: a learning pacer with a slow start, R111 and R137), declaring twice the real limit (the adaptive pacer, R69), and with \`--cloud-write-qps=0\` (unpaced, R112); upstream has neither. Cells: median (min–max) over runs.`,
    ``,
    table(
      ['Peer', 'converged', 'all routes (s)', 'CreateRoute calls', 'refused (throttled)', 'ListRoutes calls'],
      rows,
    ),
  ].join('\n');
}
