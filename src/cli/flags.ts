// Daemon flags (SPEC §7.1) and their validation (R60). Pure: no I/O, so every
// message of the R60 table is unit-tested; checks that need files or the
// provider registry live in preflight.ts. The command line is split in
// flag-scan.ts, each value parsed in flag-values.ts; the checks of the values
// together are here.
import { defaultWriteBurst } from '../controller/options.ts';
import { PROTOBUF_CONTENT_TYPE } from '../kube/proto-messages.ts';
import { parseBindAddress, type BindAddress } from '../server/bind-address.ts';
import { parseControllers, routeControllerEnabled } from './ccm-flags.ts';
import { scanFlags } from './flag-scan.ts';
import {
  FlagReader,
  loggingFormat,
  parseClusterCIDRs,
  parseFeatureGates,
  parseFloatStrict,
  parseInteger,
} from './flag-values.ts';
import { parseServingFlags, type SecureServingFlags } from './serving-flags.ts';

export { parseBindAddress, type BindAddress };
export { FLAGS, WATCH_GATE, type FlagKind, type FlagSpec } from './flag-table.ts';
export { parseClusterCIDRs, parseFeatureGates, parseGoBool } from './flag-values.ts';
export type { SecureServingFlags } from './serving-flags.ts';

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

/** Parses and validates daemon flags; every problem is reported, none thrown. */
export function parseFlags(argv: readonly string[]): ParseResult {
  const errors: string[] = [];
  const warnings: string[] = [];
  const { raw, help, ignored } = scanFlags(argv, errors);
  const read = new FlagReader(raw, errors);
  // The order of the reads and checks is the order R60 reports problems in.
  const values = readValues(read, raw, errors);
  const clusterCIDRs = checkValues(values, read, errors, warnings);
  const flags = assemble(values, read, errors, { clusterCIDRs, ignored, explicit: new Set(raw.keys()) });
  return { flags, errors, warnings, help };
}

type Values = ReturnType<typeof readValues>;

/** The values the checks need, each parsed alone. */
function readValues(read: FlagReader, raw: ReadonlyMap<string, readonly string[]>, errors: string[]) {
  const { str, bool, dur } = read;
  const routesFlags = {
    cloudProvider: str('cloud-provider').trim(),
    configureCloudRoutes: bool('configure-cloud-routes'),
    clusterCIDRText: str('cluster-cidr'),
    routeReconciliationPeriodMs: dur('route-reconciliation-period'),
    minResyncPeriodMs: dur('min-resync-period'),
    routeResyncPeriodMs: dur('route-resync-period'),
    leaderElect: bool('leader-elect'),
    leaseDurationMs: dur('leader-elect-lease-duration'),
    renewDeadlineMs: dur('leader-elect-renew-deadline'),
    retryPeriodMs: dur('leader-elect-retry-period'),
    resourceLock: str('leader-elect-resource-lock'),
    kubeApiQps: read.value('kube-api-qps', parseFloatStrict),
    kubeApiBurst: read.value('kube-api-burst', parseInteger),
    cloudWriteQps: read.value('cloud-write-qps', (v): number | 'auto' =>
      v.trim() === 'auto' ? 'auto' : parseFloatStrict(v),
    ),
    cloudWriteBurstFlag: read.value('cloud-write-burst', parseInteger),
    logging: loggingFormat(read),
  };
  // pflag's string slice: a repeated flag appends to the list instead of replacing it.
  const controllers = (raw.get('controllers') ?? ['*']).flatMap(parseControllers);
  return {
    ...routesFlags,
    controllers,
    routeController: routeControllerEnabled(controllers),
    contentType: str('kube-api-content-type').trim(),
    verbosity: read.value('v', (v) => {
      const n = parseInteger(v);
      if (n < 0) throw new Error('must be a non-negative integer');
      return n;
    }),
    ...parseFeatureGates(raw.get('feature-gates') ?? [], errors),
  };
}

