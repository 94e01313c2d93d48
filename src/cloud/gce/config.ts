// The gce plug-in's --cloud-config: cloud-provider-gcp's own `gce.conf`, so a
// cluster switches route controllers without a new file. Upstream reads it with
// gcfg (git-config syntax) into `[global]`, read here by the shared reader in
// ../gcfg.ts. Keys this
// plug-in does not use are ignored, as gcfg's FatalOnly ignores unknown ones;
// each key it uses is checked with one clear error naming it. Upstream asks the
// metadata server for a missing project-id or network-name; this plug-in wants
// them in the file (docs/providers/gce.md).

import { GcfgSyntaxError, parseGcfg } from '../gcfg.ts';

export class GceConfigError extends Error {
  override readonly name: string = 'GceConfigError';
}

export interface GceCloudConfig {
  /** The project of the cluster's instances (`project-id`). */
  readonly projectID: string;
  /** The project that owns the network and so its routes (`network-project-id`, else project-id). */
  readonly networkProjectID: string;
  readonly networkName: string;
  /** The network as routes name it: `<api-endpoint>projects/<network project>/global/networks/<name>`. */
  readonly networkURL: string;
  /** Compute Engine v1 base URL ending in `/` (`api-endpoint`). */
  readonly apiEndpoint: string;
  /** The zone the controller runs in (`local-zone`); alone, where a node without a gce:// providerID is looked up. */
  readonly localZone: string | undefined;
  /**
   * `multizone` or `regional` (upstream's multizone mode): a node without a
   * gce:// providerID is looked up in every zone of local-zone's region.
   */
  readonly multizone: boolean;
  /** local-zone's region (`europe-west1` of `europe-west1-b`). */
  readonly region: string | undefined;
  /** gce.conf's `token-url` (upstream's AltTokenSource); undefined = Application Default Credentials. */
  readonly tokenURL: string | undefined;
  readonly tokenBody: string | undefined;
}

export const DEFAULT_API_ENDPOINT = 'https://www.googleapis.com/compute/v1/';

// A project ID (6–30 characters, lower case, digits, hyphens) or a project number.
const PROJECT = /^(?:[a-z][-a-z0-9]{4,28}[a-z0-9]|[0-9]{1,20})$/;
// Compute Engine resource names (RFC 1035).
const RESOURCE_NAME = /^[a-z]([-a-z0-9]{0,61}[a-z0-9])?$/;
const ZONE = /^[a-z]+-[a-z]+[0-9]+-[a-z]$/;
const NETWORK_URL = /(?:^|\/)projects\/([^/]+)\/global\/networks\/([^/]+)$/;

type Values = Map<string, string[]>;

function fail(msg: string): never {
  throw new GceConfigError(`gce cloud config: ${msg}`);
}

/** The `[global]` section's values by lower-cased name (gcfg merges repeated sections); other sections are ignored. */
export function globalValues(text: string): Values {
  let sections;
  try {
    sections = parseGcfg(text);
  } catch (err) {
    if (err instanceof GcfgSyntaxError) fail(`not valid gcfg (gce.conf syntax): ${err.message}`);
    throw err;
  }
  const global: Values = new Map();
  for (const section of sections) {
    if (section.name !== 'global') continue;
    for (const e of section.entries) global.set(e.name, [...(global.get(e.name) ?? []), e.value]);
  }
  return global;
}

function single(values: Values, key: string): string | undefined {
  const v = values.get(key);
  if (v === undefined) return undefined;
  if (v.length > 1) fail(`"${key}" is set ${v.length} times in [global]; it takes one value`);
  return v[0] === '' ? undefined : v[0];
}

function matching(key: string, value: string, re: RegExp, expected: string): string {
  if (!re.test(value)) fail(`"${key}" is not valid: ${JSON.stringify(value)} (expected ${expected})`);
  return value;
}

/** gcfg's booleans: true/yes/on/1 and false/no/off/0, any case; a bare name is true. */
function bool(values: Values, key: string): boolean {
  const v = single(values, key)?.trim().toLowerCase();
  if (v === undefined) return false;
  if (v === 'true' || v === 'yes' || v === 'on' || v === '1') return true;
  if (v === 'false' || v === 'no' || v === 'off' || v === '0') return false;
  return fail(`"${key}" must be true or false, got ${JSON.stringify(v)}`);
}

