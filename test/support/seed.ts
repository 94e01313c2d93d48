// One seed per test for every random choice it makes: TEST_SEED replays a run;
// otherwise a fresh seed each run, so repeated runs explore and a failure
// names the seed that reproduces it.
import { randomInt } from 'node:crypto';
import type { TestContext } from 'node:test';
import { seededRandom } from '../../src/core/random.ts';

export interface TestSeed {
  readonly seed: number;
  readonly random: () => number;
}

/** TEST_SEED if set (an unsigned 32-bit integer), else a fresh one. */
export function pickSeed(env: NodeJS.ProcessEnv = process.env): number {
  const raw = env['TEST_SEED'];
  if (raw === undefined || raw === '') return randomInt(2 ** 32);
  const n = Number(raw);
  if (!Number.isInteger(n) || n < 0 || n >= 2 ** 32)
    throw new RangeError(`TEST_SEED must be an integer in 0..4294967295, got ${JSON.stringify(raw)}`);
  return n;
}

/**
 * The test's seed and a generator drawn from it. The seed goes into the
 * test's diagnostics, which the spec and TAP reporters print with the test's
 * result (so with its failure); scripts/flake-hunt.sh collects them.
 */
export function testSeed(t: TestContext): TestSeed {
  const seed = pickSeed();
  t.diagnostic(`seed ${seed} (replay: TEST_SEED=${seed})`);
  return { seed, random: seededRandom(seed) };
}
