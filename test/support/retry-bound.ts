// The longest wait SPEC R46 allows before the retry after `n` consecutive failed
// reconciles: the controller's own backoff with its jitter at the upper end.
import { retryDelayMs } from '../../src/core/backoff.ts';

export function retryBoundMs(n: number): number {
  // A plain failure (no kind that changes the retry): min(10 s · 2ⁿ⁻¹, 5 min) · 1.2.
  return retryDelayMs(n, new Set(), () => 1)!;
}
