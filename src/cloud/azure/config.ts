// The azure plug-in's --cloud-config: cloud-provider-azure's own `azure.json`
// (JSON, or YAML as upstream also reads), so a cluster switches route
// controllers without a new file. Keys this plug-in does not use are ignored, as
// upstream ignores unknown keys; each key it uses is checked, one clear error
// naming the key. Credentials follow upstream's order (pkg/azclient/auth.go):
// workload identity, then managed identity, then a client secret; the
// environment variables the workload identity webhook injects win over the file.
import { parseDocument } from 'yaml';

export class AzureConfigError extends Error {
  override readonly name: string = 'AzureConfigError';
}

export type AzureCredentialConfig =
  | { readonly kind: 'workloadIdentity'; tenantId: string; clientId: string; tokenFilePath: string }
  | { readonly kind: 'managedIdentity'; clientId?: string; resourceId?: string }
  | { readonly kind: 'clientSecret'; tenantId: string; clientId: string; clientSecret: string };

export interface AzureCloudConfig {
  /** Upstream's cloud name: AzurePublicCloud (default), AzureChinaCloud, AzureUSGovernmentCloud. */
  cloud: string;
  /** Azure Resource Manager base URL: the cloud's, or `resourceManagerEndpoint`. */
  resourceManagerEndpoint: string;
  /** Microsoft Entra ID authority for client secrets and workload identity. */
  authorityHost: string;
  /** Scope of the ARM token: the cloud's ARM audience. */
  tokenScope: string;
  /** The route table's subscription: networkResourceSubscriptionID, else subscriptionId. */
  subscriptionId: string;
  resourceGroup: string;
  /** Defaults to resourceGroup, as upstream. */
  routeTableResourceGroup: string;
  routeTableName: string;
  /** Where a missing route table is created. */
  location: string;
  /** R118 (this project's key `routeTableRouteLimit`): routes the table allows; default Azure's. */
  routeTableRouteLimit?: number;
  credential: AzureCredentialConfig;
}

interface CloudEndpoints {
  readonly name: string;
  readonly arm: string;
  readonly authority: string;
}

// The named clouds of upstream's EnvironmentMapping (pkg/azclient/cloud.go), keyed upper-case.
const CLOUDS: Readonly<Record<string, CloudEndpoints>> = {
  AZUREPUBLICCLOUD: {
    name: 'AzurePublicCloud',
    arm: 'https://management.azure.com',
    authority: 'https://login.microsoftonline.com',
  },
  AZURECLOUD: {
    name: 'AzurePublicCloud',
    arm: 'https://management.azure.com',
    authority: 'https://login.microsoftonline.com',
  },
  AZURECHINACLOUD: {
    name: 'AzureChinaCloud',
    arm: 'https://management.chinacloudapi.cn',
    authority: 'https://login.chinacloudapi.cn',
  },
  AZUREUSGOVERNMENT: {
    name: 'AzureUSGovernmentCloud',
    arm: 'https://management.usgovcloudapi.net',
    authority: 'https://login.microsoftonline.us',
  },
  AZUREUSGOVERNMENTCLOUD: {
    name: 'AzureUSGovernmentCloud',
    arm: 'https://management.usgovcloudapi.net',
    authority: 'https://login.microsoftonline.us',
  },
};

// Where the workload identity webhook mounts the projected token (upstream's default too).
const DEFAULT_FEDERATED_TOKEN_FILE = '/var/run/secrets/azure/tokens/azure-identity-token';

const GUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;
// Naming rules of Microsoft.Resources (resource groups) and Microsoft.Network (route tables).
const RESOURCE_GROUP = /^[-\w.()]{0,89}[-\w()]$/u;
const ROUTE_TABLE = /^[A-Za-z0-9]([-\w.]{0,78}\w)?$/;

type Raw = Record<string, unknown>;
type Env = Readonly<Record<string, string | undefined>>;

function fail(msg: string): never {
  throw new AzureConfigError(`azure cloud config: ${msg}`);
}

/**
 * The value of `key` as Go's encoding/json finds it (upstream reads azure.json with
 * sigs.k8s.io/yaml, i.e. json.Unmarshal): names match case-insensitively, and of several
 * spellings in one file the last one is kept.
 */
function lookup(raw: Raw, key: string): unknown {
  const folded = key.toLowerCase();
  let value: unknown;
  for (const [k, v] of Object.entries(raw)) if (k.toLowerCase() === folded) value = v;
  return value;
}

