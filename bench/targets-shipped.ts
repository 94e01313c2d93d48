// Targets of the shipped executable and the packed library (the `shipped`
// scenario), evaluated on a results.json; none when it did not run.
import type { TargetResult } from './lib/target-result.ts';
import type { Results } from './lib/results.ts';
import { round } from './lib/stats.ts';

/**
 * MB over the Node.js floor of the same run (a dependency-free program doing
 * the same I/O) allowed at 100 nodes: the plug-ins that load a cloud SDK get
 * more than those on Node's own HTTP.
 */
const OVER_FLOOR_100: Record<string, number> = {
  memory: 12,
  linux: 12,
  hcloud: 12,
  openstack: 12,
  aws: 40,
  azure: 40,
  gce: 40,
};

export function shippedTargets(r: Results): TargetResult[] {
  const out: TargetResult[] = scaleTargets(r);
  const s = r.shipped;
  if (s === undefined) return out;
  const lib = s.libraryImportMB['cloud-route-controller'];
  if (lib !== undefined)
    out.push({
      name: "import('cloud-route-controller') from the packed tarball: ≤ 60 MB peak resident",
      measured: `${round(lib, 1)} MB`,
      pass: lib <= 60,
      brief: "import('cloud-route-controller') ≤ 60 MB",
      headline: `${round(lib, 1)} MB`,
    });
  const aws = s.libraryImportMB['cloud-route-controller/aws'];
  if (aws !== undefined)
    out.push({
      name: "import('cloud-route-controller/aws') from the packed tarball: ≤ 100 MB peak resident",
      measured: `${round(aws, 1)} MB`,
      pass: aws <= 100,
      brief: "import('cloud-route-controller/aws') ≤ 100 MB",
      headline: `${round(aws, 1)} MB`,
    });
  const row = (kind: string, nodes: number) => s.memory.find((x) => x.kind === kind && x.nodes === nodes);
  const floor = row('floor', 100);
  for (const kind of Object.keys(OVER_FLOOR_100)) {
    const m = row(kind, 100);
    if (m === undefined || floor === undefined) continue;
    const worst = Math.max(m.syncedMB, m.reconciledMB);
    const limit = Math.max(floor.syncedMB, floor.reconciledMB) + OVER_FLOOR_100[kind]!;
    out.push({
      name: `Shipped daemon (${kind}) at 100 nodes: ≤ the Node.js floor + ${OVER_FLOOR_100[kind]} MB`,
      measured: `${round(worst, 1)} MB; floor ${round(limit - OVER_FLOOR_100[kind]!, 1)} MB (+${round(worst - limit + OVER_FLOOR_100[kind]!, 1)})`,
      pass: worst <= limit,
      brief: 'Daemon at 100 nodes ≤ Node.js floor + 12 MB (+40 with a cloud SDK)',
      headline: `${kind} +${round(worst - limit + OVER_FLOOR_100[kind]!, 1)}`,
    });
  }
  for (const [nodes, factor, what] of [
    [1000, 1.3, 'within 1.3× of'],
    [5000, 0.9, '≤ 0.9× of'],
  ] as const) {
    const go = row('go', nodes);
    if (go === undefined) continue;
    for (const kind of Object.keys(OVER_FLOOR_100)) {
      const m = row(kind, nodes);
      if (m === undefined) continue;
      const worst = Math.max(m.syncedMB, m.reconciledMB);
      out.push({
        name: `Shipped daemon (${kind}) at ${nodes.toLocaleString('en-US')} nodes: resident memory ${what} upstream's`,
        measured: `${round(worst, 1)} MB vs ${round(go.reconciledMB, 1)} MB (${round(worst / go.reconciledMB, 2)}×)`,
        pass: worst <= factor * go.reconciledMB,
        brief: `Daemon at ${nodes.toLocaleString('en-US')} nodes ≤ ${factor}× upstream`,
        headline: `${kind} ${round(worst / go.reconciledMB, 2)}×`,
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
      brief: `Daemon idle CPU, ${ts.nodes.toLocaleString('en-US')} heartbeating nodes ≤ upstream`,
      headline: `${round(ts.cpuMsPerHour / 1000, 1)} vs ${round(go.cpuMsPerHour / 1000, 1)} s/h`,
    });
  return out;
}

/** At the documented maximum: less memory than upstream, an initial sync no slower. */
function scaleTargets(r: Results): TargetResult[] {
  const ts = r.scale?.find((x) => x.kind === 'memory');
  const go = r.scale?.find((x) => x.kind === 'go');
  if (ts === undefined || go === undefined) return [];
  const worst = Math.max(ts.syncedMB, ts.reconciledMB);
  return [
    {
      name: `Shipped daemon (memory) at ${ts.nodes.toLocaleString('en-US')} dual-stack nodes: less resident memory than upstream, initial sync no slower`,
      measured: `${round(worst, 1)} MB vs ${round(go.reconciledMB, 1)} MB; sync ${round(ts.syncS, 1)} s vs ${round(go.syncS, 1)} s`,
      pass: worst < go.reconciledMB && ts.syncS <= go.syncS,
      brief: `Daemon at ${ts.nodes.toLocaleString('en-US')} nodes: less memory than upstream, sync no slower`,
      headline: `${round(worst / go.reconciledMB, 2)}× memory, ${round(ts.syncS, 1)} vs ${round(go.syncS, 1)} s`,
    },
  ];
}
