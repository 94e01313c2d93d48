// Runs one controller mode through a scenario's timeline on its own virtual
// clock, in-memory cluster and in-memory cloud, and collects what the report
// compares.
import { Registry } from 'prom-client';
import { MemoryCluster } from '../cluster/memory-cluster.ts';
import { MemoryRoutes } from '../cloud/memory/memory-routes.ts';
import { VirtualClock } from '../core/clock.ts';
import { ThrottledError } from '../core/errors.ts';
import { nopLogger } from '../core/ports.ts';
import type { NodeAddress, Routes } from '../core/types.ts';
import { DEFAULTS } from '../controller/options.ts';
import type { ReconcileReport } from '../controller/reconcile.ts';
import { RouteController } from '../controller/route-controller.ts';
import { seededRandom } from './random.ts';
import { neededBy } from './needed-by.ts';
import {
  CLUSTER_CIDR,
  CLUSTER_NAME,
  internalIP,
  nodeName,
  podCIDR,
  type JoinCause,
  type Scenario,
  type SimEvent,
} from './scenario.ts';
import { collectMetrics, finalState, type FinalState, type MetricTotals } from './observe.ts';

/** `watch-upstream`: watch mode as upstream ships it (no route cache, unpaced); `watch`: this project's defaults. */
export type Mode = 'periodic' | 'watch-upstream' | 'watch';
export const OPS = ['list', 'create', 'delete'] as const;
export type Op = (typeof OPS)[number];

export interface ReconcileRecord {
  /** Start, ms since the scenario start. */
  readonly at: number;
  readonly trigger: ReconcileReport['trigger'];
  readonly outcome: ReconcileReport['outcome'];
  readonly created: number;
  readonly deleted: number;
  /** R67: a cached reconcile that handed over to a listing one. */
  readonly handover: boolean;
  readonly source: ReconcileReport['source'];
  /** R109: its list was throttled. */
  readonly listThrottled: boolean;
}

export interface LatencySample {
  readonly node: string;
  readonly cause: JoinCause;
  /** Whether the node joined while the cloud throttled every call. */
  readonly duringThrottle: boolean;
  /** Seconds from the node's creation to the end of its successful createRoute. */
  readonly seconds: number;
}

export interface ModeResult {
  readonly mode: Mode;
  readonly heartbeats: boolean;
  readonly wallMs: number;
  readonly heartbeatsSent: number;
  readonly metrics: MetricTotals;
  /** Cloud calls started per simulated minute, per operation (from the cloud's own log). */
  readonly perMinute: Record<Op, number[]>;
  readonly reconciles: readonly ReconcileRecord[];
  readonly latencies: readonly LatencySample[];
  /** Joined nodes whose route was never created (they left first, or the run ended). */
  readonly unrouted: number;
  /** Time from the out-of-band delete to the route's re-creation, if both happened. */
  readonly oobRepairMs: number | undefined;
  /**
   * Set when the route deleted out-of-band is still missing and no ListRoutes
   * succeeded after the delete: the controller cannot have seen it, and only
   * its next list repairs it (with the route cache, the safety resync, R49).
   * `lastListMs`: start of the last successful list, ms since the run's start.
   */
  readonly oobUnseen: { readonly lastListMs: number } | undefined;
  /** Delete calls (attempts included) of a route a present node still needed: its pod CIDR, to its current address. */
  readonly wrongDeletes: number;
  readonly final: FinalState;
}

/** R49's period as the runs use it (the daemon's default, SPEC §7.1). */
export const SAFETY_RESYNC_MS = DEFAULTS.routeResyncPeriodMs;

export interface RunOptions {
  readonly mode: Mode;
  readonly heartbeats?: boolean;
  /** Called every `progressEveryMs` of simulated time. */
  readonly onProgress?: (p: Progress) => void;
  readonly progressEveryMs?: number;
}

export interface Progress {
  readonly mode: Mode;
  readonly simMs: number;
  readonly nodes: number;
  readonly routes: number;
  readonly calls: Record<Op, number>;
  readonly reconciles: number;
  readonly wallMs: number;
}

function addresses(index: number, generation = 0): NodeAddress[] {
  return [
    { type: 'InternalIP', address: internalIP(index, generation) },
    { type: 'Hostname', address: nodeName(index) },
  ];
}