function optionalString(raw: Raw, key: string): string | undefined {
  const v = lookup(raw, key);
  if (v === undefined || v === null || v === '') return undefined;
  if (typeof v !== 'string') fail(`"${key}" must be a string, got ${JSON.stringify(v)}`);
  const t = v.trim();
  return t === '' ? undefined : t;
}

function requiredString(raw: Raw, key: string, why: string): string {
  const v = optionalString(raw, key);
  if (v === undefined) fail(`"${key}" is required (${why})`);
  return v;
}

function matching(key: string, value: string, re: RegExp, expected: string): string {
  if (!re.test(value)) fail(`"${key}" is not valid: ${JSON.stringify(value)} (expected ${expected})`);
  return value;
}

function optionalPositiveInt(raw: Raw, key: string): number | undefined {
  const v = raw[key];
  if (v === undefined || v === null) return undefined;
  if (typeof v !== 'number' || !Number.isSafeInteger(v) || v < 1)
    fail(`"${key}" must be a whole number of at least 1, got ${JSON.stringify(v)}`);
  return v;
}

function optionalBool(raw: Raw, key: string): boolean {
  const v = lookup(raw, key);
  if (v === undefined || v === null) return false;
  if (typeof v !== 'boolean') fail(`"${key}" must be true or false, got ${JSON.stringify(v)}`);
  return v;
}

function fromEnv(env: Env, name: string): string | undefined {
  const v = env[name]?.trim();
  return v === undefined || v === '' ? undefined : v;
}

/** An ARM endpoint override: https, or http on loopback only (emulators and tests). */
function endpointField(text: string): string {
  let url: URL;
  try {
    url = new URL(text);
  } catch {
    fail(`"resourceManagerEndpoint" is not a URL: ${JSON.stringify(text)}`);
  }
  if (url.username !== '' || url.password !== '')
    fail('"resourceManagerEndpoint" must not contain credentials');
  const loopback = ['localhost', '127.0.0.1', '[::1]'].includes(url.hostname);
  if (url.protocol !== 'https:' && !(url.protocol === 'http:' && loopback)) {
    fail(
      `"resourceManagerEndpoint" must be an https URL (http only on loopback), got ${JSON.stringify(text)}`,
    );
  }
  return text.replace(/\/+$/, '');
}

function credentialOf(raw: Raw, env: Env): AzureCredentialConfig {
  const tenant = (): string =>
    fromEnv(env, 'AZURE_TENANT_ID') ??
    matching('tenantId', requiredString(raw, 'tenantId', 'the tenant of the identity'), GUID, 'a GUID');
  const client = (why: string): string =>
    fromEnv(env, 'AZURE_CLIENT_ID') ??
    matching('aadClientId', requiredString(raw, 'aadClientId', why), GUID, 'a GUID');
  const tokenFile = fromEnv(env, 'AZURE_FEDERATED_TOKEN_FILE');
  if (tokenFile !== undefined || optionalBool(raw, 'useFederatedWorkloadIdentityExtension')) {
    return {
      kind: 'workloadIdentity',
      tenantId: tenant(),
      clientId: client('the client ID of the workload identity'),
      tokenFilePath:
        tokenFile ?? optionalString(raw, 'aadFederatedTokenFile') ?? DEFAULT_FEDERATED_TOKEN_FILE,
    };
  }
  if (optionalBool(raw, 'useManagedIdentityExtension')) {
    const id = optionalString(raw, 'userAssignedIdentityID');
    if (id === undefined) return { kind: 'managedIdentity' };
    // Upstream takes an ARM resource ID as well as a client ID here.
    if (id.toUpperCase().includes('/SUBSCRIPTIONS/')) return { kind: 'managedIdentity', resourceId: id };
    return {
      kind: 'managedIdentity',
      clientId: matching('userAssignedIdentityID', id, GUID, 'a client ID (GUID) or an identity resource ID'),
    };
  }
  const secret = fromEnv(env, 'AZURE_CLIENT_SECRET') ?? optionalString(raw, 'aadClientSecret');
  if (secret !== undefined) {
    return {
      kind: 'clientSecret',
      tenantId: tenant(),
      clientId: client('the client ID the secret belongs to'),
      clientSecret: secret,
    };
  }
  if (optionalString(raw, 'aadClientCertPath') !== undefined) {
    fail(
      '"aadClientCertPath" (certificate credentials) is not supported; use workload identity, managed identity or "aadClientSecret"',
    );
  }
  fail(
    'no credentials: set "useFederatedWorkloadIdentityExtension", "useManagedIdentityExtension", or "aadClientId" with "aadClientSecret"',
  );
}

