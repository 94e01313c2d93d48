// Seeded PRNG (mulberry32). The timeline and the controller's jitter must be
// reproducible from `--seed`, and both modes must see the same timeline.
// A copy of the harness's generator: src/sim must not depend on src/testing.

export function seededRandom(seed: number): () => number {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

/** Integer in [0, n). */
export function pick(random: () => number, n: number): number {
  return Math.min(n - 1, Math.floor(random() * n));
}