function isLoopback(host: string): boolean {
  return host === 'localhost' || host.startsWith('127.') || host === '[::1]';
}

/** https, or http on loopback only (the fake and other emulators). */
function endpoint(key: string, value: string): string {
  let url: URL;
  try {
    url = new URL(value);
  } catch {
    fail(`"${key}" is not a URL: ${JSON.stringify(value)}`);
  }
  if (url.protocol !== 'https:' && !(url.protocol === 'http:' && isLoopback(url.hostname))) {
    fail(`"${key}" must be an https URL (http only on loopback): ${JSON.stringify(value)}`);
  }
  return url.href.endsWith('/') ? url.href : `${url.href}/`;
}

/**
 * Parses gce.conf; `metadata` stands in for project-id, network-name and local-zone when the
 * file lacks them, as upstream asks the metadata server for them (R122).
 */
export function parseGceCloudConfig(
  text: string,
  metadata: { readonly projectID?: string; readonly networkName?: string; readonly zone?: string } = {},
): GceCloudConfig {
  if (text.trim() === '' && metadata.projectID === undefined)
    fail(
      'the file is empty (expected a [global] section with project-id and network-name) and the metadata server gave no project',
    );
  const values = globalValues(text);
  const projectID = single(values, 'project-id') ?? metadata.projectID;
  if (projectID === undefined)
    fail('"project-id" is required in [global] (the project of the cluster\'s instances)');
  matching('project-id', projectID, PROJECT, 'a project ID or project number');
  const networkProject = single(values, 'network-project-id') ?? projectID;
  matching('network-project-id', networkProject, PROJECT, 'a project ID or project number');
  const apiEndpoint = endpoint('api-endpoint', single(values, 'api-endpoint') ?? DEFAULT_API_ENDPOINT);
  const network = single(values, 'network-name') ?? metadata.networkName;
  if (network === undefined)
    fail('"network-name" is required in [global] (the VPC network the routes belong to)');
  let networkName: string;
  let networkProjectID = networkProject;
  if (network.includes('/')) {
    // Upstream takes a URL as the network's URL; its project wins for the routes.
    const m = NETWORK_URL.exec(network);
    if (!m)
      fail(
        `"network-name" is not valid: ${JSON.stringify(network)} (expected a name or a URL ending projects/<project>/global/networks/<name>)`,
      );
    networkProjectID = matching('network-name', m[1]!, PROJECT, 'a project ID or project number in the URL');
    networkName = matching('network-name', m[2]!, RESOURCE_NAME, 'a network name in the URL');
  } else {
    networkName = matching(
      'network-name',
      network,
      RESOURCE_NAME,
      'a network name: lower case, digits, hyphens',
    );
  }
  const localZone = single(values, 'local-zone') ?? metadata.zone;
  if (localZone !== undefined) matching('local-zone', localZone, ZONE, 'a zone such as europe-west1-b');
  // Upstream: regional clusters manage every zone of the region, as multizone ones do.
  const multizone = bool(values, 'multizone') || bool(values, 'regional');

  let tokenURL = single(values, 'token-url');
  // Upstream: "nil" means the default credentials instead of the token URL.
  if (tokenURL === 'nil') tokenURL = undefined;
  if (tokenURL !== undefined) tokenURL = endpoint('token-url', tokenURL).replace(/\/$/, '');
  return {
    projectID,
    networkProjectID,
    networkName,
    networkURL: `${apiEndpoint}projects/${networkProjectID}/global/networks/${networkName}`,
    apiEndpoint,
    localZone,
    multizone,
    region: localZone?.slice(0, localZone.lastIndexOf('-')),
    tokenURL,
    tokenBody: single(values, 'token-body'),
  };
}

/** One line for the start-up log: what the plug-in will act on, never a token. */
export function describeGceConfig(c: GceCloudConfig): string {
  const creds = c.tokenURL !== undefined ? `token-url ${c.tokenURL}` : 'application default credentials';
  const zones =
    c.multizone && c.region
      ? `, nodes by name in region ${c.region}`
      : c.localZone
        ? `, nodes by name in ${c.localZone}`
        : '';
  return `gce: network ${c.networkName} in project ${c.networkProjectID}, instances in ${c.projectID}${zones}, ${creds}, API ${c.apiEndpoint}`;
}
