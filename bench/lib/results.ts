// The shape of bench/out/results.json.
import type { BurstRun, FailureRun, IdleRun } from '../scenarios/realtime.ts';
import type { SettleRun } from '../scenarios/settle.ts';
import type { MemoryRow, ProcessCostRow } from '../scenarios/process.ts';
import type { CostRow, ProfileEntry } from '../scenarios/reconcile-cost.ts';
import type { EventCostRow } from '../scenarios/event-cost.ts';
import type { ScaleRow } from '../scenarios/scale.ts';
import type { BurstVirtualResult, IdleVirtualResult } from '../scenarios/virtual.ts';
import type { ChurnVirtualResult } from '../scenarios/churn.ts';
import type { ChurnRealRun } from '../scenarios/churn-real.ts';
import type { ShippedResults } from '../scenarios/shipped.ts';
import type { IpamRun } from '../scenarios/ipam.ts';
import type { SuiteConfig } from './config.ts';
import type { MachineInfo, Versions } from './machine.ts';

export interface Results {
  meta: {
    suite: SuiteConfig['name'];
    startedAt: string;
    finishedAt?: string;
    wallS?: number;
    machine: MachineInfo;
    versions: Versions;
    config: SuiteConfig;
    /** Scenarios skipped, with the reason (e.g. binaries missing). */
    skipped: Record<string, string>;
    variants: Record<string, string>;
    /** 1-minute load average sampled every 30 s during the run. */
    loadAvg1m?: { median: number; max: number; samples: number };
    /** Node flags the TS peers ran with (the daemon's V8 settings); absent in runs before they existed. */
    tsNodeFlags?: string[];
    /** Scenarios re-measured by a later `--merge` invocation, which replaced their results. */
    merges?: {
      scenarios: string[];
      /** Repetitions of the timed real-apiserver runs in the merge (absent: the base run's). */
      reps?: number;
      tsNodeFlags?: string[];
      startedAt: string;
      wallS: number;
      loadAvg1m?: { median: number; max: number; samples: number };
    }[];
  };
  idleVirtual: IdleVirtualResult[];
  burstVirtual: BurstVirtualResult[];
  /** Absent in runs before the churn hour existed. */
  churnVirtual?: ChurnVirtualResult[];
  /** The churn hour compressed into a real-time window, with the upstream peer. */
  churnReal?: ChurnRealRun[];
  idleReal: IdleRun[];
  burst: BurstRun[];
  failure: FailureRun[];
  settle: SettleRun[];
  reconcileCost: CostRow[];
  profile: { nodes: number; entries: ProfileEntry[] } | undefined;
  memory: MemoryRow[];
  processCost: ProcessCostRow[];
  /** Output of scripts/informer-memory.ts --json, when it ran. */
  informerMemory: Record<string, unknown> | undefined;
  /** The shipped executable and the packed library (absent in runs before the scenario existed). */
  shipped?: ShippedResults | undefined;
  /** Kubelet-like registration with node IPAM and kwok (absent in runs before the scenario existed). */
  ipam?: IpamRun[];
  /** CPU of one node event in watch mode (absent in runs before incremental planning). */
  eventCost?: EventCostRow[];
  /** The shipped daemon and upstream at the documented maximum (absent in runs before it existed). */
  scale?: ScaleRow[];
  /** A burst into a cloud that throttles, told or not told its limit (absent in runs before it existed). */
  throttle?: BurstRun[];
}

/** The result fields each scenario writes (what `--merge` replaces). */
export const SCENARIO_FIELDS = {
  'idle-virtual': ['idleVirtual'],
  'burst-virtual': ['burstVirtual'],
  'churn-virtual': ['churnVirtual'],
  'churn-real': ['churnReal'],
  cost: ['reconcileCost', 'profile', 'eventCost'],
  idle: ['idleReal'],
  burst: ['burst'],
  failure: ['failure'],
  settle: ['settle'],
  process: ['memory', 'processCost', 'informerMemory'],
  shipped: ['shipped'],
  ipam: ['ipam'],
  scale: ['scale'],
  throttle: ['throttle'],
} as const satisfies Record<string, readonly (keyof Results)[]>;

/** The configuration sections each scenario reads. */
const CONFIG_FIELDS: Record<keyof typeof SCENARIO_FIELDS, readonly (keyof SuiteConfig)[]> = {
  'idle-virtual': ['idleVirtual'],
  'burst-virtual': ['burstVirtual'],
  'churn-virtual': ['churnVirtual'],
  'churn-real': ['churnVirtual', 'churnReal'],
  cost: ['cost'],
  idle: ['idle'],
  burst: ['burst'],
  failure: ['failure'],
  settle: ['settle'],
  process: ['process'],
  shipped: ['shipped'],
  ipam: ['ipam'],
  scale: ['scale'],
  throttle: ['throttle'],
};

/** The base run's configuration with the sections of the re-measured scenarios replaced (its reps stay). */
export function mergedConfig(
  base: SuiteConfig,
  run: SuiteConfig,
  scenarios: Iterable<keyof typeof SCENARIO_FIELDS>,
): SuiteConfig {
  const out: Record<string, unknown> = { ...base };
  for (const s of scenarios) for (const k of CONFIG_FIELDS[s]) out[k] = run[k];
  return out as unknown as SuiteConfig;
}

/**
 * `--merge`: the base run with the re-measured scenarios' sections (and configuration) taken from
 * `fresh`, and the merge recorded so the summary says which sections come from which run.
 */
export function mergeResults(
  base: Results,
  fresh: Results,
  only: ReadonlySet<keyof typeof SCENARIO_FIELDS>,
  reps: number,
): Results {
  const out = { ...base } as Record<string, unknown>;
  for (const s of only) for (const k of SCENARIO_FIELDS[s]) out[k] = fresh[k];
  const r = out as unknown as Results;
  r.meta = {
    ...base.meta,
    // The re-measured scenarios' configuration is this run's; the others keep the base run's.
    config: mergedConfig(base.meta.config, fresh.meta.config, only),
    variants: { ...base.meta.variants, ...fresh.meta.variants },
    merges: [
      // An earlier merge whose scenarios are all re-measured now no longer describes any section.
      ...(base.meta.merges ?? []).filter(
        (m) => !m.scenarios.every((x) => only.has(x as keyof typeof SCENARIO_FIELDS)),
      ),
      {
        scenarios: [...only],
        reps,
        tsNodeFlags: fresh.meta.tsNodeFlags ?? [],
        startedAt: fresh.meta.startedAt,
        wallS: fresh.meta.wallS ?? 0,
        ...(fresh.meta.loadAvg1m ? { loadAvg1m: fresh.meta.loadAvg1m } : {}),
      },
    ],
  };
  return r;
}
