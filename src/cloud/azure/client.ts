// The two calls the plug-in makes (read a route table, write it whole) on
// @azure/arm-network, and the credential chosen by the config. routes.ts sees
// only RouteTableApi, so its planning is tested without HTTP.
import { NetworkManagementClient } from '@azure/arm-network';
import type { RouteTable } from '@azure/arm-network';
import type { AzureCloudConfig } from './config.ts';

/** @azure/core-auth's TokenCredential, as the client takes it. */
export type AzureCredential = ConstructorParameters<typeof NetworkManagementClient>[0];

type Pipeline = NetworkManagementClient['pipeline'];
type PipelinePolicy = Parameters<Pipeline['addPolicy']>[0];

export interface PutOptions {
  /** The ETag the table was read with: a write over someone else's change fails 412. */
  readonly ifMatch?: string;
  /** '*' when creating: a table someone else created meanwhile fails 412. */
  readonly ifNoneMatch?: string;
  readonly signal: AbortSignal;
}

/** A route table by resource group and name; errors are the SDK's (errors.ts maps them). */
export interface RouteTableApi {
  /** undefined if the table does not exist. */
  get(resourceGroup: string, name: string, signal: AbortSignal): Promise<RouteTable | undefined>;
  /** PUT of the whole table, polled to completion within `signal`. */
  put(resourceGroup: string, name: string, table: RouteTable, opts: PutOptions): Promise<RouteTable>;
}

export interface NetworkClientOptions {
  /** LRO poll interval when Azure sends no Retry-After (the SDK's default is 2 s). */
  readonly pollIntervalMs?: number;
}

function isLoopbackHttp(endpoint: string): boolean {
  const url = new URL(endpoint);
  return url.protocol === 'http:' && ['localhost', '127.0.0.1', '[::1]'].includes(url.hostname);
}

/**
 * Sends the bearer token over http to a loopback emulator. The SDK's own bearer
 * policy refuses any non-https URL, whatever allowInsecureConnection says, and
 * LRO polls carry no per-request options, so both settings live here.
 */
function loopbackBearerPolicy(credential: AzureCredential, scope: string): PipelinePolicy {
  return {
    name: 'cloudRouteControllerLoopbackBearer',
    async sendRequest(request, next) {
      const token = await credential.getToken(scope, { abortSignal: request.abortSignal });
      if (token === null) throw new Error(`no token for ${scope}`);
      request.headers.set('Authorization', `Bearer ${token.token}`);
      request.allowInsecureConnection = isLoopbackHttp(request.url);
      return next(request);
    },
  };
}

/** The ARM client for the config's cloud or endpoint override. */
export function createNetworkClient(
  config: Pick<AzureCloudConfig, 'resourceManagerEndpoint' | 'subscriptionId' | 'tokenScope'>,
  credential: AzureCredential,
): NetworkManagementClient {
  const client = new NetworkManagementClient(credential, config.subscriptionId, {
    endpoint: config.resourceManagerEndpoint,
    credentials: { scopes: [config.tokenScope] },
    // R6: the controller owns retries and backoff; the SDK's retry policy would
    // also sleep out 429s (Retry-After) inside a call.
    retryOptions: { maxRetries: 0 },
    userAgentOptions: { userAgentPrefix: 'cloud-route-controller' },
  });
  if (isLoopbackHttp(config.resourceManagerEndpoint)) {
    client.pipeline.removePolicy({ name: 'bearerTokenAuthenticationPolicy' });
    client.pipeline.addPolicy(loopbackBearerPolicy(credential, config.tokenScope));
  }
  return client;
}

function statusOf(err: unknown): number | undefined {
  const s = (err as { statusCode?: unknown } | null)?.statusCode;
  return typeof s === 'number' ? s : undefined;
}

function codeOf(err: unknown): string | undefined {
  const c = (err as { code?: unknown } | null)?.code;
  return typeof c === 'string' ? c : undefined;
}

/** RouteTableApi on the SDK client. */
export function routeTableApi(
  client: NetworkManagementClient,
  opts: NetworkClientOptions = {},
): RouteTableApi {
  return {
    async get(resourceGroup, name, signal) {
      try {
        return await client.routeTables.get(resourceGroup, name, { abortSignal: signal });
      } catch (err) {
        // The table is missing; a missing resource group stays an error (a config mistake).
        if (statusOf(err) === 404 && codeOf(err) !== 'ResourceGroupNotFound') return undefined;
        throw err;
      }
    },
    async put(resourceGroup, name, table, put) {
      const headers: Record<string, string> = {};
      if (put.ifMatch !== undefined) headers['If-Match'] = put.ifMatch;
      if (put.ifNoneMatch !== undefined) headers['If-None-Match'] = put.ifNoneMatch;
      const poller = client.routeTables.createOrUpdate(resourceGroup, name, table, {
        abortSignal: put.signal,
        requestOptions: { headers },
        ...(opts.pollIntervalMs !== undefined ? { updateIntervalInMs: opts.pollIntervalMs } : {}),
      });
      return poller.pollUntilDone({ abortSignal: put.signal });
    },
  };
}

/** The credential the config selects (upstream's order; config.ts chose it). */
export async function createCredential(
  config: Pick<AzureCloudConfig, 'credential' | 'authorityHost'>,
  env: Readonly<Record<string, string | undefined>> = process.env,
): Promise<AzureCredential> {
  // Loaded here so that tests with a static token never load MSAL.
  const identity = await import('@azure/identity');
  const c = config.credential;
  const authorityHost = env.AZURE_AUTHORITY_HOST || config.authorityHost;
  switch (c.kind) {
    case 'workloadIdentity':
      return new identity.WorkloadIdentityCredential({
        tenantId: c.tenantId,
        clientId: c.clientId,
        tokenFilePath: c.tokenFilePath,
        authorityHost,
      });
    case 'managedIdentity':
      if (c.resourceId !== undefined)
        return new identity.ManagedIdentityCredential({ resourceId: c.resourceId });
      if (c.clientId !== undefined) return new identity.ManagedIdentityCredential({ clientId: c.clientId });
      return new identity.ManagedIdentityCredential();
    case 'clientSecret':
      return new identity.ClientSecretCredential(c.tenantId, c.clientId, c.clientSecret, { authorityHost });
  }
}
