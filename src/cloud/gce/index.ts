// The `gce` cloud plug-in: cluster routes as Compute Engine VPC routes to
// instances, read from cloud-provider-gcp's gce.conf (docs/providers/gce.md).
import type { CloudProvider, CloudProviderFactory, NodeLister } from '../../core/types.ts';
import { httpFetch } from '../../platform/http-fetch.ts';
import type { FetchLike } from '../../platform/http-fetch.ts';
import { altTokenSource, applicationDefaultCredentials, COMPUTE_SCOPE } from './auth.ts';
import { ComputeClient } from './client.ts';
import type { TokenSource } from './client.ts';
import { parseGceCloudConfig } from './config.ts';
import { gceMetadataFor, type GceMetadataValues } from './metadata.ts';
import { keyFromEnvironment, serviceAccountKeyTokenSource } from './keyfile.ts';
import { GceRoutes } from './routes.ts';

export { GceRoutes, toRoute } from './routes.ts';
export type { GceRoutesConfig } from './routes.ts';
export { ComputeClient, MAX_RESULTS } from './client.ts';
export type {
  ComputeApi,
  ComputeClientOptions,
  GceInstance,
  GceOperation,
  GceRoute,
  TokenSource,
} from './client.ts';
export {
  DEFAULT_API_ENDPOINT,
  describeGceConfig,
  GceConfigError,
  parseGceCloudConfig,
  globalValues,
} from './config.ts';
export type { GceCloudConfig } from './config.ts';
export { gceMetadataFor } from './metadata.ts';
export type { GceMetadataValues } from './metadata.ts';
export { altTokenSource, applicationDefaultCredentials, COMPUTE_SCOPE } from './auth.ts';
export { GceApiError, toRouteError } from './errors.ts';
export {
  GOOGLE_TOKEN_URI,
  keyFromEnvironment,
  parseServiceAccountKey,
  serviceAccountKeyTokenSource,
  signAssertion,
} from './keyfile.ts';
export type { ServiceAccountKey } from './keyfile.ts';
export {
  K8S_NODE_ROUTE,
  parseInstanceURL,
  parseProviderID,
  routeName,
  truncateClusterName,
} from './targets.ts';

/**
 * Compute Engine's documented rate quota for global mutation methods (the
 * "Queries" group, compute.googleapis.com/default, which routes.insert and
 * routes.delete count against): 1 500 requests per minute per project
 * ("Compute Engine rate quotas and system limits"), 25 per second. The quota
 * refills per 60-second window, so a burst of a whole minute's worth would be
 * allowed; 50 keeps room for the project's other writers (the CCM, autoscaler).
 * Each write's globalOperations.wait counts against the separate operation-read
 * quota of the same size, one per write.
 */
export const GCE_WRITE_LIMIT = { qps: 25, burst: 50 } as const;

export interface BuildGceProviderOptions {
  /** A token source instead of the one gce.conf selects (tests, embedders). */
  readonly token?: TokenSource;
  readonly fetch?: FetchLike;
  /** Values from the metadata server for keys gce.conf lacks (R122). */
  readonly metadata?: GceMetadataValues;
  /** Where GOOGLE_APPLICATION_CREDENTIALS is read (default process.env). */
  readonly env?: NodeJS.ProcessEnv;
}

/**
 * The default credentials: a service-account key file in
 * GOOGLE_APPLICATION_CREDENTIALS signed here and sent to its token_uri
 * (keyfile.ts), else Application Default Credentials.
 */
function defaultCredentials(fetchImpl: FetchLike | undefined, env: NodeJS.ProcessEnv): TokenSource {
  const key = keyFromEnvironment(env);
  if (key === undefined) return applicationDefaultCredentials();
  return serviceAccountKeyTokenSource(key, [COMPUTE_SCOPE], fetchImpl ?? httpFetch());
}

/** The factory with injectable credentials and transport. */
export function buildGceProvider(
  configText: string,
  nodes: NodeLister,
  opts: BuildGceProviderOptions = {},
): CloudProvider {
  const config = parseGceCloudConfig(configText, opts.metadata);
  const fetchImpl = opts.fetch;
  let token = opts.token;
  if (token === undefined) {
    const credentials = defaultCredentials(fetchImpl, opts.env ?? process.env);
    token =
      config.tokenURL !== undefined
        ? altTokenSource(config.tokenURL, config.tokenBody, credentials, fetchImpl)
        : credentials;
  }
  const client = new ComputeClient({ apiEndpoint: config.apiEndpoint, token, fetch: fetchImpl });
  const routes = new GceRoutes(client, config, nodes);
  return {
    name: 'gce',
    routes: () => routes,
    writeLimit: GCE_WRITE_LIMIT,
    // A route's node comes from its next-hop instance = the node's providerID; its name carries the UID.
    routeTargetKeys: ['uid', 'providerID'],
  };
}

export const gceProviderFactory: CloudProviderFactory = async (configText, nodes) =>
  buildGceProvider(configText, nodes, { metadata: await gceMetadataFor(configText) });
