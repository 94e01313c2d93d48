// R46: watch-mode retry delay after an `error` reconcile.
import type { ErrorKind } from './errors.ts';

export const RETRY_BASE_MS = 10_000;
export const RETRY_CAP_MS = 5 * 60_000;

export type FailureKind = ErrorKind | 'timeout' | 'list' | 'condition';

/**
 * Delay before the `retry` trigger, or undefined for "no retry" (only permanent
 * failures). n = consecutive error reconciles (1 for the first).
 */
export function retryDelayMs(
  n: number,
  kinds: ReadonlySet<FailureKind>,
  random: () => number,
): number | undefined {
  const jitter = 1 + 0.2 * random();
  const all = [...kinds];
  if (all.length > 0 && all.every((k) => k === 'permanent')) return undefined;
  if (all.length > 0 && all.every((k) => k === 'permanent' || k === 'quota_exceeded'))
    return RETRY_CAP_MS * jitter;
  const base = Math.min(RETRY_BASE_MS * 2 ** Math.max(0, n - 1), RETRY_CAP_MS);
  return base * jitter;
}

/** R49: safety resync delay, uniform in [0.9 P, 1.1 P]. */
export function resyncDelayMs(periodMs: number, random: () => number): number {
  return periodMs * (0.9 + 0.2 * random());
}

/**
 * R49 + R109: the period the next safety resync is drawn around. After a
 * listing reconcile whose list was throttled `throttledInARow` times in a
 * row: 0.1 P, doubling per further throttled list, at most P; otherwise P.
 */
export function safetyResyncPeriodMs(periodMs: number, throttledInARow: number): number {
  if (throttledInARow <= 0) return periodMs;
  return Math.min(periodMs, 0.1 * periodMs * 2 ** (throttledInARow - 1));
}

/** R50: the informer-style resync period, drawn once from [M, 2M). */
export function informerResyncMs(minResyncMs: number, random: () => number): number {
  return minResyncMs * (1 + random());
}
