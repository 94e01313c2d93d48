// The flags of a cloud-controller-manager built on k8s.io/cloud-provider v0.37 that do not
// concern the route controller (R120). They are accepted as pflag parses them, so a CCM's
// command line runs unchanged, and listed once in the log as ignored. The flags that do
// concern routes are in flag-table.ts and honoured.
//
// Sources (v0.37): k8s.io/cloud-provider options/{kubecloudshared,cloudprovider,
// nodecontroller,servicecontroller,webhook}.go, k8s.io/controller-manager options/
// {generic,debugging}.go and pkg/leadermigration/options, k8s.io/apiserver
// pkg/server/options/{serving,authentication,authorization}.go, k8s.io/component-base
// logs/api/v1/options.go and version/verflag.

/** How pflag reads the flag: a bool takes no separate argument; `optional` is `--version[=raw]`. */
export type IgnoredFlagKind = 'bool' | 'value' | 'optional';

export const CCM_IGNORED_FLAGS: Readonly<Record<string, IgnoredFlagKind>> = {
  // cloud-provider: shared, node, service and webhook controllers.
  'external-cloud-volume-plugin': 'value',
  'use-service-account-credentials': 'bool',
  'allow-untagged-cloud': 'bool',
  'node-monitor-period': 'value',
  'cidr-allocator-type': 'value',
  'node-sync-period': 'value',
  'concurrent-node-syncs': 'value',
  'concurrent-node-status-updates': 'value',
  'concurrent-service-syncs': 'value',
  'node-status-update-frequency': 'value',
  webhooks: 'value',
  'webhook-bind-address': 'value',
  'webhook-secure-port': 'value',
  'webhook-disable-http2-serving': 'bool',
  'webhook-cert-dir': 'value',
  'webhook-tls-cert-file': 'value',
  'webhook-tls-private-key-file': 'value',
  'webhook-tls-cipher-suites': 'value',
  'webhook-tls-curve-preferences': 'value',
  'webhook-tls-min-version': 'value',
  'webhook-tls-sni-cert-key': 'value',
  // controller-manager: generic, debugging, leader migration.
  'controller-start-interval': 'value',
  profiling: 'bool',
  'contention-profiling': 'bool',
  'enable-leader-migration': 'bool',
  'leader-migration-config': 'value',
  // apiserver: secure serving, delegated authentication and authorization.
  'disable-http2-serving': 'bool',
  'cert-dir': 'value',
  'tls-cipher-suites': 'value',
  'tls-curve-preferences': 'value',
  'tls-min-version': 'value',
  'tls-sni-cert-key': 'value',
  'http2-max-streams-per-connection': 'value',
  'permit-port-sharing': 'bool',
  'permit-address-sharing': 'bool',
  'client-ca-file': 'value',
  'requestheader-client-ca-file': 'value',
  'requestheader-allowed-names': 'value',
  'requestheader-extra-headers-prefix': 'value',
  'requestheader-group-headers': 'value',
  'requestheader-username-headers': 'value',
  'requestheader-uid-headers': 'value',
  'authentication-token-webhook-cache-ttl': 'value',
  'authentication-skip-lookup': 'bool',
  'authentication-tolerate-lookup-failure': 'bool',
  'authorization-webhook-cache-authorized-ttl': 'value',
  'authorization-webhook-cache-unauthorized-ttl': 'value',
  // component-base: logging and version.
  'log-flush-frequency': 'value',
  vmodule: 'value',
  'log-text-split-stream': 'bool',
  'log-text-info-buffer-size': 'value',
  'log-json-split-stream': 'bool',
  'log-json-info-buffer-size': 'value',
  version: 'optional',
};

/** The CCM's name for the route controller and its alias (k8s.io/cloud-provider names). */
const ROUTE_NAMES = ['route', 'node-route-controller'];

/**
 * Whether `--controllers` enables the route controller, as controller-manager's
 * IsControllerEnabled: the first item naming it (`route`, or `-route` to disable) decides,
 * else `*` enables it (the CCM disables no controller by default), else it is off.
 */
export function routeControllerEnabled(controllers: readonly string[]): boolean {
  let star = false;
  for (const item of controllers) {
    if (ROUTE_NAMES.includes(item)) return true;
    if (ROUTE_NAMES.some((n) => item === `-${n}`)) return false;
    if (item === '*') star = true;
  }
  return star;
}

/** pflag's StringSlice: comma-separated; like upstream, no blanks are trimmed (` -route` is not `-route`). */
export function parseControllers(value: string): string[] {
  return value === '' ? [] : value.split(',');
}
