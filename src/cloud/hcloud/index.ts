// The `hcloud` cloud plug-in: Hetzner Cloud network routes. See
// docs/providers/hcloud.md for config, credentials and limits.
import type { CloudProvider, CloudProviderFactory, NodeLister } from '../../core/types.ts';
import { HcloudClient } from './client.ts';
import type { FetchLike } from './client.ts';
import { parseHcloudConfig, readHcloudToken } from './config.ts';
import { HcloudRoutes } from './routes.ts';

// Hetzner Cloud refills 3 600 requests per hour and project at 1 per second; a
// route write costs about three (the action, then polling it), and the
// project's other clients (CCM, CSI) share the bucket, so the burst stays small.
// listRoutes maps a gateway to its server, and the server to the node by providerID.
export const HCLOUD_WRITE_LIMIT = { qps: 1 / 3, burst: 10 } as const;

export { HcloudRoutes, serverIdFromProviderID } from './routes.ts';
export type { HcloudRoutesOptions } from './routes.ts';
export { HcloudClient, classifyApiError } from './client.ts';
export type { FetchLike, HcloudClientOptions } from './client.ts';
export { DEFAULT_ENDPOINT, HcloudConfigError, parseHcloudConfig, readHcloudToken } from './config.ts';
export type { HcloudConfig } from './config.ts';

export interface BuildHcloudProviderOptions {
  /** Defaults to process.env; tests pass their own. */
  readonly env?: Readonly<Record<string, string | undefined>>;
  readonly fetch?: FetchLike;
  readonly pollIntervalMs?: number;
}

/** The factory with injectable environment, for tests and embedders. */
export function buildHcloudProvider(
  config: string,
  nodes: NodeLister,
  opts: BuildHcloudProviderOptions = {},
): CloudProvider {
  const env = opts.env ?? process.env;
  // Validate the config before the token so a config error is reported even without credentials.
  const cfg = parseHcloudConfig(config, env);
  const token = readHcloudToken(env);
  const client = new HcloudClient({
    endpoint: cfg.endpoint,
    token,
    fetch: opts.fetch,
    pollIntervalMs: opts.pollIntervalMs,
  });
  const routes = new HcloudRoutes({
    client,
    network: cfg.network,
    nodes,
    ...(cfg.routeLimit !== undefined ? { routeLimit: cfg.routeLimit } : {}),
  });
  return {
    name: 'hcloud',
    routes: () => routes,
    writeLimit: HCLOUD_WRITE_LIMIT,
    // listRoutes maps a gateway to its server, and the server to the node by providerID.
    routeTargetKeys: ['uid', 'providerID'],
  };
}

export const hcloudProviderFactory: CloudProviderFactory = (config, nodes) =>
  buildHcloudProvider(config, nodes);
