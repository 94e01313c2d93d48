// The summary's section for the shipped executable and the packed library.
import { fmt, ratio, table } from './lib/format.ts';
import type { Results } from './lib/results.ts';

function label(kind: string): string {
  if (kind === 'go') return 'upstream (Go peer)';
  if (kind === 'floor') return 'Node.js floor (no dependencies)';
  return `\`--cloud-provider ${kind}\``;
}

export function shippedSection(r: Results): string {
  const s = r.shipped;
  if (s === undefined) return '';
  const kinds = [...new Set(s.memory.map((x) => x.kind))];
  const sizes = [...new Set(s.memory.map((x) => x.nodes))].sort((a, b) => a - b);
  const go = (n: number) => s.memory.find((x) => x.kind === 'go' && x.nodes === n);
  const rows = sizes.flatMap((n) =>
    kinds
      .map((k) => s.memory.find((x) => x.kind === k && x.nodes === n))
      .filter((x) => x !== undefined)
      .map((m) => [
        label(m.kind),
        n.toLocaleString('en-US'),
        fmt(m.startMB),
        fmt(m.syncedMB),
        fmt(m.reconciledMB),
        m.kind === 'go' ? '' : ratio(Math.max(m.syncedMB, m.reconciledMB), go(n)?.reconciledMB),
      ]),
  );
  const skipped = Object.entries(s.skipped).map(([k, why]) => `- not measured: ${k} (${why})`);
  return [
    `## The shipped executable (resident memory, idle CPU)`,
    ``,
    `\`bin/cloud-route-controller.js run\` from the packed tarball installed with npm (dist/, the executable's own V8 flags), leader election on, metrics and health servers on, watch mode, against the real kube-apiserver; realistic IPv4 nodes with routes and conditions preset in each cloud (\`memory\`: a state file; \`linux\`: a router network namespace; \`hcloud\`: the API fake; \`aws\`: moto; \`azure\`: Microsoft's generated armnetwork fake; \`gce\`: Google's MockGCE as the Compute Engine API; \`openstack\`: the real neutron-server behind a Keystone stand-in). MB resident (/proc VmRSS); "start" is one second after launch, before the cache lists. The Node.js floor is bench/peer/node-floor.mjs: no dependencies, a LIST and WATCH of nodes over TLS with a client certificate, an HTTP and an HTTPS server, the daemon's V8 flags; what any Node.js implementation pays before its own code.`,
    ``,
    table(['Process', 'Nodes', 'Start MB', 'After sync MB', 'After one reconcile MB', 'vs upstream'], rows),
    ``,
    table(
      ['Idle, heartbeating nodes', 'Nodes', 'Window s', 'Heartbeats', 'CPU s/h', 'RSS MB'],
      s.idle.map((x) => [
        label(x.kind),
        x.nodes.toLocaleString('en-US'),
        fmt(x.windowS, 0),
        String(x.heartbeats),
        fmt(x.cpuMsPerHour / 1000),
        fmt(x.rssMB),
      ]),
    ),
    ``,
    table(
      ['Library import from the packed tarball', 'Peak MB resident'],
      Object.entries(s.libraryImportMB).map(([k, v]) => [`\`import('${k}')\``, fmt(v)]),
    ),
    ``,
    ...skipped,
  ].join('\n');
}

/** The 15,000-node comparison (scenario `scale`). */
export function scaleSection(r: Results): string {
  const rows = r.scale ?? [];
  if (rows.length === 0) return '';
  const label = (k: string): string =>
    k === 'go' ? 'upstream (gate on)' : 'shipped daemon (memory, defaults)';
  return [
    `## ${rows[0]!.nodes.toLocaleString('en-US')} dual-stack nodes (real kube-apiserver)`,
    ``,
    `The documented Kubernetes maximum: realistic dual-stack nodes, routed already (nothing needs a write), the packed and installed daemon in watch mode with its defaults and upstream's Go peer (gate on) one after the other, alternating over the suite's repetitions (each figure their median). Initial sync: from the process's start to its node cache synced (the daemon's own log line; the peer's first list, which follows its cache sync at once, read from its reports every 20 ms). CPU from /proc: from start to the end of the first (listing) reconcile, and for one event each (a node joins, the same node leaves, a node's InternalIP changes) until the reconcile it caused finished.`,
    ``,
    table(
      [
        'peer',
        'initial sync s',
        'each run s',
        'RSS synced MB',
        'RSS after reconcile MB',
        'CPU to first reconcile ms',
        'join ms',
        'leave ms',
        'address ms',
      ],
      rows.map((x) => [
        label(x.kind),
        fmt(x.syncS, 1),
        (x.syncRunsS ?? [x.syncS]).map((v) => fmt(v, 2)).join(', '),
        fmt(x.syncedMB, 1),
        fmt(x.reconciledMB, 1),
        fmt(x.startCpuMs, 0),
        fmt(x.eventCpuMs.join, 0),
        fmt(x.eventCpuMs.leave, 0),
        fmt(x.eventCpuMs.address, 0),
      ]),
    ),
  ].join('\n');
}