/** The checks of the values together (R60); returns the cluster CIDRs. */
function checkValues(v: Values, read: FlagReader, errors: string[], warnings: string[]): string[] {
  if (v.cloudProvider === '') errors.push('--cloud-provider must be set');
  let clusterCIDRs: string[] = [];
  if (v.clusterCIDRText.trim() === '') {
    if (v.configureCloudRoutes && v.routeController) {
      errors.push('--cluster-cidr must be set when --configure-cloud-routes is true');
    }
  } else {
    clusterCIDRs = parseClusterCIDRs(v.clusterCIDRText, errors, warnings);
  }
  if (!(v.routeReconciliationPeriodMs > 0))
    errors.push('--route-reconciliation-period must be greater than 0');
  if (!(v.minResyncPeriodMs > 0)) errors.push('--min-resync-period must be greater than 0');
  if (v.routeResyncPeriodMs !== 0 && !(v.routeResyncPeriodMs >= 10_000)) {
    errors.push('--route-resync-period must be 0 or at least 10s');
  }
  if (v.leaderElect) checkLeaderElection(v, read, errors);
  if (!(v.kubeApiQps > 0)) errors.push('--kube-api-qps must be greater than 0');
  if (!(v.kubeApiBurst > 0)) errors.push('--kube-api-burst must be greater than 0');
  if (v.cloudWriteQps !== 'auto' && !(v.cloudWriteQps >= 0))
    errors.push('--cloud-write-qps must be auto, 0 or greater');
  if (!(v.cloudWriteBurstFlag >= 0)) errors.push('--cloud-write-burst must be 0 or greater');
  errors.push(...v.logging.problems);
  if (v.contentType !== PROTOBUF_CONTENT_TYPE && v.contentType !== JSON_TYPE) {
    errors.push(`--kube-api-content-type must be one of: ${PROTOBUF_CONTENT_TYPE}, ${JSON_TYPE}`);
  }
  return clusterCIDRs;
}

/** component-base ValidateLeaderElectionConfiguration + client-go NewLeaderElector. */
function checkLeaderElection(v: Values, read: FlagReader, errors: string[]): void {
  const { leaseDurationMs, renewDeadlineMs, retryPeriodMs } = v;
  if (!(leaseDurationMs > 0)) errors.push('leaseDuration must be greater than zero');
  if (!(renewDeadlineMs > 0)) errors.push('renewDeadline must be greater than zero');
  if (!(retryPeriodMs > 0)) errors.push('retryPeriod must be greater than zero');
  if (!(leaseDurationMs > renewDeadlineMs)) errors.push('leaseDuration must be greater than renewDeadline');
  if (!(renewDeadlineMs > retryPeriodMs * 1.2))
    errors.push('renewDeadline must be greater than retryPeriod*1.2');
  if (v.resourceLock !== 'leases') errors.push('--leader-elect-resource-lock must be "leases"');
  if (read.str('leader-elect-resource-name').trim() === '')
    errors.push('--leader-elect-resource-name must be set');
  if (read.str('leader-elect-resource-namespace').trim() === '') {
    errors.push('--leader-elect-resource-namespace must be set');
  }
}

/** The flags as the daemon uses them; the values read here are checked as they are parsed. */
function assemble(
  v: Values,
  read: FlagReader,
  errors: string[],
  rest: { clusterCIDRs: string[]; ignored: string[]; explicit: ReadonlySet<string> },
): DaemonFlags {
  const { str, bool, bind } = read;
  const { cloudWriteQps, cloudWriteBurstFlag } = v;
  return {
    cloudProvider: v.cloudProvider,
    cloudConfig: str('cloud-config'),
    clusterName: str('cluster-name'),
    clusterCIDRs: rest.clusterCIDRs,
    configureCloudRoutes: v.configureCloudRoutes,
    controllers: v.controllers,
    routeController: v.routeController,
    routesEnabled: v.configureCloudRoutes && v.routeController,
    allocateNodeCIDRs: bool('allocate-node-cidrs'),
    ignoredFlags: rest.ignored,
    routeReconciliationPeriodMs: v.routeReconciliationPeriodMs,
    minResyncPeriodMs: v.minResyncPeriodMs,
    featureGates: v.gates,
    watchBasedReconciliation: v.watch,
    kubeconfig: str('kubeconfig'),
    master: str('master'),
    kubeApiQps: v.kubeApiQps,
    kubeApiBurst: v.kubeApiBurst,
    kubeApiContentType: v.contentType === JSON_TYPE ? 'json' : 'protobuf',
    leaderElect: v.leaderElect,
    leaseDurationMs: v.leaseDurationMs,
    renewDeadlineMs: v.renewDeadlineMs,
    retryPeriodMs: v.retryPeriodMs,
    resourceLock: v.resourceLock,
    resourceName: str('leader-elect-resource-name'),
    resourceNamespace: str('leader-elect-resource-namespace'),
    routeResyncPeriodMs: v.routeResyncPeriodMs,
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
    logFormat: v.logging.format === 'json' ? 'json' : 'text',
    verbosity: v.verbosity,
    explicit: rest.explicit,
  };
}
