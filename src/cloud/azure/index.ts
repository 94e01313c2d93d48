// The `azure` cloud plug-in: cluster routes in an Azure route table, read from
// cloud-provider-azure's azure.json (docs/providers/azure.md).
import type { CloudProvider, CloudProviderFactory, NodeLister } from '../../core/types.ts';
import { createCredential, createNetworkClient, routeTableApi } from './client.ts';
import type { AzureCredential, NetworkClientOptions } from './client.ts';
import { parseAzureCloudConfig } from './config.ts';
import { AzureRoutes } from './routes.ts';

export { AzureRoutes, toRoute } from './routes.ts';
export type { AzureRoutesConfig } from './routes.ts';
export { AzureConfigError, describeAzureConfig, parseAzureCloudConfig } from './config.ts';
export type { AzureCloudConfig, AzureCredentialConfig } from './config.ts';
export { createCredential, createNetworkClient, routeTableApi } from './client.ts';
export type { AzureCredential, NetworkClientOptions, PutOptions, RouteTableApi } from './client.ts';
export { cidrToRfc1035, routeName, routeOwner } from './targets.ts';

/**
 * Microsoft.Network's documented throttle for writes (PUT and DELETE): 1 000
 * per 5 minutes per subscription and region ("Understand how Azure Resource
 * Manager throttles requests", Network throttling), about 3.3 per second. The
 * burst is ARM's regional write bucket (200 tokens, refilled at 10 per second),
 * which this stays well inside. One reconcile is one PUT, so the pacer mostly
 * spaces conflict retries.
 */
export const AZURE_WRITE_LIMIT = { qps: 1000 / 300, burst: 200 } as const;

export interface BuildAzureProviderOptions extends NetworkClientOptions {
  /** Defaults to process.env (AZURE_CLIENT_ID and the other overrides upstream reads). */
  readonly env?: Readonly<Record<string, string | undefined>>;
  /** A credential instead of the one the config selects (tests, embedders). */
  readonly credential?: AzureCredential;
}

/** The factory with injectable environment and credential. */
export async function buildAzureProvider(
  configText: string,
  nodes: NodeLister,
  opts: BuildAzureProviderOptions = {},
): Promise<CloudProvider> {
  const config = parseAzureCloudConfig(configText, opts.env ?? process.env);
  const credential = opts.credential ?? (await createCredential(config, opts.env ?? process.env));
  const client = createNetworkClient(config, credential);
  const routes = new AzureRoutes(
    routeTableApi(client, opts),
    {
      resourceGroup: config.routeTableResourceGroup,
      routeTableName: config.routeTableName,
      location: config.location,
      ...(config.routeTableRouteLimit !== undefined ? { routeLimit: config.routeTableRouteLimit } : {}),
    },
    nodes,
  );
  return {
    name: 'azure',
    routes: () => routes,
    writeLimit: AZURE_WRITE_LIMIT,
    // A route's node is its name; whether it delivers is its next hop = the node's InternalIP.
    routeTargetKeys: ['uid', 'addresses'],
    rollbackHazards: () => [AZURE_ROLLBACK_HAZARD],
  };
}

/**
 * R124: cloud-provider-azure (v1.24+) always names routes `<node>____<cidr>` and its
 * cleanupOutdatedRoutes deletes a known node's route named `<node>`, which this plug-in gives
 * nodes with pod CIDRs of one family (src/cloud/azure/targets.ts).
 */
export const AZURE_ROLLBACK_HAZARD =
  'routes of nodes with pod CIDRs of one family are named <node> here; cloud-provider-azure (v1.24+) names every route <node>____<cidr> and deletes <node> routes of known nodes, so after a rollback it replaces each once (a short gap per node; docs/migration.md)';

export const azureProviderFactory: CloudProviderFactory = (configText, nodes) =>
  buildAzureProvider(configText, nodes);