/** Parses and validates azure.json; `env` supplies the variables that override it (upstream's). */
export function parseAzureCloudConfig(text: string, env: Env = process.env): AzureCloudConfig {
  const doc = parseDocument(text, { prettyErrors: true });
  const firstError = doc.errors[0];
  if (firstError) fail(`not valid JSON or YAML: ${firstError.message}`);
  const parsed: unknown = doc.toJS();
  if (parsed === null || parsed === undefined) {
    fail(
      'the file is empty; it needs at least "subscriptionId", "resourceGroup", "location" and "routeTableName"',
    );
  }
  if (typeof parsed !== 'object' || Array.isArray(parsed)) {
    fail(`expected an object of azure.json keys, got ${Array.isArray(parsed) ? 'a list' : typeof parsed}`);
  }
  const raw = parsed as Raw;
  const cloudName = optionalString(raw, 'cloud') ?? 'AzurePublicCloud';
  const cloud = CLOUDS[cloudName.toUpperCase()];
  if (cloud === undefined) {
    fail(
      `"cloud" ${JSON.stringify(cloudName)} is not supported (AzurePublicCloud, AzureChinaCloud, AzureUSGovernmentCloud)`,
    );
  }
  if (optionalString(raw, 'networkResourceTenantID') !== undefined) {
    fail('"networkResourceTenantID" (network resources in another tenant) is not supported');
  }
  const subscription = (key: string): string | undefined => {
    const v = optionalString(raw, key);
    return v === undefined ? undefined : matching(key, v, GUID, 'a subscription ID (GUID)');
  };
  const subscriptionId = subscription('subscriptionId');
  const networkSubscription = subscription('networkResourceSubscriptionID');
  if (subscriptionId === undefined && networkSubscription === undefined) {
    fail('"subscriptionId" is required (the subscription of the route table)');
  }
  const group = (key: string, v: string): string =>
    matching(key, v, RESOURCE_GROUP, 'a resource group name: letters, digits, "-_.()", at most 90');
  const resourceGroup = group(
    'resourceGroup',
    requiredString(raw, 'resourceGroup', "the cluster's resource group"),
  );
  const routeTableGroup = optionalString(raw, 'routeTableResourceGroup');
  const routeTableName = matching(
    'routeTableName',
    requiredString(raw, 'routeTableName', "the route table of the cluster's subnet"),
    ROUTE_TABLE,
    'a route table name: letters, digits, "-_.", at most 80',
  );
  const location = requiredString(raw, 'location', 'where a missing route table is created');
  const endpoint = optionalString(raw, 'resourceManagerEndpoint');
  const routeLimit = optionalPositiveInt(raw, 'routeTableRouteLimit');
  return {
    ...(routeLimit !== undefined ? { routeTableRouteLimit: routeLimit } : {}),
    cloud: cloud.name,
    resourceManagerEndpoint: endpoint !== undefined ? endpointField(endpoint) : cloud.arm,
    authorityHost: cloud.authority,
    tokenScope: `${cloud.arm}/.default`,
    subscriptionId: networkSubscription ?? subscriptionId!,
    resourceGroup,
    routeTableResourceGroup:
      routeTableGroup === undefined ? resourceGroup : group('routeTableResourceGroup', routeTableGroup),
    routeTableName,
    location,
    credential: credentialOf(raw, env),
  };
}

/** The config as it may be logged: the client secret replaced. */
export function describeAzureConfig(config: AzureCloudConfig): string {
  const c = config.credential;
  const who =
    c.kind === 'managedIdentity'
      ? `managed identity${c.clientId ? ` ${c.clientId}` : c.resourceId ? ` ${c.resourceId}` : ' (system-assigned)'}`
      : `${c.kind === 'workloadIdentity' ? 'workload identity' : 'client secret of'} ${c.clientId} in tenant ${c.tenantId}`;
  return `route table ${config.routeTableName} in ${config.routeTableResourceGroup} (subscription ${config.subscriptionId}, ${config.cloud}) as ${who}`;
}
