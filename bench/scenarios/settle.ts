// Latency once a burst has been absorbed: the cloud has no write limit, so
// every variant converges, and what remains is the reconcile scheduling
// itself. Single nodes 2 s apart show the 10 s minimum interval (R44, and
// upstream's rate limiter); isolated nodes after >= 10 s of quiet show R48
// (TS reconciles at once) against upstream's token debt from the burst.
import type { BenchCluster } from '../lib/apiserver.ts';
import { CLUSTER_CIDR_V4, makeNode, podCIDRv4 } from '../lib/nodes.ts';
import { startPeer, type Variant } from '../lib/peers.ts';

const sleep = (ms: number): Promise<void> => new Promise((r) => setTimeout(r, ms));

export interface SettleConfig {
  nodes: number;
  latency: string;
  quietMs: number;
  singles: number;
  singleGapMs: number;
  isolated: number;
  isolatedGapMs: number;
  waitMs: number;
}

export interface SettleRun {
  readonly variant: string;
  /** All nodes created at once → last route (s); undefined if not within waitMs. */
  readonly burstConvergeS: number | undefined;
  readonly singlesLatencies: (number | undefined)[];
  readonly isolatedLatencies: (number | undefined)[];
  readonly calls: { list: number; create: number };
}

export async function settleSession(
  c: BenchCluster,
  v: Variant,
  cfg: SettleConfig,
  logDir: string,
  tag: string,
): Promise<SettleRun> {
  await c.admin.deleteAllNodes();
  const p = startPeer(v, {
    kubeconfig: v.kind === 'ts' ? c.tsKubeconfig : c.goKubeconfig,
    clusterCIDRs: [CLUSTER_CIDR_V4],
    latency: cfg.latency,
    logDir,
    tag,
  });
  try {
    const s0 = await p.waitFor(() => true, 30_000);
    if (s0 === undefined) throw new Error(`peer ${p.pid} did not start`);
    await sleep(2000);
    const t0 = Date.now();
    await c.admin.createNodes(
      Array.from({ length: cfg.nodes }, (_, i) => makeNode('settle', i)),
      0,
    );
    await p.waitFor((s) => s.routes >= cfg.nodes, cfg.waitMs);
    await sleep(cfg.quietMs);
    const singles: number[] = [];
    let i = cfg.nodes;
    for (let k = 0; k < cfg.singles; k++, i++) {
      singles.push((await c.admin.createNode(makeNode('settle', i))).visibleAt);
      await sleep(cfg.singleGapMs);
    }
    const isolated: number[] = [];
    for (let k = 0; k < cfg.isolated; k++, i++) {
      await sleep(cfg.isolatedGapMs);
      isolated.push((await c.admin.createNode(makeNode('settle', i))).visibleAt);
    }
    await p.waitFor((s) => s.routes >= i, cfg.waitMs);
    const end = p.latest()!;
    await p.stop();
    const at = p.created;
    const burst = Array.from({ length: cfg.nodes }, (_, k) => at[podCIDRv4(k)]);
    const lat = (start: number, visible: readonly number[]): (number | undefined)[] =>
      visible.map((t, k) => {
        const r = at[podCIDRv4(start + k)];
        return r === undefined ? undefined : r - t;
      });
    return {
      variant: v.id,
      burstConvergeS: burst.every((x) => x !== undefined)
        ? (Math.max(...(burst as number[])) - t0) / 1000
        : undefined,
      singlesLatencies: lat(cfg.nodes, singles),
      isolatedLatencies: lat(cfg.nodes + cfg.singles, isolated),
      calls: { list: end.list - s0.list, create: end.create - s0.create },
    };
  } finally {
    await p.stop();
  }
}
