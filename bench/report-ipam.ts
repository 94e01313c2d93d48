// The section and chart of scenario `ipam`: nodes registering as kubelets do, with node IPAM and
// kwok (bench/scenarios/ipam.ts).
import * as path from 'node:path';
import { ecdfChart, renderSvg } from './lib/charts.ts';
import { fmt, fmtSpread, table } from './lib/format.ts';
import type { Results } from './lib/results.ts';
import { isLatency } from './lib/stats.ts';
import { percentiles, type IpamRun, type Percentiles } from './scenarios/ipam.ts';

const s = (x: number | undefined): number | undefined => (x === undefined ? undefined : x / 1000);

/** Per node: pod CIDRs seen → NetworkUnavailable=False, the route controller's share (ms). */
function controllerShare(x: IpamRun): Percentiles {
  return percentiles(
    x.latencies.map((l, i) => {
      const c = x.podCIDRLatencies[i];
      return isLatency(l) && isLatency(c) ? l - c : undefined;
    }),
  );
}

/** Variants in the order of the run's variant list. */
function variantsOf(r: Results): string[] {
  const runs = r.ipam ?? [];
  return Object.keys(r.meta.variants).filter((id) => runs.some((x) => x.variant === id));
}

export function ipamSection(r: Results, charts: string): string {
  const c = r.meta.config.ipam;
  const runs = r.ipam ?? [];
  if (!c || runs.length === 0) return '';
  const ids = variantsOf(r);
  const pct = (name: string, f: (x: IpamRun) => Percentiles, k: 'p50' | 'p90' | 'p99' | 'max'): Metric => [
    `${name}, ${k} (s)`,
    (xs) => xs.map((x) => s(f(x)[k])),
    1,
  ];
  type Metric = [string, (runs: IpamRun[]) => (number | undefined)[], number];
  const metrics: Metric[] = [
    ['runs with every node schedulable', (xs) => [xs.filter((x) => x.converged).length], 0],
    ['nodes schedulable at the end', (xs) => xs.map((x) => x.schedulable), 0],
    ['all registrations acknowledged (s)', (xs) => xs.map((x) => x.registerS), 1],
    pct('created → pod CIDRs (node IPAM)', (x) => x.podCIDRMs, 'p50'),
    pct('created → pod CIDRs (node IPAM)', (x) => x.podCIDRMs, 'p99'),
    pct('created → Ready=True (kwok)', (x) => x.readyMs, 'p99'),
    pct('created → route in the cloud', (x) => x.routeMs, 'p50'),
    pct('created → route in the cloud', (x) => x.routeMs, 'p99'),
    pct('**created → NetworkUnavailable=False**', (x) => x.schedulableMs, 'p50'),
    pct('**created → NetworkUnavailable=False**', (x) => x.schedulableMs, 'p90'),
    pct('**created → NetworkUnavailable=False**', (x) => x.schedulableMs, 'p99'),
    pct('**created → NetworkUnavailable=False**', (x) => x.schedulableMs, 'max'),
    pct('pod CIDRs → NetworkUnavailable=False (the route controller)', controllerShare, 'p50'),
    pct('pod CIDRs → NetworkUnavailable=False (the route controller)', controllerShare, 'p99'),
    pct('route → NetworkUnavailable=False (nodes with both)', (x) => x.routeToConditionMs, 'p99'),
    ['first POST → last node schedulable (s)', (xs) => xs.map((x) => x.lastSchedulableS), 1],
    ['first POST → last pod CIDR assigned (s)', (xs) => xs.map((x) => x.lastPodCIDRS), 1],
    ['ListRoutes calls', (xs) => xs.map((x) => x.calls.list), 0],
    ['CreateRoute calls', (xs) => xs.map((x) => x.calls.create), 0],
    ['CreateRoute calls throttled by the cloud', (xs) => xs.map((x) => x.calls.throttled), 0],
    ['nodes marked NetworkUnavailable=True on the way', (xs) => xs.map((x) => x.markedUnavailable), 0],
    ['nodes/status patches', (xs) => xs.map((x) => x.apiserver['patch nodes/status'] ?? 0), 0],
    [
      'Events written (create+patch)',
      (xs) => xs.map((x) => (x.apiserver['create events'] ?? 0) + (x.apiserver['patch events'] ?? 0)),
      0,
    ],
    ['peer CPU (s)', (xs) => xs.map((x) => x.cpuMs / 1000), 1],
  ];
  const rows = metrics.map(([name, f, d]) => [
    name,
    ...ids.map((id) => fmtSpread(f(runs.filter((x) => x.variant === id)), d)),
  ]);
  const v = runs[0]!.cluster;
  const hb = c.heartbeatMs >= 60_000 ? `${fmt(c.heartbeatMs / 60_000, 1)} min` : `${c.heartbeatMs / 1000} s`;
  return [
    `## Nodes registering as kubelets do: node IPAM and kwok (real kube-apiserver)`,
    ``,
    `${c.nodes} Nodes POSTed at once, ${c.concurrency} requests in flight, the way kubelets register: name, \`spec.providerID\`, addresses, capacity and nodeInfo, **no pod CIDRs and no conditions**. kube-controller-manager ${v.kubeControllerManager} runs only its node IPAM controller (\`--cluster-cidr=${c.clusterCIDR}\`, a /24 per node, its default client limits of 20 requests/s, burst 30) and assigns the pod CIDRs; kwok ${v.kwok} plays the kubelets (first conditions, Leases renewed every 10 s, status heartbeat every ${hb}, never \`NetworkUnavailable\`; test/support/kwok-cluster.ts). Each variant runs on a fresh control plane with a fresh peer; the cloud is the burst's (${c.latency} per call, ${c.writeRate} writes/s, burst ${c.writeBurst}); the TS peer runs with the daemon's defaults. An admin watch timestamps per node the first sight of its pod CIDRs, of Ready=True and of **NetworkUnavailable=False, when its pods become schedulable**; latencies are per node from its create being acknowledged, and the route's time is the peer cloud's first successful CreateRoute for the node's pod CIDR. A run gives up ${c.timeoutMs / 1000} s after the first POST or after ${c.stallMs / 1000} s in which no node became schedulable. Percentiles are over all ${c.nodes} nodes; – where one falls on a node that never got there within the run. Cells: median (min–max) over runs.`,
    ``,
    table(['Metric', ...ids.map((id) => r.meta.variants[id] ?? id)], rows),
    ``,
    `![nodes schedulable](${charts}ipam-schedulable.svg)`,
  ].join('\n');
}

export async function ipamChart(r: Results, dir: string): Promise<void> {
  const runs = r.ipam ?? [];
  if (runs.length === 0) return;
  const samples: Record<string, number[]> = {};
  const totals: Record<string, number> = {};
  const cidr = 'pod CIDRs assigned (all variants)';
  for (const id of variantsOf(r)) {
    const label = `${r.meta.variants[id] ?? id}: NetworkUnavailable=False`;
    for (const x of runs.filter((y) => y.variant === id)) {
      (samples[label] ??= []).push(...x.latencies.filter(isLatency).map((v) => v / 1000));
      totals[label] = (totals[label] ?? 0) + x.latencies.length;
    }
  }
  for (const x of runs) {
    (samples[cidr] ??= []).push(...x.podCIDRLatencies.filter(isLatency).map((v) => v / 1000));
    totals[cidr] = (totals[cidr] ?? 0) + x.podCIDRLatencies.length;
  }
  await renderSvg(
    ecdfChart(
      'Registration with node IPAM and kwok: node created → (all runs)',
      samples,
      's since the node was created',
      totals,
      'fraction of nodes',
    ),
    path.join(dir, 'ipam-schedulable.svg'),
  );
}
