// Side-by-side sessions against the real kube-apiserver: burst (+ single
// nodes right after), failure recovery and a shortened idle hour. Every
// session starts from an empty cluster and a fresh peer process.
import * as fs from 'node:fs';
import * as path from 'node:path';
import type { BenchCluster } from '../lib/apiserver.ts';
import { CLUSTER_CIDR_V4, makeNode, nodeName, podCIDRv4 } from '../lib/nodes.ts';
import { startPeer, type Peer, type Sample, type Variant } from '../lib/peers.ts';
import { NodeTimeline } from '../lib/node-timeline.ts';
import { latencySummary, type LatencySummary } from '../lib/stats.ts';
import { percentiles, type Percentiles } from './ipam.ts';

const sleep = (ms: number): Promise<void> => new Promise((r) => setTimeout(r, ms));

export interface Calls {
  list: number;
  create: number;
  delete: number;
  /** Calls the cloud refused as throttled (absent in runs recorded before it was kept). */
  throttled?: number;
}

function diff(a: Sample | undefined, b: Sample | undefined): Calls {
  return {
    list: (b?.list ?? 0) - (a?.list ?? 0),
    create: (b?.create ?? 0) - (a?.create ?? 0),
    delete: (b?.delete ?? 0) - (a?.delete ?? 0),
    throttled: (b?.throttled ?? 0) - (a?.throttled ?? 0),
  };
}

function kubeconfigFor(c: BenchCluster, v: Variant): string {
  return v.kind === 'ts' ? c.tsKubeconfig : c.goKubeconfig;
}

/** Waits for the peer's first report plus a moment for its informer to sync an empty cluster. */
async function started(p: Peer): Promise<Sample> {
  const s = await p.waitFor(() => true, 30_000);
  if (s === undefined) throw new Error(`peer ${p.pid} did not start`);
  await sleep(2000);
  return p.latest()!;
}

function timeline(p: Peer, t0: number): { s: number; routes: number; create: number; list: number }[] {
  return p.samples
    .filter((x) => x.t >= t0 - 1000)
    .map((x) => ({ s: (x.t - t0) / 1000, routes: x.routes, create: x.create, list: x.list }));
}

// ---- burst + singles ---------------------------------------------------------------------------

export interface BurstConfig {
  nodes: number;
  spreadMs: number;
  singles: number;
  singleGapMs: number;
  latency: string;
  writeRate: number;
  writeBurst: number;
  /**
   * The TS peers' write budget (--cloud-write-qps/--cloud-write-burst), set just
   * under the cloud's limit as the docs advise; upstream has no such setting.
   */
  tsWriteBudget: { qps: number; burst: number } | undefined;
  timeoutMs: number;
  /** Stop waiting when no route appeared for this long. */
  stallMs: number;
  singlesWaitMs: number;
}

export interface BurstRun {
  readonly variant: string;
  readonly converged: boolean;
  /** Routes at the end of the burst phase. */
  readonly routes: number;
  /** First node created → last burst route created (s). */
  readonly convergeS: number | undefined;
  readonly burstCalls: Calls;
  readonly latencyMs: LatencySummary;
  readonly singlesCalls: Calls;
  readonly singlesLatencyMs: LatencySummary;
  readonly singlesLatencies: (number | undefined)[];
  readonly latencies: (number | undefined)[];
  /**
   * Per burst node: its create acknowledged → NetworkUnavailable=False seen by an admin watch (ms);
   * percentiles over all nodes, absent where one falls on a node that never got there.
   */
  readonly schedulableMs: Percentiles;
  readonly schedulableLatencies: (number | undefined)[];
  /** First node created → last burst node schedulable (s); undefined if one never got there. */
  readonly lastSchedulableS: number | undefined;
  readonly apiserver: Record<string, number>;
  readonly cpuMs: number;
  readonly maxRssMB: number;
  readonly series: { s: number; routes: number; create: number; list: number }[];
  readonly wallS: number;
}

