// Periodic mode, watch mode as upstream ships it and watch mode with this
// project's defaults through one scenario, plus the watch-mode control run
// without heartbeats, then the comparison.
import { compare, type Comparison } from './compare.ts';
import { runMode, type Mode, type ModeResult, type Progress } from './run.ts';
import { buildTimeline, type Scenario, type SimEvent } from './scenario.ts';

export interface Simulation {
  readonly comparison: Comparison;
  readonly runs: Readonly<Record<Mode, ModeResult>>;
  readonly control: ModeResult;
  readonly timeline: readonly SimEvent[];
  readonly wallMs: number;
}

export interface SimulateOptions {
  readonly onProgress?: (p: Progress) => void;
  /** Called once before each run starts. */
  readonly onRun?: (label: string) => void;
}

export async function simulate(s: Scenario, o: SimulateOptions = {}): Promise<Simulation> {
  const start = performance.now();
  const timeline = buildTimeline(s);
  o.onRun?.('periodic');
  const periodic = await runMode(s, timeline, {
    mode: 'periodic',
    ...(o.onProgress ? { onProgress: o.onProgress } : {}),
  });
  o.onRun?.('watch-upstream');
  const watchUpstream = await runMode(s, timeline, {
    mode: 'watch-upstream',
    ...(o.onProgress ? { onProgress: o.onProgress } : {}),
  });
  o.onRun?.('watch');
  const watch = await runMode(s, timeline, {
    mode: 'watch',
    ...(o.onProgress ? { onProgress: o.onProgress } : {}),
  });
  o.onRun?.('watch-control');
  const control = await runMode(s, timeline, { mode: 'watch', heartbeats: false });
  return {
    comparison: compare(s, timeline, periodic, watch, control, watchUpstream),
    runs: { periodic, 'watch-upstream': watchUpstream, watch },
    control,
    timeline,
    wallMs: performance.now() - start,
  };
}
