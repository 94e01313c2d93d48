// Summary statistics for repeated runs and latency samples.

export interface Spread {
  readonly n: number;
  readonly median: number;
  readonly min: number;
  readonly max: number;
}

export function spread(values: readonly number[]): Spread | undefined {
  const v = values.filter((x) => Number.isFinite(x)).sort((a, b) => a - b);
  if (v.length === 0) return undefined;
  const mid = v.length >> 1;
  const median = v.length % 2 === 1 ? v[mid]! : (v[mid - 1]! + v[mid]!) / 2;
  return { n: v.length, median, min: v[0]!, max: v[v.length - 1]! };
}

/** Nearest-rank percentile (p in 0..100) of unsorted values. */
export function percentile(values: readonly number[], p: number): number | undefined {
  if (values.length === 0) return undefined;
  const v = [...values].sort((a, b) => a - b);
  const rank = Math.max(1, Math.ceil((p / 100) * v.length));
  return v[Math.min(rank, v.length) - 1];
}

export interface LatencySummary {
  readonly n: number;
  /** Nodes whose route never appeared within the run. */
  readonly missing: number;
  readonly p50?: number;
  readonly p99?: number;
  readonly max?: number;
}

export function latencySummary(latencies: readonly (number | undefined)[]): LatencySummary {
  const got = latencies.filter((x): x is number => x !== undefined);
  const out: LatencySummary = { n: latencies.length, missing: latencies.length - got.length };
  if (got.length === 0) return out;
  return { ...out, p50: percentile(got, 50)!, p99: percentile(got, 99)!, max: Math.max(...got) };
}

export function round(x: number, digits = 1): number {
  const f = 10 ** digits;
  return Math.round(x * f) / f;
}

/** A measured latency: missing ones are undefined in memory and null once read back from JSON. */
export function isLatency(x: unknown): x is number {
  return typeof x === 'number' && Number.isFinite(x);
}
