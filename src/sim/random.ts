// The simulator's timeline and the controller's jitter must be reproducible from `--seed`.
export { seededRandom } from '../core/random.ts';

/** Integer in [0, n). */
export function pick(random: () => number, n: number): number {
  return Math.min(n - 1, Math.floor(random() * n));
}
