// The `aws` cloud plug-in: cluster routes in a VPC route table (docs/providers/aws.md).
import type { CloudProvider, CloudProviderFactory, NodeLister, Routes } from '../../core/types.ts';
import { AwsConfigError, configuredRegion, parseAwsCloudConfig } from './config.ts';
import type { AwsCloudConfig } from './config.ts';
import { EC2Client } from './ec2.ts';
import { RouteTableLimit } from './room.ts';
import { instanceMetadata, type Imds } from './imds.ts';
import type { AwsIniSettings } from './ini-config.ts';
import { AwsRoutes } from './routes.ts';
import { upstreamClientConfig, upstreamClusterID, upstreamRegion } from './upstream.ts';

export { AwsRoutes } from './routes.ts';
export { CLUSTER_TAG_PREFIX, LEGACY_CLUSTER_TAG, hasClusterTag } from './route-table.ts';
export { looksLikeIni, parseAwsIniConfig } from './ini-config.ts';
export type { AwsIniSettings, AwsServiceOverride } from './ini-config.ts';
export type { AwsRoutesConfig } from './routes.ts';
export { AwsConfigError, configuredRegion, parseAwsCloudConfig } from './config.ts';
export type { AwsCloudConfig } from './config.ts';
export { instanceIdFromProviderID, instanceNodeMap, toRoute } from './targets.ts';

/**
 * An EC2 client for the config. Credentials come from the SDK's default chain
 * (environment, shared files, web identity, instance role) and are never read
 * here. `maxAttempts: 1` because the controller owns retries and backoff (R6).
 */
export function createEc2Client(config: AwsCloudConfig, env = process.env): EC2Client {
  const region = configuredRegion(config, env);
  return new EC2Client({
    maxAttempts: 1,
    ...(region !== undefined ? { region } : {}),
    ...(config.endpoint !== undefined ? { endpoint: config.endpoint } : {}),
  });
}

/**
 * EC2's request-rate bucket for mutating actions (CreateRoute, DeleteRoute and
 * ReplaceRoute among them): 50 requests at once, refilled at 5 per second per
 * account and Region ("Request throttling for the Amazon EC2 API").
 */
export const AWS_WRITE_LIMIT = { qps: 5, burst: 50 } as const;

export class AwsCloudProvider implements CloudProvider {
  readonly name = 'aws';
  readonly writeLimit = AWS_WRITE_LIMIT;
  /** listRoutes maps a route's instance to the node with that instance in its providerID. */
  readonly routeTargetKeys = ['uid', 'providerID'] as const;
  private readonly routesImpl: Routes;
  constructor(routes: Routes) {
    this.routesImpl = routes;
  }
  routes(): Routes {
    return this.routesImpl;
  }
  /** R124: cloud-provider-aws's ListRoutes skips routes without an IPv4 destination. */
  rollbackHazards(clusterCIDRs: readonly string[]): string[] {
    const v6 = clusterCIDRs.filter((c) => c.includes(':'));
    if (v6.length === 0) return [];
    return [
      `IPv6 routes (cluster CIDR ${v6.join(', ')}) are invisible to cloud-provider-aws, which lists only IPv4 destinations: after a rollback to it, delete them by hand (docs/migration.md)`,
    ];
  }
}

/**
 * An INI (cloud-provider-aws) config, started as that CCM starts (R121): region, client
 * and cluster ID resolved now, so a missing one fails at startup.
 */
export async function upstreamAwsProvider(
  config: AwsCloudConfig & { ini: AwsIniSettings },
  nodes: NodeLister,
  imds: Imds = instanceMetadata(),
): Promise<AwsCloudProvider> {
  const { ini } = config;
  let client: EC2Client | undefined;
  try {
    const region = await upstreamRegion(ini, imds);
    client = new EC2Client(upstreamClientConfig(ini, region));
    const clusterID = await upstreamClusterID(ini, client, imds);
    return new AwsCloudProvider(
      new AwsRoutes(client, { ...config, upstreamClusterID: () => Promise.resolve(clusterID) }, nodes),
    );
  } catch (err) {
    client?.destroy();
    throw new AwsConfigError(`aws cloud config: ${(err as Error).message}`, { cause: err });
  }
}

export const awsProviderFactory: CloudProviderFactory = async (
  configText: string,
  nodes: NodeLister,
): Promise<CloudProvider> => {
  const config = parseAwsCloudConfig(configText);
  if (config.ini) return upstreamAwsProvider({ ...config, ini: config.ini }, nodes);
  const client = createEc2Client(config);
  // Resolve the region now (it may come from a profile file) so a missing one
  // fails at startup, not as an error on every reconcile.
  try {
    await client.config.region();
  } catch {
    client.destroy();
    throw new AwsConfigError(
      'aws cloud config: no AWS region: set "region" in the cloud config, or AWS_REGION / AWS_DEFAULT_REGION',
    );
  }
  const limit = new RouteTableLimit({
    client,
    ...(config.routeTableLimit !== undefined ? { configured: config.routeTableLimit } : {}),
    ...(config.endpoint !== undefined ? { endpoint: config.endpoint } : {}),
  });
  return new AwsCloudProvider(new AwsRoutes(client, config, nodes, limit));
};
