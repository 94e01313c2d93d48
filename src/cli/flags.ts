// Daemon flags (SPEC §7.1) and their validation (R60). Pure: no I/O, so every
// message of the R60 table is unit-tested; checks that need files or the
// provider registry live in preflight.ts.
import { hasHostBits, parseCIDR, type Cidr } from '../core/cidr.ts';
import { parseDuration } from '../core/duration.ts';
import { defaultWriteBurst } from '../controller/options.ts';
import { PROTOBUF_CONTENT_TYPE } from '../kube/proto-messages.ts';
import { parseBindAddress, type BindAddress } from '../server/bind-address.ts';
import { CCM_IGNORED_FLAGS, parseControllers, routeControllerEnabled } from './ccm-flags.ts';
import { FLAGS, GATES, WATCH_GATE } from './flag-table.ts';
import { parseServingFlags, type SecureServingFlags } from './serving-flags.ts';

export { parseBindAddress, type BindAddress };
export { FLAGS, WATCH_GATE, type FlagKind, type FlagSpec } from './flag-table.ts';
export type { SecureServingFlags } from './serving-flags.ts';

const BY_NAME = new Map(FLAGS.map((f) => [f.name, f]));
const JSON_TYPE = 'application/json';

export interface DaemonFlags {
  readonly cloudProvider: string;
  readonly cloudConfig: string;
  readonly clusterName: string;
  /** Canonical cluster CIDRs (host bits cleared). */
  readonly clusterCIDRs: readonly string[];
  readonly configureCloudRoutes: boolean;
  /** --controllers as given (R120). */
  readonly controllers: readonly string[];
  /** Whether --controllers enables the route controller (R120); false: stay idle. */
  readonly routeController: boolean;
  /** --configure-cloud-routes and --controllers both allow routes: reconcile, else stay idle. */
  readonly routesEnabled: boolean;
  /** --allocate-node-cidrs: accepted, never gates routes (R120). */
  readonly allocateNodeCIDRs: boolean;
  /** CCM flags accepted and ignored (R120), `--name` in command-line order, once each. */
  readonly ignoredFlags: readonly string[];
  readonly routeReconciliationPeriodMs: number;
  readonly minResyncPeriodMs: number;
  readonly featureGates: Readonly<Record<string, boolean>>;
  readonly watchBasedReconciliation: boolean;
  readonly kubeconfig: string;
  readonly master: string;
  readonly kubeApiQps: number;
  readonly kubeApiBurst: number;
  /** R110: the node LIST's preferred encoding. */
  readonly kubeApiContentType: 'protobuf' | 'json';
  readonly leaderElect: boolean;
  readonly leaseDurationMs: number;
  readonly renewDeadlineMs: number;
  readonly retryPeriodMs: number;
  readonly resourceLock: string;
  readonly resourceName: string;
  readonly resourceNamespace: string;
  readonly routeResyncPeriodMs: number;
  /** 'auto': adaptive from the provider's limit in watch mode (R68); 0: unpaced. */
  readonly cloudWriteQps: number | 'auto';
  /** Resolved for a fixed rate; 0 under 'auto' means the budget's own. */
  readonly cloudWriteBurst: number;
  /** --route-cache (R65–R67). */
  readonly routeCache: boolean;
  readonly dryRun: boolean;
  readonly metricsBindAddress: BindAddress;
  readonly healthProbeBindAddress: BindAddress;
  /** --secure-port and the delegated authentication/authorization flags (SPEC §7.5). */
  readonly serving: SecureServingFlags;
  readonly logFormat: 'text' | 'json';
  readonly verbosity: number;
  /** Flags given on the command line (R: Info log for an ignored --route-reconciliation-period). */
  readonly explicit: ReadonlySet<string>;
}

export interface ParseResult {
  readonly flags: DaemonFlags;
  readonly errors: readonly string[];
  readonly warnings: readonly string[];
  readonly help: boolean;
}

