// Cloud config of the hcloud plug-in. The official hcloud CCM is configured by
// environment variables only, so HCLOUD_NETWORK and HCLOUD_ENDPOINT act as
// fallbacks: a deployment can share one Secret/env block with that CCM.
import { readFileSync } from 'node:fs';
import { parseYaml as parse } from '../../yaml/lazy.ts';

export const DEFAULT_ENDPOINT = 'https://api.hetzner.cloud/v1';

export interface HcloudConfig {
  /** Network ID, or its name (resolved through the API on first use). */
  readonly network: number | string;
  /** API base URL without trailing slash, e.g. https://api.hetzner.cloud/v1. */
  readonly endpoint: string;
  /** R118: routes the network allows (Hetzner's documented 100); set only if Hetzner raised it. */
  readonly routeLimit?: number;
}

export class HcloudConfigError extends Error {
  override readonly name: string = 'HcloudConfigError';
}

type Env = Readonly<Record<string, string | undefined>>;

const KNOWN_FIELDS: ReadonlySet<string> = new Set(['network', 'endpoint', 'routeLimit']);

function fail(message: string): never {
  throw new HcloudConfigError(`hcloud cloud config: ${message}`);
}

function describe(v: unknown): string {
  if (v === null) return 'null';
  if (Array.isArray(v)) return 'a list';
  return `a ${typeof v}`;
}

function parseNetwork(v: unknown, source: string): number | string {
  if (typeof v === 'number') {
    if (Number.isSafeInteger(v) && v > 0) return v;
    fail(`${source} must be a positive integer network ID or a network name, got ${v}`);
  }
  if (typeof v === 'string') {
    const s = v.trim();
    if (s === '') fail(`${source} must not be empty`);
    // Hetzner network names cannot be purely numeric IDs in practice; a digit
    // string is what an env var or a quoted YAML value gives for an ID.
    if (/^\d+$/.test(s)) {
      const n = Number(s);
      if (Number.isSafeInteger(n) && n > 0) return n;
      fail(`${source} "${s}" is not a valid network ID`);
    }
    return s;
  }
  fail(`${source} must be a network ID (number) or name (string), got ${describe(v)}`);
}

function parseEndpoint(v: unknown, source: string): string {
  if (typeof v !== 'string' || v.trim() === '') {
    fail(`${source} must be a non-empty URL string, got ${describe(v)}`);
  }
  let url: URL;
  try {
    url = new URL(v.trim());
  } catch {
    fail(`${source} "${v}" is not a valid URL`);
  }
  if (url.protocol !== 'https:' && url.protocol !== 'http:') {
    fail(`${source} must be an http(s) URL, got protocol "${url.protocol}"`);
  }
  if (url.username !== '' || url.password !== '') {
    fail(`${source} must not contain credentials; the API token is read from HCLOUD_TOKEN`);
  }
  return url.href.replace(/\/+$/, '');
}

/**
 * Parses the --cloud-config text (YAML or JSON): `{ network: string|number,
 * endpoint?: string }`. Fields missing from the text fall back to env.
 */
export function parseHcloudConfig(text: string, env: Env = process.env): HcloudConfig {
  let doc: unknown;
  try {
    doc = text.trim() === '' ? null : parse(text);
  } catch (err) {
    fail(`not valid YAML or JSON: ${(err as Error).message}`);
  }
  if (doc === null || doc === undefined) doc = {};
  if (typeof doc !== 'object' || Array.isArray(doc)) {
    fail(`must be a mapping with the fields "network" and optionally "endpoint", got ${describe(doc)}`);
  }
  const obj = doc as Record<string, unknown>;
  for (const key of Object.keys(obj)) {
    if (key === 'token') {
      fail(
        'field "token" is not supported; the API token is read from the HCLOUD_TOKEN environment variable',
      );
    }
    if (!KNOWN_FIELDS.has(key)) fail(`unknown field "${key}" (known fields: network, endpoint, routeLimit)`);
  }

  let network: number | string;
  if (obj['network'] !== undefined && obj['network'] !== null) {
    network = parseNetwork(obj['network'], 'field "network"');
  } else if (env['HCLOUD_NETWORK'] !== undefined && env['HCLOUD_NETWORK'].trim() !== '') {
    network = parseNetwork(env['HCLOUD_NETWORK'], 'environment variable HCLOUD_NETWORK');
  } else {
    fail('field "network" is required (a network ID or name; or set HCLOUD_NETWORK)');
  }

  let endpoint = DEFAULT_ENDPOINT;
  if (obj['endpoint'] !== undefined && obj['endpoint'] !== null) {
    endpoint = parseEndpoint(obj['endpoint'], 'field "endpoint"');
  } else if (env['HCLOUD_ENDPOINT'] !== undefined && env['HCLOUD_ENDPOINT'].trim() !== '') {
    endpoint = parseEndpoint(env['HCLOUD_ENDPOINT'], 'environment variable HCLOUD_ENDPOINT');
  }
  const limit = obj['routeLimit'];
  if (limit !== undefined && !(typeof limit === 'number' && Number.isSafeInteger(limit) && limit > 0)) {
    fail(`field "routeLimit" must be a whole number of at least 1, got ${JSON.stringify(limit)}`);
  }
  return { network, endpoint, ...(limit !== undefined ? { routeLimit: limit } : {}) };
}

/**
 * The project's read/write API token: HCLOUD_TOKEN, or the file HCLOUD_TOKEN_FILE names, as the
 * hcloud CCM reads it (hcloud-go's envutil.LookupEnvWithFile: not both; R122). Mounted secrets
 * often end in a newline, hence trim.
 */
export function readHcloudToken(
  env: Env = process.env,
  readFile = (p: string) => readFileSync(p, 'utf8'),
): string {
  const file = env['HCLOUD_TOKEN_FILE'];
  if (file !== undefined && file !== '' && env['HCLOUD_TOKEN'] !== undefined) {
    throw new HcloudConfigError('hcloud: both HCLOUD_TOKEN and HCLOUD_TOKEN_FILE are set; set one');
  }
  let token = env['HCLOUD_TOKEN']?.trim() ?? '';
  if (file !== undefined && file !== '') {
    try {
      token = readFile(file).trim();
    } catch (err) {
      throw new HcloudConfigError(`hcloud: HCLOUD_TOKEN_FILE ${file}: ${(err as Error).message}`);
    }
  }
  if (token === '') {
    throw new HcloudConfigError(
      'hcloud: environment variable HCLOUD_TOKEN is not set (a read/write API token of the project; or HCLOUD_TOKEN_FILE naming a file with it)',
    );
  }
  return token;
}
