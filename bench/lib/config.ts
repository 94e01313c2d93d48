// The two sizes of the suite. `quick` keeps every scenario but shrinks
// nodes, windows and repetitions so the whole run stays under five minutes.
import type { BurstConfig, FailureConfig, IdleConfig } from '../scenarios/realtime.ts';
import type { SettleConfig } from '../scenarios/settle.ts';
import type { ChurnConfig } from '../scenarios/churn.ts';
import type { ChurnRealConfig } from '../scenarios/churn-real.ts';
import type { ShippedConfig } from '../scenarios/shipped-run.ts';
import type { IpamConfig } from '../scenarios/ipam.ts';
import type { ScaleConfig } from '../scenarios/scale.ts';

export interface SuiteConfig {
  readonly name: 'full' | 'quick';
  readonly reps: number;
  readonly idleVirtual: { nodes: number; windowHours: number; warmupMinutes: number; heartbeatMs: number };
  readonly burstVirtual: {
    nodes: number;
    spreadMs: number;
    writeRate: number;
    latencyMs: number;
    limitHours: number;
  };
  readonly burst: BurstConfig;
  /** Absent in configs recorded before the churn hour existed. */
  readonly churnVirtual?: ChurnConfig;
  readonly churnReal?: ChurnRealConfig;
  readonly failure: FailureConfig;
  /** undefined: skipped (the quick suite has no time for it). */
  readonly settle: SettleConfig | undefined;
  readonly idle: IdleConfig;
  readonly cost: {
    nodes: number[];
    iterations: number;
    profileNodes: number;
    profileIterations: number;
    /** Cluster sizes and samples per event kind of the watch-mode event cost. */
    eventNodes?: number[];
    eventSamples?: number;
  };
  readonly process: { memoryNodes: number[]; costNodes: number[]; measureMs: number; settleMs: number };
  readonly shipped: ShippedConfig;
  /**
   * Kubelet-like registration on a kwok control plane (scenario `ipam`); undefined: skipped (the
   * quick suite has no time for it; configs recorded before it existed lack it).
   */
  readonly ipam?: IpamConfig | undefined;
  /** The shipped daemon and upstream at 15,000 dual-stack nodes (scenario `scale`); undefined: skipped. */
  readonly scale?: ScaleConfig | undefined;
  /**
   * A burst into a cloud that throttles at `writeRate`/`writeBurst`, the TS peers told no limit,
   * twice the real one, or unpaced (scenario `throttle`); absent in configs recorded before it.
   */
  readonly throttle?: BurstConfig | undefined;
}

/** 200 joins within 2 s into EC2's real mutating bucket (5/s, burst 50): the issue's scenario. */
const THROTTLE: BurstConfig = {
  nodes: 200,
  spreadMs: 2000,
  singles: 0,
  singleGapMs: 0,
  latency: '50ms',
  writeRate: 5,
  writeBurst: 50,
  tsWriteBudget: undefined,
  timeoutMs: 240_000,
  stallMs: 60_000,
  singlesWaitMs: 0,
};

/** The churn hour is virtual time and cheap: the same in both suites. */
const CHURN_HOUR: ChurnConfig = {
  nodes: 1000,
  joins: 60,
  leaves: 60,
  addressChanges: 10,
  heartbeatMs: 10_000,
  warmupMinutes: 5,
  seed: 1,
};

export const FULL: SuiteConfig = {
  name: 'full',
  reps: 3,
  idleVirtual: { nodes: 1000, windowHours: 3, warmupMinutes: 10, heartbeatMs: 10_000 },
  burstVirtual: { nodes: 1000, spreadMs: 10_000, writeRate: 20, latencyMs: 20, limitHours: 6 },
  burst: {
    nodes: 1000,
    spreadMs: 10_000,
    singles: 20,
    singleGapMs: 2000,
    latency: '20ms',
    writeRate: 20,
    writeBurst: 40,
    tsWriteBudget: undefined,
    timeoutMs: 480_000,
    stallMs: 120_000,
    singlesWaitMs: 30_000,
  },
  churnVirtual: CHURN_HOUR,
  churnReal: { nodes: 1000, windowMs: 600_000, latency: '20ms', writeRate: 20 },
  failure: { nodes: 100, failForMs: 60_000, latency: '20ms', recoveryTimeoutMs: 120_000 },
  settle: {
    nodes: 200,
    latency: '20ms',
    quietMs: 15_000,
    singles: 10,
    singleGapMs: 2000,
    isolated: 4,
    isolatedGapMs: 12_000,
    waitMs: 60_000,
  },
  idle: { nodes: 1000, warmupMs: 30_000, windowMs: 180_000, heartbeatMs: 10_000 },
  cost: {
    nodes: [1000, 5000, 10_000, 15_000],
    iterations: 15,
    profileNodes: 5000,
    profileIterations: 20,
    eventNodes: [5000, 15_000],
    eventSamples: 30,
  },
  process: {
    memoryNodes: [1000, 5000, 10_000],
    costNodes: [1000, 5000, 10_000],
    measureMs: 15_000,
    settleMs: 10_000,
  },
  shipped: {
    nodes: [0, 100, 1000, 5000],
    settleMs: 5000,
    idle: { nodes: 1000, warmupMs: 30_000, windowMs: 180_000, heartbeatMs: 10_000 },
  },
  ipam: {
    nodes: 1000,
    concurrency: 20,
    clusterCIDR: '10.0.0.0/8',
    heartbeatMs: 300_000,
    latency: '20ms',
    writeRate: 20,
    writeBurst: 40,
    timeoutMs: 600_000,
    stallMs: 120_000,
  },
  scale: { nodes: 15_000, settleMs: 5000 },
  throttle: THROTTLE,
};

export const QUICK: SuiteConfig = {
  name: 'quick',
  reps: 1,
  idleVirtual: { nodes: 1000, windowHours: 0.5, warmupMinutes: 5, heartbeatMs: 10_000 },
  burstVirtual: { nodes: 1000, spreadMs: 10_000, writeRate: 20, latencyMs: 20, limitHours: 6 },
  burst: {
    nodes: 50,
    spreadMs: 5000,
    singles: 3,
    singleGapMs: 2000,
    latency: '20ms',
    writeRate: 20,
    writeBurst: 40,
    tsWriteBudget: undefined,
    timeoutMs: 40_000,
    stallMs: 15_000,
    singlesWaitMs: 12_000,
  },
  churnVirtual: CHURN_HOUR,
  churnReal: { nodes: 100, windowMs: 30_000, latency: '20ms', writeRate: 20 },
  failure: { nodes: 20, failForMs: 6000, latency: '20ms', recoveryTimeoutMs: 12_000 },
  settle: undefined,
  idle: { nodes: 200, warmupMs: 8000, windowMs: 15_000, heartbeatMs: 10_000 },
  cost: {
    nodes: [1000, 5000],
    iterations: 5,
    profileNodes: 5000,
    profileIterations: 5,
    eventNodes: [1000],
    eventSamples: 5,
  },
  process: { memoryNodes: [500], costNodes: [500], measureMs: 3000, settleMs: 4000 },
  shipped: {
    nodes: [0, 100],
    settleMs: 2000,
    idle: { nodes: 200, warmupMs: 8000, windowMs: 15_000, heartbeatMs: 10_000 },
  },
  ipam: undefined,
  scale: undefined,
  // The same cloud, fewer nodes: the burst, then 30 more at 5/s (6 s by the cloud's own bound).
  throttle: { ...THROTTLE, nodes: 80, timeoutMs: 60_000, stallMs: 15_000 },
};