export async function burstSession(
  c: BenchCluster,
  v: Variant,
  cfg: BurstConfig,
  logDir: string,
  tag: string,
): Promise<BurstRun> {
  const wall = Date.now();
  await c.admin.deleteAllNodes();
  const burstNodes = Array.from({ length: cfg.nodes }, (_, i) => makeNode('burst', i));
  const singleNodes = Array.from({ length: cfg.singles }, (_, k) => makeNode('single', cfg.nodes + k));
  const conditions = new NodeTimeline(c.cp.adminKubeconfig);
  await conditions.start();
  c.audit.mark();
  const p = startPeer(v, {
    kubeconfig: kubeconfigFor(c, v),
    clusterCIDRs: [CLUSTER_CIDR_V4],
    latency: cfg.latency,
    writeRate: cfg.writeRate,
    writeBurst: cfg.writeBurst,
    ...(cfg.tsWriteBudget
      ? { cloudWriteQps: cfg.tsWriteBudget.qps, cloudWriteBurst: cfg.tsWriteBudget.burst }
      : {}),
    logDir,
    tag,
  });
  try {
    const s0 = await started(p);
    const t0 = Date.now();
    const created = await c.admin.createNodes(burstNodes, cfg.spreadMs);
    const done = await p.waitFor(
      (s) => s.routes >= cfg.nodes,
      cfg.timeoutMs - (Date.now() - t0),
      cfg.stallMs,
    );
    const sBurst = done ?? p.latest()!;
    // Pods become schedulable when NetworkUnavailable turns False (issue: conditions follow the routes).
    const burstNames = burstNodes.map((_, i) => nodeName('burst', i));
    const unschedulable = (): number =>
      burstNames.filter((n) => conditions.nodes.get(n)?.schedulableAt === undefined).length;
    for (let left = unschedulable(), since = Date.now(); left > 0;) {
      await sleep(100);
      const now = unschedulable();
      if (now < left) [left, since] = [now, Date.now()];
      if (Date.now() - since > cfg.stallMs || Date.now() - t0 > cfg.timeoutMs) break;
    }
    const schedulableAt = burstNames.map((n) => conditions.nodes.get(n)?.schedulableAt);
    const singles: { visibleAt: number }[] = [];
    for (const n of singleNodes) {
      singles.push(await c.admin.createNode(n));
      await sleep(cfg.singleGapMs);
    }
    await p.waitFor((s) => s.routes >= cfg.nodes + cfg.singles, cfg.singlesWaitMs);
    const sEnd = p.latest()!;
    await p.stop();
    const at = p.created;
    const lat = created.map((n, i) => {
      const t = at[podCIDRv4(i)];
      return t === undefined ? undefined : t - n.visibleAt;
    });
    const schedLat = created.map((n, i) => {
      const t = schedulableAt[i];
      return t === undefined ? undefined : t - n.visibleAt;
    });
    const singleLat = singles.map((n, k) => {
      const t = at[podCIDRv4(cfg.nodes + k)];
      return t === undefined ? undefined : t - n.visibleAt;
    });
    const burstTimes = created.map((_, i) => at[podCIDRv4(i)]).filter((x): x is number => x !== undefined);
    const converged = done !== undefined;
    const audit = c.audit.countSinceMark();
    const user = v.kind === 'ts' ? 'route-controller-ts' : 'route-controller-go';
    return {
      variant: v.id,
      converged,
      routes: sBurst.routes,
      convergeS: converged ? (Math.max(...burstTimes) - t0) / 1000 : undefined,
      burstCalls: diff(s0, sBurst),
      latencyMs: latencySummary(lat),
      singlesCalls: diff(sBurst, sEnd),
      singlesLatencyMs: latencySummary(singleLat),
      singlesLatencies: singleLat,
      latencies: lat,
      schedulableMs: percentiles(schedLat),
      schedulableLatencies: schedLat,
      lastSchedulableS: schedulableAt.every((t) => t !== undefined)
        ? (Math.max(...schedulableAt) - t0) / 1000
        : undefined,
      apiserver: audit[user] ?? {},
      cpuMs: sEnd.cpuMs - s0.cpuMs,
      maxRssMB: Math.max(...p.samples.map((x) => x.rssKB)) / 1024,
      series: timeline(p, t0),
      wallS: (Date.now() - wall) / 1000,
    };
  } finally {
    conditions.stop();
    await p.stop();
  }
}

// ---- failure recovery -------------------------------------------------------------------------

export interface FailureConfig {
  nodes: number;
  failForMs: number;
  latency: string;
  /** After the failure ends. */
  recoveryTimeoutMs: number;
}

export interface FailureRun {
  readonly variant: string;
  readonly converged: boolean;
  readonly routes: number;
  /** End of the failure window → last route created (s). */
  readonly recoveryS: number | undefined;
  /** Calls while the cloud failed, and from then until all routes existed (or the timeout). */
  readonly duringFailure: Calls;
  readonly afterFailure: Calls;
  readonly series: { s: number; routes: number; create: number; list: number }[];
  readonly failEndS: number;
}

export async function failureSession(
  c: BenchCluster,
  v: Variant,
  cfg: FailureConfig,
  logDir: string,
  tag: string,
): Promise<FailureRun> {
  await c.admin.deleteAllNodes();
  const nodes = Array.from({ length: cfg.nodes }, (_, i) => makeNode('fail', i));
  const p = startPeer(v, {
    kubeconfig: kubeconfigFor(c, v),
    clusterCIDRs: [CLUSTER_CIDR_V4],
    latency: cfg.latency,
    failCreatesFor: `${cfg.failForMs}ms`,
    logDir,
    tag,
  });
  try {
    const s0 = await started(p);
    const peerStart = s0.t - s0.uptimeMs;
    const failEnd = peerStart + cfg.failForMs;
    const t0 = Date.now();
    await c.admin.createNodes(nodes, 0);
    const failEndSample = await p.waitFor((s) => s.t >= failEnd, cfg.failForMs + 5000);
    const done = await p.waitFor(
      (s) => s.routes >= cfg.nodes,
      Math.max(0, failEnd + cfg.recoveryTimeoutMs - Date.now()),
    );
    const sEnd = done ?? p.latest()!;
    await p.stop();
    const times = Object.values(p.created);
    const converged = done !== undefined;
    return {
      variant: v.id,
      converged,
      routes: sEnd.routes,
      recoveryS: converged ? (Math.max(...times) - failEnd) / 1000 : undefined,
      duringFailure: diff(s0, failEndSample),
      afterFailure: diff(failEndSample, sEnd),
      series: timeline(p, t0),
      failEndS: (failEnd - t0) / 1000,
    };
  } finally {
    await p.stop();
  }
}

