// Number formatting and Markdown tables for the benchmark summary.
import { isLatency, round, spread } from './stats.ts';

export function fmt(x: number | undefined, digits = 1): string {
  if (x === undefined || !Number.isFinite(x)) return '–';
  return round(x, digits).toLocaleString('en-US');
}

/** `median (min–max)` of repeated runs, or the single value. */
export function fmtSpread(values: readonly (number | undefined)[], digits = 1): string {
  const s = spread(values.filter(isLatency));
  if (!s) return '–';
  if (s.n === 1) return fmt(s.median, digits);
  return `${fmt(s.median, digits)} (${fmt(s.min, digits)}–${fmt(s.max, digits)})`;
}

export function ratio(ts: number | undefined, go: number | undefined): string {
  if (ts === undefined || go === undefined || !Number.isFinite(ts) || !Number.isFinite(go)) return '–';
  if (go === 0) return ts === 0 ? '1 (both 0)' : '∞';
  return `${round(ts / go, 2)}×`;
}

export function table(head: string[], rows: string[][]): string {
  return [
    `| ${head.join(' | ')} |`,
    `|${head.map(() => '---').join('|')}|`,
    ...rows.map((r) => `| ${r.join(' | ')} |`),
  ].join('\n');
}

export const med = (xs: readonly (number | undefined)[]): number | undefined =>
  spread(xs.filter(isLatency))?.median;
