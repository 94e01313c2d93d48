// One seed for every random choice of the real-component suites (SPEC §9:
// deterministic tests). TEST_SEED replays a run; the seed is printed once per
// test process, so a failure's output carries it.
import { seededRandom } from '../../src/core/random.ts';

const DEFAULT_SEED = 20261203;

function readSeed(): number {
  const raw = process.env['TEST_SEED'];
  if (raw === undefined || raw.trim() === '') return DEFAULT_SEED;
  const n = Number(raw);
  if (!Number.isSafeInteger(n)) throw new Error(`TEST_SEED must be an integer, got "${raw}"`);
  return n;
}

export const TEST_SEED = readSeed();
process.stdout.write(`# test seed ${TEST_SEED} (replay with TEST_SEED=${TEST_SEED})\n`);

/** An independent stream per label, so adding a draw in one place does not shift the others. */
export function testRandom(label: string): () => number {
  let h = 2166136261;
  for (const ch of label) h = Math.imul(h ^ ch.charCodeAt(0), 16777619);
  return seededRandom((TEST_SEED ^ h) >>> 0);
}