export async function runMode(
  s: Scenario,
  timeline: readonly SimEvent[],
  o: RunOptions,
): Promise<ModeResult> {
  const wallStart = performance.now();
  const heartbeats = (o.heartbeats ?? true) && s.heartbeatIntervalMs > 0;
  const clock = new VirtualClock();
  const t0 = clock.now();
  // Separate streams: the cloud's draws must not shift the controller's jitter.
  const controllerRandom = seededRandom(s.seed * 7919 + 1);
  const cloud = new MemoryRoutes({
    clock,
    random: seededRandom(s.seed * 7919 + 2),
    latencyMs: s.cloudLatencyMs,
    // Routes that carry next-hop addresses: an address change needs a route update (R18/R19).
    reportNodeAddresses: true,
    ...(s.cloudWriteRatePerSec > 0
      ? { writeRateLimit: { ratePerSec: s.cloudWriteRatePerSec, burst: 2 * s.cloudWriteRatePerSec } }
      : {}),
  });
  const cluster = new MemoryCluster({ clock, synced: true });

  // Heartbeats are driven in per-second batches: node i beats when (second mod interval) = i mod interval.
  const slots = heartbeats ? s.heartbeatIntervalMs / 1000 : 1;
  const beatGroups: Set<string>[] = Array.from({ length: slots }, () => new Set());
  const joinedAt = new Map<string, { at: number; node: string; cause: JoinCause; throttled: boolean }>();
  let throttling = false;
  const ready = (): { type: string; status: string; reason: string; lastHeartbeatTime: Date } => ({
    type: 'Ready',
    status: 'True',
    reason: 'KubeletReady',
    lastHeartbeatTime: new Date(clock.now()),
  });

  // Steady state at start: every node has its route and the condition this controller would write.
  for (let i = 0; i < s.nodes; i++) {
    const name = nodeName(i);
    const node = cluster.createNode({
      name,
      podCIDRs: [podCIDR(i)],
      addresses: addresses(i),
      conditions: [
        ready(),
        {
          type: 'NetworkUnavailable',
          status: 'False',
          reason: 'RouteCreated',
          message: 'RouteController created a route',
        },
      ],
    });
    cloud.putRoute({
      name: `${CLUSTER_NAME}-${node.metadata!.uid!}-${podCIDR(i)}`,
      clusterName: CLUSTER_NAME,
      targetNode: name,
      targetNodeAddresses: addresses(i),
      destinationCIDR: podCIDR(i),
    });
    beatGroups[i % slots]!.add(name);
  }

  let wrongDeletes = 0;
  // The cloud as the controller sees it, checking each delete against the cluster at the moment it is made.
  const routes: Routes = {
    listRoutes: (c, opts) => cloud.listRoutes(c, opts),
    createRoute: (c, hint, r, opts) => cloud.createRoute(c, hint, r, opts),
    deleteRoute: (c, r, opts) => {
      if (neededBy(cluster.get(r.targetNode), r)) wrongDeletes++;
      return cloud.deleteRoute(c, r, opts);
    },
  };
  const reconciles: ReconcileRecord[] = [];
  let recording = true;
  const registry = new Registry();
  const controller = new RouteController({
    routes,
    nodes: cluster,
    statusWriter: cluster,
    recorder: cluster,
    logger: nopLogger,
    clock,
    random: controllerRandom,
    registry,
    clusterName: CLUSTER_NAME,
    clusterCIDRs: [CLUSTER_CIDR],
    watchBasedReconciliation: o.mode !== 'periodic',
    // As the memory provider declares them (R67, R68); upstream-shaped watch mode turns both features off.
    cloudWriteLimit:
      s.cloudWriteRatePerSec > 0
        ? { qps: s.cloudWriteRatePerSec, burst: 2 * s.cloudWriteRatePerSec }
        : 'unlimited',
    routeTargetKeys: ['uid'],
    ...(o.mode === 'watch-upstream' ? { routeCache: false, cloudWriteQPS: 0 } : {}),
    // The daemon's defaults (SPEC §7.1, R10).
    routeReconciliationPeriodMs: 10_000,
    minReconcileIntervalMs: 10_000,
    routeResyncPeriodMs: SAFETY_RESYNC_MS,
    onReconcile: (r) => {
      // A reconcile cut short by the stop after the last simulated millisecond is not part of the run.
      if (!recording) return;
      reconciles.push({
        at: clock.now() - r.durationMs - t0,
        trigger: r.trigger,
        outcome: r.outcome,
        created: r.created,
        deleted: r.deleted,
        handover: r.handover,
        source: r.source,
        listThrottled: r.listThrottled,
      });
    },
  });
  const stop = new AbortController();
  const running = controller.run(stop.signal);

  let heartbeatsSent = 0;
  let oobDelete: { at: number; cidr: string } | undefined;
  const apply = (e: SimEvent): void => {
    switch (e.kind) {
      case 'join': {
        const name = nodeName(e.index);
        const node = cluster.createNode({
          name,
          podCIDRs: [podCIDR(e.index)],
          addresses: addresses(e.index),
          conditions: [ready()],
        });
        joinedAt.set(`${node.metadata!.uid!} ${podCIDR(e.index)}`, {
          at: clock.now(),
          node: name,
          cause: e.cause,
          throttled: throttling,
        });
        beatGroups[e.index % slots]!.add(name);
        break;
      }
      case 'leave':
        cluster.deleteNode(nodeName(e.index));
        beatGroups[e.index % slots]!.delete(nodeName(e.index));
        break;
      case 'address':
        cluster.setAddresses(nodeName(e.index), addresses(e.index, 1));
        break;
      case 'oob-delete':
        cloud.removeRoute(podCIDR(e.index));
        oobDelete = { at: clock.now(), cidr: podCIDR(e.index) };
        break;
      case 'throttle':
        throttling = e.on;
        if (e.on)
          cloud.failFraction(
            1,
            ['list', 'create', 'delete'],
            () => new ThrottledError('Request limit exceeded (simulated throttling window)'),
          );
        else cloud.clearFaults();
        break;
    }
  };

  // The run covers [0, duration): a periodic tick due exactly at the end belongs to the next hour.
  const end = t0 + s.durationMs - 1;
  const progressEvery = o.progressEveryMs ?? s.durationMs / 6;
  let nextProgress = t0 + progressEvery;
  let nextSecond = t0 + 1000;
  let ei = 0;
  for (;;) {
    const nextEvent = ei < timeline.length ? t0 + timeline[ei]!.at : Infinity;
    const t = Math.min(nextSecond, nextEvent, end);
    await clock.advanceTo(t);
    while (ei < timeline.length && t0 + timeline[ei]!.at <= t) apply(timeline[ei++]!);
    if (t === nextSecond) {
      if (heartbeats) {
        const group = beatGroups[((t - t0) / 1000) % slots]!;
        for (const name of group) cluster.heartbeat(name);
        heartbeatsSent += group.size;
      }
      nextSecond += 1000;
    }
    if ((t >= nextProgress || t === end) && o.onProgress) {
      nextProgress += progressEvery;
      o.onProgress({
        mode: o.mode,
        simMs: Math.round((t - t0) / 1000) * 1000,
        nodes: cluster.list().length,
        routes: cloud.snapshot().length,
        calls: countCalls(cloud),
        reconciles: reconciles.length,
        wallMs: performance.now() - wallStart,
      });
    }
    if (t >= end) break;
  }

  const final = finalState(cluster, cloud);
  const metrics = await collectMetrics(registry);
  recording = false;
  stop.abort();
  await clock.advance(0);
  await running;

  const perMinute = perMinuteCalls(cloud, t0, s.durationMs);
  const created = new Map<string, number>();
  for (const c of cloud.calls) {
    if (c.op !== 'create' || c.outcome !== 'ok') continue;
    const key = `${c.nameHint} ${c.destinationCIDR}`;
    if (!created.has(key)) created.set(key, c.end);
  }
  const latencies: LatencySample[] = [];
  let unrouted = 0;
  for (const [key, j] of joinedAt) {
    const doneAt = created.get(key);
    if (doneAt === undefined) unrouted++;
    else
      latencies.push({
        node: j.node,
        cause: j.cause,
        duringThrottle: j.throttled,
        seconds: (doneAt - j.at) / 1000,
      });
  }
  const repair = oobDelete
    ? cloud.calls.find(
        (c) =>
          c.op === 'create' &&
          c.outcome === 'ok' &&
          c.destinationCIDR === oobDelete!.cidr &&
          c.start >= oobDelete!.at,
      )
    : undefined;
  const lastList = cloud.calls.filter((c) => c.op === 'list' && c.outcome === 'ok').at(-1);
  const oobUnseen =
    oobDelete && repair === undefined && (lastList === undefined || lastList.start < oobDelete.at)
      ? { lastListMs: lastList === undefined ? 0 : lastList.start - t0 }
      : undefined;

  return {
    mode: o.mode,
    heartbeats,
    wallMs: performance.now() - wallStart,
    heartbeatsSent,
    metrics,
    perMinute,
    reconciles,
    latencies,
    unrouted,
    oobRepairMs: repair && oobDelete ? repair.end - oobDelete.at : undefined,
    oobUnseen,
    wrongDeletes,
    final,
  };
}

function countCalls(cloud: MemoryRoutes): Record<Op, number> {
  const out: Record<Op, number> = { list: 0, create: 0, delete: 0 };
  for (const c of cloud.calls) out[c.op]++;
  return out;
}

function perMinuteCalls(cloud: MemoryRoutes, t0: number, durationMs: number): Record<Op, number[]> {
  const minutes = Math.ceil(durationMs / 60_000);
  const out: Record<Op, number[]> = {
    list: new Array<number>(minutes).fill(0),
    create: new Array<number>(minutes).fill(0),
    delete: new Array<number>(minutes).fill(0),
  };
  for (const c of cloud.calls) {
    const m = Math.floor((c.start - t0) / 60_000);
    if (m >= 0 && m < minutes) out[c.op][m]!++;
  }
  return out;
}
