// Targets of the shipped executable and the packed library (the `shipped`
// scenario), evaluated on a results.json; none when it did not run.
import type { TargetResult } from './lib/target-result.ts';
import type { Results } from './lib/results.ts';
import { round } from './lib/stats.ts';

const LIMIT_100: Record<string, number> = { memory: 60, linux: 60, hcloud: 60, aws: 95 };

export function shippedTargets(r: Results): TargetResult[] {
  const s = r.shipped;
  if (s === undefined) return [];
  const out: TargetResult[] = [];
  const lib = s.libraryImportMB['cloud-route-controller'];
  if (lib !== undefined)
    out.push({
      name: "import('cloud-route-controller') from the packed tarball: ≤ 60 MB peak resident",
      measured: `${round(lib, 1)} MB`,
      pass: lib <= 60,
    });
  const row = (kind: string, nodes: number) => s.memory.find((x) => x.kind === kind && x.nodes === nodes);
  for (const kind of Object.keys(LIMIT_100)) {
    const m = row(kind, 100);
    if (m === undefined) continue;
    const worst = Math.max(m.syncedMB, m.reconciledMB);
    out.push({
      name: `Shipped daemon (${kind}) at 100 nodes: ≤ ${LIMIT_100[kind]} MB resident`,
      measured: `${round(m.syncedMB, 1)} MB after sync, ${round(m.reconciledMB, 1)} MB after one reconcile`,
      pass: worst <= LIMIT_100[kind]!,
    });
  }
  for (const [nodes, factor, what] of [
    [1000, 1.3, 'within 1.3× of'],
    [5000, 1, 'below'],
  ] as const) {
    const go = row('go', nodes);
    if (go === undefined) continue;
    for (const kind of Object.keys(LIMIT_100)) {
      const m = row(kind, nodes);
      if (m === undefined) continue;
      const worst = Math.max(m.syncedMB, m.reconciledMB);
      out.push({
        name: `Shipped daemon (${kind}) at ${nodes.toLocaleString('en-US')} nodes: resident memory ${what} upstream's`,
        measured: `${round(worst, 1)} MB vs ${round(go.reconciledMB, 1)} MB (${round(worst / go.reconciledMB, 2)}×)`,
        pass: factor === 1 ? worst < go.reconciledMB : worst <= factor * go.reconciledMB,
      });
    }
  }
  const ts = s.idle.find((x) => x.kind === 'memory');
  const go = s.idle.find((x) => x.kind === 'go');
  if (ts && go)
    out.push({
      name: `Shipped daemon, idle with ${ts.nodes.toLocaleString('en-US')} heartbeating nodes: CPU/h ≤ upstream's`,
      measured: `${round(ts.cpuMsPerHour / 1000, 1)} s/h vs ${round(go.cpuMsPerHour / 1000, 1)} s/h`,
      pass: ts.cpuMsPerHour <= go.cpuMsPerHour,
    });
  return out;
}
