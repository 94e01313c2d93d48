// A burst of joins into a cloud that throttles (issue: kubernetes/kubernetes#41671), in
// virtual time through the public controller options: N nodes join within a few
// seconds, the cloud refills `rate` writes/s up to `burst` and refuses the rest
// as throttled with the time of its next token. Shared by the pacing tests
// (src/controller/throttled-cloud.test.ts) and the benchmark, so both count the
// same thing: how many writes the cloud received and when every node had its route.
import { MemoryRoutes } from '../cloud/memory/memory-routes.ts';
import { MemoryCluster } from '../cluster/memory-cluster.ts';
import type { RouteControllerOptions } from '../controller/options.ts';
import { RouteController } from '../controller/route-controller.ts';
import { VirtualClock } from '../core/clock.ts';
import { seededRandom } from '../core/random.ts';
import type { WriteLimit } from '../core/write-pacer.ts';

/** How the controller is told (or not told) about the cloud's limit. */
export type PacingConfig =
  /** The library's default for a provider that declares no limit. */
  | { readonly kind: 'undeclared' }
  /** A provider that declares `'unlimited'` (no slow start, R137). */
  | { readonly kind: 'unlimited' }
  /** `--cloud-write-qps=auto` with the provider declaring `declared` (the daemon's default). */
  | { readonly kind: 'declared'; readonly declared: WriteLimit }
  /** `--cloud-write-qps=N` (`--cloud-write-burst`). */
  | { readonly kind: 'fixed'; readonly qps: number; readonly burst?: number }
  /** `--cloud-write-qps=0`: unpaced, upstream's behaviour. */
  | { readonly kind: 'unpaced' }
  /**
   * Upstream's route controller, as a model: unpaced, no route cache, so every
   * reconcile lists and sends every missing route, lists ≥ 10 s apart (in watch
   * mode, KEP-5237's gate on; in periodic mode, every 10 s).
   */
  | { readonly kind: 'upstream' };

export interface ThrottleBurstOptions {
  readonly pacing: PacingConfig;
  readonly mode: 'watch' | 'periodic';
  /** The cloud's real limit. */
  readonly cloud: WriteLimit;
  readonly nodes: number;
  /** The joins are spread evenly over this window. */
  readonly joinWindowMs: number;
  /** Latency of every cloud call. */
  readonly latencyMs?: number;
  /** Give up after this much virtual time. */
  readonly horizonMs?: number;
  readonly seed?: number;
}

export interface ThrottleBurstResult {
  /** createRoute calls the cloud received, and how many it refused as throttled. */
  readonly creates: number;
  readonly refused: number;
  readonly lists: number;
  /** Every node routed: ms after the first join; undefined if not within the horizon. */
  readonly convergedMs: number | undefined;
  readonly routed: number;
  /** The most writes the cloud received in any one second (its burst plus its rate bound this). */
  readonly peakWritesPerSecond: number;
}

/** The cloud's own bound: its burst at once, then the rest at its rate. */
export function cloudBoundMs(o: Pick<ThrottleBurstOptions, 'cloud' | 'nodes'>): number {
  return (Math.max(0, o.nodes - o.cloud.burst) / o.cloud.qps) * 1000;
}

function pacingOptions(p: PacingConfig): Partial<RouteControllerOptions> {
  switch (p.kind) {
    case 'undeclared':
      return {};
    case 'unlimited':
      return { cloudWriteLimit: 'unlimited' };
    case 'declared':
      return { cloudWriteLimit: p.declared };
    case 'fixed':
      return { cloudWriteQPS: p.qps, ...(p.burst !== undefined ? { cloudWriteBurst: p.burst } : {}) };
    case 'unpaced':
      return { cloudWriteQPS: 0 };
    case 'upstream':
      return { cloudWriteQPS: 0, routeCache: false };
  }
}

const podCIDR = (i: number): string => `10.${100 + (i >> 8)}.${i & 255}.0/24`;

export async function runThrottleBurst(o: ThrottleBurstOptions): Promise<ThrottleBurstResult> {
  const seed = o.seed ?? 1;
  const clock = new VirtualClock();
  const cluster = new MemoryCluster({ clock });
  const routes = new MemoryRoutes({
    clock,
    latencyMs: o.latencyMs ?? 50,
    writeRateLimit: { ratePerSec: o.cloud.qps, burst: o.cloud.burst },
    random: seededRandom(seed + 1),
  });
  const controller = new RouteController({
    routes,
    nodes: cluster,
    statusWriter: cluster,
    recorder: cluster,
    clusterCIDRs: ['10.0.0.0/8'],
    clock,
    random: seededRandom(seed),
    watchBasedReconciliation: o.mode === 'watch',
    ...pacingOptions(o.pacing),
  });
  const stop = new AbortController();
  const running = controller.run(stop.signal);
  await clock.advance(1_000);
  const t0 = clock.now();
  for (let i = 0; i < o.nodes; i++) {
    clock.setTimeout(
      () => cluster.createNode({ name: `join-${i}`, podCIDRs: [podCIDR(i)] }),
      Math.floor((i * o.joinWindowMs) / o.nodes),
    );
  }
  const horizon = t0 + (o.horizonMs ?? 1_800_000);
  let convergedMs: number | undefined;
  while (clock.now() < horizon) {
    await clock.advance(100);
    if (routedCount(routes) === o.nodes) {
      convergedMs = clock.now() - t0;
      break;
    }
  }
  stop.abort();
  await clock.advance(0);
  await running;
  const creates = routes.calls.filter((c) => c.op === 'create');
  return {
    creates: creates.length,
    refused: creates.filter((c) => c.outcome !== 'ok').length,
    lists: routes.count('list'),
    convergedMs,
    routed: routedCount(routes),
    peakWritesPerSecond: peakPerSecond(creates.map((c) => c.start)),
  };
}

function routedCount(routes: MemoryRoutes): number {
  return routes.snapshot().filter((r) => r.targetNode.startsWith('join-')).length;
}

function peakPerSecond(starts: readonly number[]): number {
  const sorted = [...starts].sort((a, b) => a - b);
  let peak = 0;
  for (let i = 0, j = 0; i < sorted.length; i++) {
    while (sorted[i]! - sorted[j]! >= 1000) j++;
    peak = Math.max(peak, i - j + 1);
  }
  return peak;
}
