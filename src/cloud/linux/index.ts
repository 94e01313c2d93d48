// The `linux` cloud provider: pod routes in a Linux routing table, for clusters
// whose gateway is a Linux router. See docs/providers/linux.md.
import type { CloudProvider, CloudProviderFactory, NodeLister } from '../../core/types.ts';
import { parseLinuxConfig } from './config.ts';
import { LinuxRoutes } from './routes.ts';

export { LinuxRoutes } from './routes.ts';
export { DEFAULT_PROTOCOL, DEFAULT_TABLE, LinuxConfigError, parseLinuxConfig } from './config.ts';
export type { LinuxConfig } from './config.ts';
export type { IpRunner } from './exec.ts';

export const LINUX_PROVIDER_NAME = 'linux';

/** Builds the provider from the --cloud-config text (YAML or JSON); throws LinuxConfigError. */
export const linuxProviderFactory: CloudProviderFactory = (
  config: string,
  nodes: NodeLister,
): CloudProvider => {
  const routes = new LinuxRoutes(parseLinuxConfig(config), nodes);
  // The kernel has no write limit worth pacing for.
  // listRoutes maps a next hop to the node with that InternalIP.
  return {
    name: LINUX_PROVIDER_NAME,
    routes: () => routes,
    writeLimit: 'unlimited',
    routeTargetKeys: ['uid', 'addresses'],
  };
};