// ---- idle (real time, scaled to an hour) -------------------------------------------------------

export interface IdleConfig {
  nodes: number;
  warmupMs: number;
  windowMs: number;
  heartbeatMs: number;
}

export interface IdleRun {
  readonly variant: string;
  readonly windowS: number;
  readonly heartbeats: number;
  readonly perHour: Calls;
  readonly cpuMsPerHour: number;
  readonly rssMB: number;
  readonly apiserverPerHour: Record<string, number>;
}

/** Creates `n` routed nodes and a preload file with their routes; returns the file. */
export async function routedCluster(
  c: BenchCluster,
  n: number,
  dir: string,
  opts: { dualStack?: boolean; providerID?: (i: number) => string } = {},
): Promise<{ preload: string; names: string[] }> {
  await c.admin.deleteAllNodes();
  const manifests = Array.from({ length: n }, (_, i) =>
    makeNode('idle', i, {
      routed: true,
      dualStack: opts.dualStack ?? false,
      ...(opts.providerID ? { providerID: opts.providerID } : {}),
    }),
  );
  const made = await c.admin.createNodes(manifests, 0, 24);
  const pre: { cidr: string; node: string; hint: string }[] = [];
  made.forEach((m, i) => {
    const spec = manifests[i]!['spec'] as { podCIDRs: string[] };
    for (const cidr of spec.podCIDRs) pre.push({ cidr, node: m.name, hint: m.uid });
  });
  const preload = path.join(dir, `preload-${n}${opts.dualStack ? '-dual' : ''}.json`);
  fs.writeFileSync(preload, JSON.stringify(pre));
  return { preload, names: made.map((m) => m.name) };
}

/**
 * All variants at once on the same routed nodes and the same heartbeat
 * stream: nothing needs a write (routes and conditions are preset), so the
 * peers cannot disturb each other's state; the audit log confirms no patches.
 */
export async function idleSession(
  c: BenchCluster,
  variants: readonly Variant[],
  cfg: IdleConfig,
  cluster: { preload: string; names: string[] },
  logDir: string,
  tag: string,
): Promise<IdleRun[]> {
  const peers = variants.map((v) =>
    startPeer(v, {
      kubeconfig: kubeconfigFor(c, v),
      clusterCIDRs: [CLUSTER_CIDR_V4],
      latency: '20ms',
      preload: cluster.preload,
      reportInterval: '1s',
      logDir,
      tag,
    }),
  );
  try {
    for (const p of peers) await started(p);
    await sleep(cfg.warmupMs);
    const s0 = peers.map((p) => p.latest()!);
    c.audit.mark();
    const tickMs = 100;
    const ticks = cfg.heartbeatMs / tickMs;
    const t0 = Date.now();
    const end = t0 + cfg.windowMs;
    let beats = 0;
    for (let tick = 0; Date.now() < end; tick++) {
      const due = t0 + tick * tickMs;
      if (due > Date.now()) await sleep(due - Date.now());
      const batch: Promise<void>[] = [];
      for (let k = tick % ticks; k < cluster.names.length; k += ticks)
        batch.push(c.admin.heartbeat(cluster.names[k]!));
      await Promise.all(batch);
      beats += batch.length;
    }
    await sleep(1500);
    const audit = c.audit.countSinceMark();
    return variants.map((v, i) => {
      const a = s0[i]!;
      const b = peers[i]!.latest()!;
      const windowS = (b.t - a.t) / 1000;
      const scale = 3600 / windowS;
      const calls = diff(a, b);
      // Both TS variants share one user, as do both Go ones: the audit column is per user.
      const user = audit[v.kind === 'ts' ? 'route-controller-ts' : 'route-controller-go'] ?? {};
      return {
        variant: v.id,
        windowS,
        heartbeats: beats,
        perHour: { list: calls.list * scale, create: calls.create * scale, delete: calls.delete * scale },
        cpuMsPerHour: (b.cpuMs - a.cpuMs) * scale,
        rssMB: b.rssKB / 1024,
        apiserverPerHour: Object.fromEntries(Object.entries(user).map(([k, n]) => [k, n * scale])),
      };
    });
  } finally {
    for (const p of peers) await p.stop();
  }
}
