// The daemon's flag values as upstream parses them: Go's strconv for bools and numbers,
// component-base's feature gates and logging format, the cluster CIDRs as the CCM checks them
// (R60's messages). Pure; flags.ts validates the combination.
import { hasHostBits, parseCIDR, type Cidr } from '../core/cidr.ts';
import { parseDuration } from '../core/duration.ts';
import { parseBindAddress, type BindAddress } from '../server/bind-address.ts';
import { FLAGS_BY_NAME, GATES, WATCH_GATE } from './flag-table.ts';

/** Go's strconv.ParseBool. */
export function parseGoBool(v: string): boolean {
  if (['1', 't', 'T', 'TRUE', 'true', 'True'].includes(v)) return true;
  if (['0', 'f', 'F', 'FALSE', 'false', 'False'].includes(v)) return false;
  throw new Error(`strconv.ParseBool: parsing "${v}": invalid syntax`);
}

export function parseInteger(v: string): number {
  if (!/^[+-]?\d+$/.test(v.trim())) throw new Error(`strconv.ParseInt: parsing "${v}": invalid syntax`);
  return Number.parseInt(v, 10);
}

export function parseFloatStrict(v: string): number {
  const n = Number(v.trim());
  if (v.trim() === '' || !Number.isFinite(n))
    throw new Error(`strconv.ParseFloat: parsing "${v}": invalid syntax`);
  return n;
}

/**
 * Each flag's value (the last one given, else its default) through a parser. A value the
 * parser rejects is reported in `errors` and the default used, so every problem is listed.
 */
export class FlagReader {
  private readonly raw: ReadonlyMap<string, readonly string[]>;
  private readonly errors: string[];

  constructor(raw: ReadonlyMap<string, readonly string[]>, errors: string[]) {
    this.raw = raw;
    this.errors = errors;
  }

  value<T>(name: string, fn: (v: string) => T): T {
    const spec = FLAGS_BY_NAME.get(name)!;
    const v = this.raw.get(name)?.at(-1) ?? spec.default;
    try {
      return fn(v);
    } catch (err) {
      this.errors.push(`invalid --${name} "${v}": ${(err as Error).message}`);
      return fn(spec.default);
    }
  }

  /** Whether the flag was given on the command line. */
  given(name: string): boolean {
    return this.raw.has(name);
  }

  str = (n: string): string => this.value(n, (v) => v);
  bool = (n: string): boolean => this.value(n, parseGoBool);
  dur = (n: string): number => this.value(n, parseDuration);
  bind = (n: string): BindAddress => this.value(n, parseBindAddress);
}

/** Component-base feature gate parsing: `Key=bool,…`. */
export function parseFeatureGates(
  values: readonly string[],
  errors: string[],
): { gates: Record<string, boolean>; watch: boolean } {
  const gates: Record<string, boolean> = {};
  for (const value of values) {
    for (const part of value.split(',')) {
      const s = part.trim();
      if (s === '') continue;
      const eq = s.indexOf('=');
      const k = (eq < 0 ? s : s.slice(0, eq)).trim();
      if (!(k in GATES)) {
        errors.push(`unrecognized feature gate: ${k}`);
        continue;
      }
      if (eq < 0) {
        errors.push(`missing bool value for ${k}`);
        continue;
      }
      const v = s.slice(eq + 1).trim();
      try {
        gates[k] = parseGoBool(v);
      } catch (err) {
        errors.push(`invalid value of ${k}=${v}, err: ${(err as Error).message}`);
      }
    }
  }
  // AllAlpha/AllBeta set the default of every gate of that stage; an explicit value wins.
  const spec = GATES[WATCH_GATE]!;
  const stageAll = spec.alpha ? gates['AllAlpha'] : undefined;
  const watch = gates[WATCH_GATE] ?? stageAll ?? spec.default;
  return { gates, watch };
}

/** Upstream order (processCIDRs, then the dual-stack and count checks); host bits are cleared. */
export function parseClusterCIDRs(value: string, errors: string[], warnings: string[]): string[] {
  if (value.trim() === '') return [];
  const parsed: Cidr[] = [];
  for (const part of value.split(',').map((s) => s.trim())) {
    try {
      parsed.push(parseCIDR(part));
      if (hasHostBits(part)) {
        warnings.push(`--cluster-cidr ${part} has host bits set; using ${parseCIDR(part).canonical}`);
      }
    } catch (err) {
      errors.push(
        `invalid --cluster-cidr: failed to parse cidr value:"${part}" with error:${(err as Error).message}`,
      );
      return [];
    }
  }
  const dualStack = parsed.some((c) => c.family === 4) && parsed.some((c) => c.family === 6);
  if (parsed.length > 1 && !dualStack) {
    errors.push(
      `invalid --cluster-cidr: len of ClusterCIDRs==${parsed.length} and they are not configured as dual stack (at least one from each IPFamily)`,
    );
    return [];
  }
  if (parsed.length > 2) {
    errors.push(
      `invalid --cluster-cidr: length of clusterCIDRs is:${parsed.length} more than max allowed of 2`,
    );
    return [];
  }
  return parsed.map((c) => c.canonical);
}

/**
 * --log-format, or component-base's --logging-format (R120): either name, both only
 * when they agree. Returns the format and the problems, reported in R60's order.
 */
export function loggingFormat(read: FlagReader): { format: string; problems: string[] } {
  const own = read.str('log-format');
  const ccm = read.str('logging-format');
  const problems: string[] = [];
  if (read.given('log-format') && read.given('logging-format') && own !== ccm) {
    problems.push(`--log-format "${own}" and --logging-format "${ccm}" disagree; give one`);
  }
  const useCcm = read.given('logging-format') && !read.given('log-format');
  const format = useCcm ? ccm : own;
  if (format !== 'text' && format !== 'json') {
    problems.push(`${useCcm ? '--logging-format' : '--log-format'} must be one of: text, json`);
  }
  return { format, problems };
}
