// R32: a condition patch, retried in place on 409 like R24; 404 means the node is gone.
import { sleep } from '../core/clock.ts';
import { errorMessage } from '../core/errors.ts';
import type { NodePlan } from '../core/plan.ts';
import { statusCodeOf, type EventRecorder, type Logger, type NodeStatusWriter } from '../core/ports.ts';
import type { Clock } from '../core/clock.ts';
import type { NodeCondition } from '../core/types.ts';
import { CONFLICT_ATTEMPTS, conflictDelayMs } from './executor.ts';

interface WriterDeps {
  readonly statusWriter: NodeStatusWriter;
  readonly logger: Logger;
  readonly clock: Clock;
  readonly random: () => number;
  readonly recorder?: EventRecorder;
}

export async function writeCondition(
  np: NodePlan,
  condition: NodeCondition,
  deps: WriterDeps,
  signal: AbortSignal,
): Promise<'written' | 'gone' | 'failed' | 'canceled'> {
  for (let attempt = 1; ; attempt++) {
    if (signal.aborted) return 'canceled';
    try {
      await deps.statusWriter.patchNodeCondition({ name: np.name, uid: np.uid }, condition, signal);
      return 'written';
    } catch (err) {
      const code = statusCodeOf(err);
      if (code === 404) return 'gone';
      if (code === 409 && attempt < CONFLICT_ATTEMPTS) {
        try {
          await sleep(deps.clock, conflictDelayMs(deps.random), signal);
        } catch {
          return 'canceled';
        }
        continue;
      }
      if (signal.aborted) return 'canceled';
      deps.logger.error(`Error updating node ${np.name}: ${errorMessage(err)}`);
      return 'failed';
    }
  }
}
