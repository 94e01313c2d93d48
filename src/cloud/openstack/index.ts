// The `openstack` cloud plug-in: cluster routes as the extra routes of a Neutron router, read
// from cloud-provider-openstack's cloud.conf. See docs/providers/openstack.md.
import * as nodeFs from 'node:fs';
import type { CloudProvider, CloudProviderFactory, NodeLister } from '../../core/types.ts';
import { DEFAULT_HTTP_TIMEOUT_MS, httpFetch } from '../../platform/http-fetch.ts';
import type { FetchLike, HttpFetchTls } from '../../platform/http-fetch.ts';
import { OpenStackConfigError, parseOpenStackConfig } from './config.ts';
import type { OpenStackConfig } from './config.ts';
import { Keystone } from './keystone.ts';
import { NeutronClient } from './neutron.ts';
import { OpenStackRoutes } from './routes.ts';

export { OpenStackConfigError, parseOpenStackConfig } from './config.ts';
export type { OpenStackAuth, OpenStackConfig } from './config.ts';
export { Keystone } from './keystone.ts';
export { NeutronClient } from './neutron.ts';
export { OpenStackRoutes } from './routes.ts';
export { parseGcfg } from '../gcfg.ts';

/**
 * OpenStack has no cloud-wide API rate limit: Neutron ships without one and a deployment that
 * wants one adds it in front (HAProxy, a rate-limit middleware) with its own numbers. The
 * plug-in writes a reconcile's whole plan in one to three calls (applyRoutes, one pacer token
 * each), so 2 writes/s with a burst of 10 is far above what a cluster needs, yet keeps a
 * controller that retries from hammering a small control plane. A cloud that throttles answers
 * 429, and R69 slows down from there; `--cloud-write-qps` sets a known limit.
 */
export const OPENSTACK_WRITE_LIMIT = { qps: 2, burst: 10 } as const;

export interface BuildOpenStackProviderOptions {
  readonly env?: Readonly<Record<string, string | undefined>>;
  readonly fetch?: FetchLike;
  readonly readFile?: (file: string) => string;
  readonly now?: () => number;
}

function readConfigFile(
  config: OpenStackConfig,
  key: 'caFile' | 'certFile' | 'keyFile',
  read: (f: string) => string,
): string | undefined {
  const file = config[key];
  if (file === undefined) return undefined;
  const name = { caFile: 'ca-file', certFile: 'cert-file', keyFile: 'key-file' }[key];
  try {
    return read(file);
  } catch (err) {
    throw new OpenStackConfigError(
      `openstack cloud config: cannot read "${name}" ${file}: ${(err as Error).message}`,
    );
  }
}

/** The factory with injectable environment, for tests and embedders. */
export function buildOpenStackProvider(
  text: string,
  nodes: NodeLister,
  opts: BuildOpenStackProviderOptions = {},
): CloudProvider {
  const readFile = opts.readFile ?? ((f: string) => nodeFs.readFileSync(f, 'utf8'));
  const config = parseOpenStackConfig(text, { ...(opts.env ? { env: opts.env } : {}), readFile });
  const ca = readConfigFile(config, 'caFile', readFile);
  const cert = readConfigFile(config, 'certFile', readFile);
  const key = readConfigFile(config, 'keyFile', readFile);
  const tls: HttpFetchTls = {
    ...(ca !== undefined ? { ca } : {}),
    ...(cert !== undefined && key !== undefined ? { cert, key } : {}),
    ...(config.tlsInsecure ? { rejectUnauthorized: false } : {}),
  };
  const fetch = opts.fetch ?? httpFetch(DEFAULT_HTTP_TIMEOUT_MS, tls);
  const keystone = new Keystone({ config, fetch, ...(opts.now ? { now: opts.now } : {}) });
  const routes = new OpenStackRoutes({
    neutron: new NeutronClient(keystone, fetch),
    routerId: config.routerId,
    nodes,
    ...(config.maxRoutes !== undefined ? { maxRoutes: config.maxRoutes } : {}),
  });
  return {
    name: 'openstack',
    routes: () => routes,
    writeLimit: OPENSTACK_WRITE_LIMIT,
    // listRoutes finds a route's node by its next hop among the node's addresses, nothing else.
    routeTargetKeys: ['addresses'],
  };
}

export const openstackProviderFactory: CloudProviderFactory = (config, nodes) =>
  buildOpenStackProvider(config, nodes);
