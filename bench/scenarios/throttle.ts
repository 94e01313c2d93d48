// A burst of joins into a cloud that throttles (R111, R112, R137), real time on the
// shared apiserver: each TS pacing configuration (no limit declared, twice the real
// limit declared, unpaced) and upstream's peer, `reps` times, in the same run.
import type { BenchCluster } from '../lib/apiserver.ts';
import { throttleVariants, type Variant } from '../lib/peers.ts';
import { burstSession, type BurstConfig, type BurstRun } from './realtime.ts';

export interface ThrottleScenarioDeps {
  readonly reps: number;
  readonly logDir: string;
  readonly log: (msg: string) => void;
  /** Each run as it ends, so an interrupted suite keeps what it measured. */
  readonly onRun: (r: BurstRun) => void;
}

/** The peers of the scenario: the TS ones always, upstream's where its binary was built. */
export function throttlePeers(t: BurstConfig, variants: readonly Variant[]): Variant[] {
  const goPresent = variants.some((v) => v.kind === 'go');
  return throttleVariants(t).filter((v) => v.kind === 'ts' || goPresent);
}

export async function throttleScenario(
  c: BenchCluster,
  t: BurstConfig,
  peers: readonly Variant[],
  deps: ThrottleScenarioDeps,
): Promise<void> {
  for (let rep = 1; rep <= deps.reps; rep++) {
    for (const v of peers) {
      deps.log(`throttling cloud ${rep}/${deps.reps}: ${v.id}`);
      const r = await burstSession(c, v, t, deps.logDir, `throttle${rep}`);
      deps.onRun(r);
      deps.log(`  routes ${r.routes}/${t.nodes} in ${r.convergeS ?? '-'} s, ${r.burstCalls.create} creates`);
    }
  }
}