/** Go's strconv.ParseBool. */
export function parseGoBool(v: string): boolean {
  if (['1', 't', 'T', 'TRUE', 'true', 'True'].includes(v)) return true;
  if (['0', 'f', 'F', 'FALSE', 'false', 'False'].includes(v)) return false;
  throw new Error(`strconv.ParseBool: parsing "${v}": invalid syntax`);
}

/** Splits argv into raw values per flag (last wins; gates accumulate). */
function scan(
  argv: readonly string[],
  errors: string[],
): { raw: Map<string, string[]>; help: boolean; ignored: string[] } {
  const raw = new Map<string, string[]>();
  const ignored: string[] = [];
  let help = false;
  for (let i = 0; i < argv.length; i++) {
    const arg = argv[i]!;
    if (arg === '--') {
      for (const rest of argv.slice(i + 1)) errors.push(`unexpected argument "${rest}"`);
      break;
    }
    let name: string;
    let value: string | undefined;
    if (arg.startsWith('--')) {
      const eq = arg.indexOf('=');
      name = eq < 0 ? arg.slice(2) : arg.slice(2, eq);
      value = eq < 0 ? undefined : arg.slice(eq + 1);
    } else if (arg.startsWith('-') && arg.length > 1) {
      // pflag shorthands: -v 4, -v=4, -v4, -h.
      const short = arg[1]!;
      const spec = FLAGS.find((f) => f.shorthand === short);
      if (short === 'h' && arg.length === 2) {
        help = true;
        continue;
      }
      if (!spec) {
        errors.push(`unknown shorthand flag: '${short}' in ${arg}`);
        continue;
      }
      name = spec.name;
      const rest = arg.slice(2);
      value = rest === '' ? undefined : rest.startsWith('=') ? rest.slice(1) : rest;
    } else {
      errors.push(`unexpected argument "${arg}"`);
      continue;
    }
    if (name === 'help') {
      help = true;
      continue;
    }
    const spec = BY_NAME.get(name);
    const ccmKind = CCM_IGNORED_FLAGS[name];
    if (!spec && ccmKind !== undefined) {
      // R120: consumed as pflag would, so the next flag is not taken for its value.
      if (value === undefined && ccmKind === 'value') {
        if (i + 1 < argv.length) i++;
        else errors.push(`flag needs an argument: --${name}`);
      }
      if (!ignored.includes(`--${name}`)) ignored.push(`--${name}`);
      continue;
    }
    if (!spec) {
      errors.push(`unknown flag: --${name}`);
      continue;
    }
    if (value === undefined) {
      if (spec.kind === 'bool') value = 'true';
      else if (i + 1 < argv.length) value = argv[++i]!;
      else {
        errors.push(`flag needs an argument: --${name}`);
        continue;
      }
    }
    const list = raw.get(name) ?? [];
    list.push(value);
    raw.set(name, list);
  }
  return { raw, help, ignored };
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

function convert<T>(raw: Map<string, string[]>, name: string, errors: string[], fn: (v: string) => T): T {
  const spec = BY_NAME.get(name)!;
  const v = raw.get(name)?.at(-1) ?? spec.default;
  try {
    return fn(v);
  } catch (err) {
    errors.push(`invalid --${name} "${v}": ${(err as Error).message}`);
    return fn(spec.default);
  }
}

function parseInteger(v: string): number {
  if (!/^[+-]?\d+$/.test(v.trim())) throw new Error(`strconv.ParseInt: parsing "${v}": invalid syntax`);
  return Number.parseInt(v, 10);
}

function parseFloatStrict(v: string): number {
  const n = Number(v.trim());
  if (v.trim() === '' || !Number.isFinite(n))
    throw new Error(`strconv.ParseFloat: parsing "${v}": invalid syntax`);
  return n;
}

/** Why the daemon stays idle (R120), as the CCM logs it, or undefined when it reconciles. */
export function idleReason(flags: DaemonFlags): string | undefined {
  if (!flags.configureCloudRoutes) {
    return 'Will not configure cloud provider routes, --configure-cloud-routes: false';
  }
  if (!flags.routeController) {
    return `Will not configure cloud provider routes: the route controller is not enabled by --controllers=${flags.controllers.join(',')}`;
  }
  return undefined;
}

/**
 * --log-format, or component-base's --logging-format (R120): either name, both only
 * when they agree. Returns the format and the problems, reported in R60's order.
 */
function loggingFormat(
  raw: Map<string, string[]>,
  str: (n: string) => string,
): { format: string; problems: string[] } {
  const own = str('log-format');
  const ccm = str('logging-format');
  const problems: string[] = [];
  if (raw.has('log-format') && raw.has('logging-format') && own !== ccm) {
    problems.push(`--log-format "${own}" and --logging-format "${ccm}" disagree; give one`);
  }
  const useCcm = raw.has('logging-format') && !raw.has('log-format');
  const format = useCcm ? ccm : own;
  if (format !== 'text' && format !== 'json') {
    problems.push(`${useCcm ? '--logging-format' : '--log-format'} must be one of: text, json`);
  }
  return { format, problems };
}

/** Parses and validates daemon flags; every problem is reported, none thrown. */
export function parseFlags(argv: readonly string[]): ParseResult {
  const errors: string[] = [];
  const warnings: string[] = [];
  const { raw, help, ignored } = scan(argv, errors);
  const str = (n: string): string => convert(raw, n, errors, (v) => v);
  const bool = (n: string): boolean => convert(raw, n, errors, parseGoBool);
  const dur = (n: string): number => convert(raw, n, errors, parseDuration);
  const bind = (n: string): BindAddress => convert(raw, n, errors, parseBindAddress);

  const cloudProvider = str('cloud-provider').trim();
  const configureCloudRoutes = bool('configure-cloud-routes');
  const clusterCIDRText = str('cluster-cidr');
  const routeReconciliationPeriodMs = dur('route-reconciliation-period');
  const minResyncPeriodMs = dur('min-resync-period');
  const routeResyncPeriodMs = dur('route-resync-period');
  const leaderElect = bool('leader-elect');
  const leaseDurationMs = dur('leader-elect-lease-duration');
  const renewDeadlineMs = dur('leader-elect-renew-deadline');
  const retryPeriodMs = dur('leader-elect-retry-period');
  const resourceLock = str('leader-elect-resource-lock');
  const kubeApiQps = convert(raw, 'kube-api-qps', errors, parseFloatStrict);
  const kubeApiBurst = convert(raw, 'kube-api-burst', errors, parseInteger);
  const cloudWriteQps = convert(raw, 'cloud-write-qps', errors, (v): number | 'auto' =>
    v.trim() === 'auto' ? 'auto' : parseFloatStrict(v),
  );
  const cloudWriteBurstFlag = convert(raw, 'cloud-write-burst', errors, parseInteger);
  const { format: logFormat, problems: logFormatProblems } = loggingFormat(raw, str);
  // pflag's string slice: a repeated flag appends to the list instead of replacing it.
  const controllers = (raw.get('controllers') ?? ['*']).flatMap(parseControllers);
  const routeController = routeControllerEnabled(controllers);
  const contentType = str('kube-api-content-type').trim();
  const verbosity = convert(raw, 'v', errors, (v) => {
    const n = parseInteger(v);
    if (n < 0) throw new Error('must be a non-negative integer');
    return n;
  });
  const { gates, watch } = parseFeatureGates(raw.get('feature-gates') ?? [], errors);

  if (cloudProvider === '') errors.push('--cloud-provider must be set');
  let clusterCIDRs: string[] = [];
  if (clusterCIDRText.trim() === '') {
    if (configureCloudRoutes && routeController) {
      errors.push('--cluster-cidr must be set when --configure-cloud-routes is true');
    }
  } else {
    clusterCIDRs = parseClusterCIDRs(clusterCIDRText, errors, warnings);
  }
  if (!(routeReconciliationPeriodMs > 0)) errors.push('--route-reconciliation-period must be greater than 0');
  if (!(minResyncPeriodMs > 0)) errors.push('--min-resync-period must be greater than 0');
  if (routeResyncPeriodMs !== 0 && !(routeResyncPeriodMs >= 10_000)) {
    errors.push('--route-resync-period must be 0 or at least 10s');
  }
  if (leaderElect) {
    // component-base ValidateLeaderElectionConfiguration + client-go NewLeaderElector.
    if (!(leaseDurationMs > 0)) errors.push('leaseDuration must be greater than zero');
    if (!(renewDeadlineMs > 0)) errors.push('renewDeadline must be greater than zero');
    if (!(retryPeriodMs > 0)) errors.push('retryPeriod must be greater than zero');
    if (!(leaseDurationMs > renewDeadlineMs)) errors.push('leaseDuration must be greater than renewDeadline');
    if (!(renewDeadlineMs > retryPeriodMs * 1.2))
      errors.push('renewDeadline must be greater than retryPeriod*1.2');
    if (resourceLock !== 'leases') errors.push('--leader-elect-resource-lock must be "leases"');
    if (str('leader-elect-resource-name').trim() === '')
      errors.push('--leader-elect-resource-name must be set');
    if (str('leader-elect-resource-namespace').trim() === '') {
      errors.push('--leader-elect-resource-namespace must be set');
    }
  }
  if (!(kubeApiQps > 0)) errors.push('--kube-api-qps must be greater than 0');
  if (!(kubeApiBurst > 0)) errors.push('--kube-api-burst must be greater than 0');
  if (cloudWriteQps !== 'auto' && !(cloudWriteQps >= 0))
    errors.push('--cloud-write-qps must be auto, 0 or greater');
  if (!(cloudWriteBurstFlag >= 0)) errors.push('--cloud-write-burst must be 0 or greater');
  errors.push(...logFormatProblems);
  if (contentType !== PROTOBUF_CONTENT_TYPE && contentType !== JSON_TYPE) {
    errors.push(`--kube-api-content-type must be one of: ${PROTOBUF_CONTENT_TYPE}, ${JSON_TYPE}`);
  }

  const flags: DaemonFlags = {
    cloudProvider,
    cloudConfig: str('cloud-config'),
    clusterName: str('cluster-name'),
    clusterCIDRs,
    configureCloudRoutes,
    controllers,
    routeController,
    routesEnabled: configureCloudRoutes && routeController,
    allocateNodeCIDRs: bool('allocate-node-cidrs'),
    ignoredFlags: ignored,
    routeReconciliationPeriodMs,
    minResyncPeriodMs,
    featureGates: gates,
    watchBasedReconciliation: watch,
    kubeconfig: str('kubeconfig'),
    master: str('master'),
    kubeApiQps,
    kubeApiBurst,
    kubeApiContentType: contentType === JSON_TYPE ? 'json' : 'protobuf',
    leaderElect,
    leaseDurationMs,
    renewDeadlineMs,
    retryPeriodMs,
    resourceLock,
    resourceName: str('leader-elect-resource-name'),
    resourceNamespace: str('leader-elect-resource-namespace'),
    routeResyncPeriodMs,
    cloudWriteQps,
    cloudWriteBurst:
      cloudWriteBurstFlag > 0 || cloudWriteQps === 'auto'
        ? cloudWriteBurstFlag
        : defaultWriteBurst(cloudWriteQps),
    routeCache: bool('route-cache'),
    dryRun: bool('dry-run'),
    metricsBindAddress: bind('metrics-bind-address'),
    healthProbeBindAddress: bind('health-probe-bind-address'),
    serving: parseServingFlags(str, errors),
    logFormat: logFormat === 'json' ? 'json' : 'text',
    verbosity,
    explicit: new Set(raw.keys()),
  };
  return { flags, errors, warnings, help };
}
