// The daemon's flags (SPEC §7.1): upstream names and defaults, plus this
// project's own (route resync, dry run, bind addresses, log format).

export type FlagKind = 'string' | 'bool' | 'duration' | 'int' | 'float' | 'gates';

export interface FlagSpec {
  readonly name: string;
  readonly kind: FlagKind;
  readonly default: string;
  readonly help: string;
  readonly shorthand?: string;
  /** Shown in --help instead of the kind. */
  readonly valueName?: string;
}

export const WATCH_GATE = 'CloudControllerManagerWatchBasedRoutesReconciliation';
/** Known gates and whether each is Alpha (enabled by AllAlpha unless set explicitly). */
export const GATES: Record<string, { alpha: boolean; default: boolean }> = {
  [WATCH_GATE]: { alpha: true, default: false },
  AllAlpha: { alpha: false, default: false },
  AllBeta: { alpha: false, default: false },
};

export const FLAGS: readonly FlagSpec[] = [
  {
    name: 'cloud-provider',
    kind: 'string',
    default: '',
    help: 'The provider for cloud services (required): a registered name (aws, azure, gce, hcloud, linux, memory, openstack) or an importable module.',
  },
  {
    name: 'cloud-config',
    kind: 'string',
    default: '',
    valueName: 'path',
    help: 'The path to the cloud provider configuration file; its content is passed to the provider.',
  },
  {
    name: 'cluster-name',
    kind: 'string',
    default: 'kubernetes',
    help: 'The instance prefix for the cluster; passed to every provider call to scope its routes.',
  },
  {
    name: 'cluster-cidr',
    kind: 'string',
    default: '',
    valueName: 'cidrs',
    help: 'CIDR range(s) of pods in the cluster, comma-separated, at most one per IP family.',
  },
  {
    name: 'configure-cloud-routes',
    kind: 'bool',
    default: 'true',
    help: 'Should CIDRs allocated by allocate-node-cidrs be configured on the cloud provider. false: stay idle (health and metrics only).',
  },
  {
    name: 'controllers',
    kind: 'string',
    default: '*',
    valueName: 'strings',
    help: "A list of the cloud-controller-manager's controllers to enable, as the CCM reads it: '*' enables all, 'foo' enables foo, '-foo' disables foo. Only the route controller ('route', alias 'node-route-controller') is here; without it the daemon stays idle.",
  },
  {
    name: 'allocate-node-cidrs',
    kind: 'bool',
    default: 'false',
    help: "The CCM's node IPAM switch, accepted for its command line: node CIDRs are never allocated here and, as in the CCM's route controller, the value does not gate routes.",
  },
  {
    name: 'route-reconciliation-period',
    kind: 'duration',
    default: '10s',
    help: 'The period for reconciling routes created for Nodes by the cloud provider (periodic mode only).',
  },
  {
    name: 'min-resync-period',
    kind: 'duration',
    default: '12h',
    help: 'The resync period of the node informer is random between min-resync-period and 2*min-resync-period (watch mode).',
  },
  {
    name: 'feature-gates',
    kind: 'gates',
    default: '',
    valueName: 'mapStringBool',
    help: `A set of key=value pairs for features: ${WATCH_GATE}=true|false (ALPHA - default=false), AllAlpha=true|false (ALPHA - default=false), AllBeta=true|false (BETA - default=false).`,
  },
  {
    name: 'kubeconfig',
    kind: 'string',
    default: '',
    valueName: 'path',
    help: 'Path to a kubeconfig file; neither this nor KUBECONFIG nor --master: in-cluster configuration.',
  },
  {
    name: 'master',
    kind: 'string',
    default: '',
    valueName: 'url',
    help: 'The address of the Kubernetes API server (overrides any value in kubeconfig).',
  },
  {
    name: 'kube-api-qps',
    kind: 'float',
    default: '20',
    help: 'QPS to use while talking with the Kubernetes apiserver (watches are exempt).',
  },
  {
    name: 'kube-api-burst',
    kind: 'int',
    default: '30',
    help: 'Burst to use while talking with the Kubernetes apiserver.',
  },
  {
    name: 'kube-api-content-type',
    kind: 'string',
    default: 'application/vnd.kubernetes.protobuf',
    valueName: 'type',
    help: 'Content type of the node LIST requests sent to the apiserver: application/vnd.kubernetes.protobuf or application/json (other requests are JSON).',
  },
  {
    name: 'leader-elect',
    kind: 'bool',
    default: 'true',
    help: 'Start a leader election client and gain leadership before reconciling. Ignored with --dry-run.',
  },
  {
    name: 'leader-elect-lease-duration',
    kind: 'duration',
    default: '15s',
    help: 'The duration that non-leader candidates will wait after observing a leadership renewal until attempting to acquire leadership.',
  },
  {
    name: 'leader-elect-renew-deadline',
    kind: 'duration',
    default: '10s',
    help: 'The interval between attempts by the acting master to renew a leadership slot before it stops leading. Must be less than the lease duration.',
  },
  {
    name: 'leader-elect-retry-period',
    kind: 'duration',
    default: '2s',
    help: 'The duration the clients should wait between attempting acquisition and renewal of a leadership.',
  },
  {
    name: 'leader-elect-resource-lock',
    kind: 'string',
    default: 'leases',
    help: 'The type of resource object that is used for locking during leader election. Only "leases" is supported.',
  },
  {
    name: 'leader-elect-resource-name',
    kind: 'string',
    default: 'cloud-route-controller',
    help: 'The name of resource object that is used for locking during leader election.',
  },
  {
    name: 'leader-elect-resource-namespace',
    kind: 'string',
    default: 'kube-system',
    help: 'The namespace of resource object that is used for locking during leader election.',
  },
  {
    name: 'route-resync-period',
    kind: 'duration',
    default: '30m',
    help: "Watch mode: safety resync (a list) after each listing reconcile, whatever its outcome, jittered ±10%; also the route cache's maximum age; 0 disables, else at least 10s.",
  },
  {
    name: 'route-cache',
    kind: 'bool',
    default: 'true',
    help: 'Watch mode: reconcile node changes against the routes of the last list, kept up to date with every confirmed create and delete, instead of listing again; any failed call, a retry, a resync or --route-resync-period of age drops it. false: every reconcile lists (upstream).',
  },
  {
    name: 'cloud-write-qps',
    kind: 'string',
    default: 'auto',
    valueName: 'auto|float',
    help: "Client-side budget for route writes (create, delete, batch) per second, shared by all reconciles. auto: in watch mode an adaptive budget that starts just under the provider's documented write limit, cuts to 0.7 once per throttled burst and recovers with time; where there is no limit to start from (periodic mode, a provider declaring none or unlimited) a budget that learns the cloud's rate from its first throttled answer, with a slow start before it in watch mode for a provider declaring none; 0: unpaced (upstream behaviour); N: a fixed budget of N writes per second in both modes.",
  },
  {
    name: 'cloud-write-burst',
    kind: 'int',
    default: '0',
    help: "Burst of the cloud write budget; 0: the budget's own (auto: 90% of the provider's documented burst; N: max(1, ceil(2 * N))).",
  },
  {
    name: 'dry-run',
    kind: 'bool',
    default: 'false',
    help: 'List routes and log the plan, but change nothing (no route, node, Event or Lease writes); disables leader election.',
  },
  {
    name: 'secure-port',
    kind: 'int',
    default: '10258',
    help: 'The port on which to serve HTTPS with authentication and authorization (/metrics; the always-allowed paths without). 0 disables.',
  },
  {
    name: 'bind-address',
    kind: 'string',
    default: '0.0.0.0',
    valueName: 'ip',
    help: 'The IP address on which to listen for the --secure-port port (0.0.0.0 or :: for all interfaces).',
  },
  {
    name: 'tls-cert-file',
    kind: 'string',
    default: '',
    valueName: 'path',
    help: 'File containing the x509 certificate for HTTPS (CA certificates, if any, concatenated after it). Neither this nor --tls-private-key-file: a self-signed certificate is generated in memory.',
  },
  {
    name: 'tls-private-key-file',
    kind: 'string',
    default: '',
    valueName: 'path',
    help: 'File containing the x509 private key matching --tls-cert-file.',
  },
  {
    name: 'authentication-kubeconfig',
    kind: 'string',
    default: '',
    valueName: 'path',
    help: 'kubeconfig file pointing at the core kubernetes server with enough rights to create tokenreviews.authentication.k8s.io. Empty: the credentials of --kubeconfig, KUBECONFIG or in-cluster.',
  },
  {
    name: 'authorization-kubeconfig',
    kind: 'string',
    default: '',
    valueName: 'path',
    help: 'kubeconfig file pointing at the core kubernetes server with enough rights to create subjectaccessreviews.authorization.k8s.io. Empty: the credentials of --kubeconfig, KUBECONFIG or in-cluster.',
  },
  {
    name: 'authorization-always-allow-paths',
    kind: 'string',
    default: '/healthz,/readyz,/livez',
    valueName: 'strings',
    help: 'A list of HTTP paths to skip during authorization, i.e. these are served without authentication on the secure port.',
  },
  {
    name: 'metrics-bind-address',
    kind: 'string',
    default: '0',
    valueName: 'host:port',
    help: 'Address for plain-HTTP /metrics without authentication (opt-in; prefer --secure-port); ":port" means all interfaces, 0 disables.',
  },
  {
    name: 'health-probe-bind-address',
    kind: 'string',
    default: '0',
    valueName: 'host:port',
    help: 'Address for plain-HTTP /healthz, /livez and /readyz (opt-in; the secure port serves them too); ":port" means all interfaces, 0 disables.',
  },
  {
    name: 'log-format',
    kind: 'string',
    default: 'text',
    help: 'Log format: text (klog-style lines) or json (one object per line).',
  },
  {
    name: 'logging-format',
    kind: 'string',
    default: 'text',
    help: 'Sets the log format (component-base name of --log-format): text or json.',
  },
  {
    name: 'v',
    kind: 'int',
    default: '0',
    shorthand: 'v',
    valueName: 'Level',
    help: 'Number for the log level verbosity (klog-style).',
  },
];

/** FLAGS by name. */
export const FLAGS_BY_NAME: ReadonlyMap<string, FlagSpec> = new Map(FLAGS.map((f) => [f.name, f]));

/** The flags this project adds; every other flag is upstream's, with upstream's name and default. */
export const PROJECT_FLAGS: ReadonlySet<string> = new Set([
  'route-resync-period',
  'route-cache',
  'cloud-write-qps',
  'cloud-write-burst',
  'dry-run',
  'metrics-bind-address',
  'health-probe-bind-address',
  'log-format',
  'v',
]);
