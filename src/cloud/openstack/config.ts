// The openstack plug-in's --cloud-config: the cloud.conf that openstack-cloud-controller-manager
// reads (gcfg: [Global] credentials and endpoint, [Route] router-id; every other section is
// upstream's and ignored here), and the clouds.yaml it points at with `use-clouds`, merged the
// way upstream's ReadClouds does: a value in cloud.conf wins over the same one in clouds.yaml.
import * as nodeFs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { parseDocument } from 'yaml';
import { GcfgSyntaxError, parseGcfg } from '../gcfg.ts';

export class OpenStackConfigError extends Error {
  override readonly name: string = 'OpenStackConfigError';
}

export type EndpointInterface = 'public' | 'internal' | 'admin';

/** A user and the domain that scopes its name. */
export interface UserRef {
  readonly id?: string;
  readonly name?: string;
  readonly domainId?: string;
  readonly domainName?: string;
}

export interface ProjectRef {
  readonly id?: string;
  readonly name?: string;
  readonly domainId?: string;
  readonly domainName?: string;
}

export type OpenStackAuth =
  | {
      readonly method: 'password';
      readonly user: UserRef;
      readonly password: string;
      readonly project: ProjectRef;
    }
  | {
      readonly method: 'application_credential';
      readonly id?: string;
      readonly name?: string;
      readonly secret: string;
      /** Needed only with a credential name (an ID is unique on its own). */
      readonly user?: UserRef;
    };

export interface OpenStackConfig {
  /** Keystone v3, ending in /v3 (added if the config gives the bare service URL). */
  readonly authUrl: string;
  readonly auth: OpenStackAuth;
  readonly region?: string;
  readonly endpointInterface: EndpointInterface;
  readonly caFile?: string;
  readonly certFile?: string;
  readonly keyFile?: string;
  readonly tlsInsecure: boolean;
  /** [Route] router-id: the Neutron router whose extra routes are the cluster's routes. */
  readonly routerId: string;
  /** [Route] max-routes (this project's): the router's route limit (R118), default Neutron's 30. */
  readonly maxRoutes?: number;
}

/** Every [Global] key upstream's AuthOpts reads, plus the project-* spellings of tenant-*. */
const GLOBAL_KEYS = [
  'auth-url',
  'user-id',
  'username',
  'password',
  'tenant-id',
  'tenant-name',
  'project-id',
  'project-name',
  'trust-id',
  'trustee-id',
  'trustee-password',
  'domain-id',
  'domain-name',
  'tenant-domain-id',
  'tenant-domain-name',
  'project-domain-id',
  'project-domain-name',
  'user-domain-id',
  'user-domain-name',
  'region',
  'os-endpoint-type',
  'ca-file',
  'tls-insecure',
  'token',
  'cert-file',
  'key-file',
  'use-clouds',
  'clouds-file',
  'cloud',
  'application-credential-id',
  'application-credential-name',
  'application-credential-secret',
] as const;
type GlobalKey = (typeof GLOBAL_KEYS)[number];
const ROUTE_KEYS = ['router-id', 'max-routes'] as const;
const ALIASES: Partial<Record<GlobalKey, GlobalKey>> = {
  'project-id': 'tenant-id',
  'project-name': 'tenant-name',
  'project-domain-id': 'tenant-domain-id',
  'project-domain-name': 'tenant-domain-name',
};
const UNSUPPORTED: readonly GlobalKey[] = ['trust-id', 'trustee-id', 'trustee-password', 'token'];

export interface ConfigEnvironment {
  readonly env?: Readonly<Record<string, string | undefined>>;
  /** Reads clouds.yaml; tests pass their own. */
  readonly readFile?: (file: string) => string;
  readonly exists?: (file: string) => boolean;
  readonly homedir?: string;
}

function fail(msg: string): never {
  throw new OpenStackConfigError(`openstack cloud config: ${msg}`);
}

type Values = Map<GlobalKey, string>;

function readSections(text: string): {
  global: Values;
  routerId: string | undefined;
  maxRoutes: number | undefined;
} {
  let sections;
  try {
    sections = parseGcfg(text);
  } catch (err) {
    if (err instanceof GcfgSyntaxError) fail(`not valid gcfg (cloud.conf syntax): ${err.message}`);
    throw err;
  }
  const global: Values = new Map();
  let routerId: string | undefined;
  let maxRoutes: number | undefined;
  for (const s of sections) {
    if (s.name === 'global' && s.subsection === undefined) {
      for (const e of s.entries) {
        if (!(GLOBAL_KEYS as readonly string[]).includes(e.name)) {
          fail(`line ${e.line}: unknown key "${e.name}" in [Global]; known keys: ${GLOBAL_KEYS.join(', ')}`);
        }
        const key = ALIASES[e.name as GlobalKey] ?? (e.name as GlobalKey);
        global.set(key, e.value);
      }
    } else if (s.name === 'route' && s.subsection === undefined) {
      for (const e of s.entries) {
        if (!(ROUTE_KEYS as readonly string[]).includes(e.name)) {
          fail(`line ${e.line}: unknown key "${e.name}" in [Route]; known keys: ${ROUTE_KEYS.join(', ')}`);
        }
        if (e.name === 'max-routes') maxRoutes = positiveInt(e.name, e.line, e.value);
        else routerId = e.value.trim();
      }
    }
    // [LoadBalancer], [BlockStorage], [Metadata], [Networking]…: upstream's, not ours.
  }
  return { global, routerId, maxRoutes };
}

function positiveInt(key: string, line: number, value: string): number {
  const v = value.trim();
  if (!/^[1-9]\d*$/.test(v))
    fail(`line ${line}: "${key}" must be a whole number of at least 1, got ${JSON.stringify(value)}`);
  return Number(v);
}

function bool(key: string, value: string | undefined): boolean {
  if (value === undefined || value === '') return false;
  const v = value.trim().toLowerCase();
  if (v === 'true' || v === 'yes' || v === 'on' || v === '1') return true;
  if (v === 'false' || v === 'no' || v === 'off' || v === '0') return false;
  fail(`"${key}" must be true or false, got ${JSON.stringify(value)}`);
}

function endpointInterface(value: string | undefined): EndpointInterface {
  if (value === undefined || value.trim() === '') return 'public';
  const v = value.trim().toLowerCase().replace(/url$/, '');
  if (v === 'public' || v === 'internal' || v === 'admin') return v;
  fail(`"os-endpoint-type" must be public, internal or admin, got ${JSON.stringify(value)}`);
}

/** clouds.yaml keys (under `auth` unless noted) → the [Global] key they fill. */
const CLOUDS_AUTH: readonly [string, GlobalKey][] = [
  ['auth_url', 'auth-url'],
  ['user_id', 'user-id'],
  ['username', 'username'],
  ['password', 'password'],
  ['project_id', 'tenant-id'],
  ['tenant_id', 'tenant-id'],
  ['project_name', 'tenant-name'],
  ['tenant_name', 'tenant-name'],
  ['domain_id', 'domain-id'],
  ['domain_name', 'domain-name'],
  ['project_domain_id', 'tenant-domain-id'],
  ['project_domain_name', 'tenant-domain-name'],
  ['user_domain_id', 'user-domain-id'],
  ['user_domain_name', 'user-domain-name'],
  ['application_credential_id', 'application-credential-id'],
  ['application_credential_name', 'application-credential-name'],
  ['application_credential_secret', 'application-credential-secret'],
  ['token', 'token'],
];
const CLOUDS_TOP: readonly [string, GlobalKey][] = [
  ['region_name', 'region'],
  ['interface', 'os-endpoint-type'],
  ['endpoint_type', 'os-endpoint-type'],
  ['cacert', 'ca-file'],
  ['cert', 'cert-file'],
  ['key', 'key-file'],
];

function cloudsFile(global: Values, envs: Required<ConfigEnvironment>): string {
  const explicit = global.get('clouds-file') || envs.env['OS_CLIENT_CONFIG_FILE'];
  if (explicit) return explicit;
  // gophercloud's clientconfig search order.
  const candidates = [
    path.resolve('clouds.yaml'),
    path.join(envs.homedir, '.config', 'openstack', 'clouds.yaml'),
    '/etc/openstack/clouds.yaml',
  ];
  const found = candidates.find((f) => envs.exists(f));
  if (found === undefined) {
    fail(
      `"use-clouds" is set but no clouds.yaml was found (set "clouds-file"; looked in ${candidates.join(', ')})`,
    );
  }
  return found;
}

/** Fills the keys cloud.conf leaves empty from the clouds.yaml entry (upstream's ReadClouds). */
function mergeClouds(global: Values, envs: Required<ConfigEnvironment>): void {
  const file = cloudsFile(global, envs);
  let text: string;
  try {
    text = envs.readFile(file);
  } catch (err) {
    fail(`cannot read clouds file ${file}: ${(err as Error).message}`);
  }
  const doc = parseDocument(text);
  if (doc.errors[0]) fail(`clouds file ${file} is not valid YAML: ${doc.errors[0].message}`);
  const clouds = (doc.toJS() as { clouds?: unknown } | null)?.clouds;
  if (typeof clouds !== 'object' || clouds === null) fail(`clouds file ${file} has no "clouds" mapping`);
  const names = Object.keys(clouds);
  const wanted = global.get('cloud') || envs.env['OS_CLOUD'] || (names.length === 1 ? names[0] : undefined);
  if (wanted === undefined) {
    fail(`clouds file ${file} has ${names.length} clouds (${names.join(', ')}): set "cloud" to one of them`);
  }
  const entry = (clouds as Record<string, unknown>)[wanted];
  if (typeof entry !== 'object' || entry === null) {
    fail(`clouds file ${file} has no cloud "${wanted}"; it has: ${names.join(', ')}`);
  }
  const top = entry as Record<string, unknown>;
  const auth = (typeof top['auth'] === 'object' && top['auth'] !== null ? top['auth'] : {}) as Record<
    string,
    unknown
  >;
  const fill = (key: GlobalKey, value: unknown): void => {
    if ((global.get(key) ?? '') !== '') return;
    if (typeof value === 'string' || typeof value === 'number') global.set(key, String(value));
  };
  for (const [k, key] of CLOUDS_AUTH) fill(key, auth[k]);
  for (const [k, key] of CLOUDS_TOP) fill(key, top[k]);
  if (top['verify'] === false) fill('tls-insecure', 'true');
}

function authUrl(value: string | undefined): string {
  if (value === undefined || value.trim() === '')
    fail('"auth-url" is required: the Keystone URL, e.g. https://keystone.example:5000/v3');
  let url: URL;
  try {
    url = new URL(value.trim());
  } catch {
    fail(`"auth-url" is not a URL: ${JSON.stringify(value)}`);
  }
  if (url.protocol !== 'http:' && url.protocol !== 'https:')
    fail(`"auth-url" must be http or https, got ${JSON.stringify(value)}`);
  if (url.username !== '' || url.password !== '') fail('"auth-url" must not contain credentials');
  if (/\/v2\.0\/?$/.test(url.pathname))
    fail('"auth-url" points at Keystone v2.0, which is gone: use the v3 URL');
  const base = url.href.replace(/\/+$/, '');
  return /\/v3$/.test(base) ? base : `${base}/v3`;
}

function user(g: Values): UserRef {
  return {
    ...(g.get('user-id') ? { id: g.get('user-id')! } : {}),
    ...(g.get('username') ? { name: g.get('username')! } : {}),
    ...(g.get('user-domain-id') || g.get('domain-id')
      ? { domainId: (g.get('user-domain-id') || g.get('domain-id'))! }
      : {}),
    ...(g.get('user-domain-name') || g.get('domain-name')
      ? { domainName: (g.get('user-domain-name') || g.get('domain-name'))! }
      : {}),
  };
}

function requireUserDomain(u: UserRef, why: string): void {
  if (u.id === undefined && u.domainId === undefined && u.domainName === undefined) {
    fail(`${why} needs the user's domain: set "user-domain-name" (or "user-domain-id", "domain-name")`);
  }
}

function auth(g: Values): OpenStackAuth {
  for (const key of UNSUPPORTED) {
    if (g.get(key))
      fail(`"${key}" is not supported by this plug-in: use a password or an application credential`);
  }
  const secret = g.get('application-credential-secret');
  if (secret) {
    const id = g.get('application-credential-id');
    const name = g.get('application-credential-name');
    if (!id && !name)
      fail(
        '"application-credential-secret" needs "application-credential-id" or "application-credential-name"',
      );
    if (id) return { method: 'application_credential', id, secret };
    const u = user(g);
    if (u.id === undefined && u.name === undefined) {
      fail('"application-credential-name" needs the user it belongs to: set "user-id" or "username"');
    }
    requireUserDomain(u, '"application-credential-name" with "username"');
    return { method: 'application_credential', name: name!, secret, user: u };
  }
  if (g.get('application-credential-id') || g.get('application-credential-name')) {
    fail('"application-credential-secret" is required with an application credential');
  }
  const u = user(g);
  if (u.id === undefined && u.name === undefined) {
    fail(
      'no credentials: set "username" and "password" (or "user-id"), or "application-credential-id" and "application-credential-secret"',
    );
  }
  const password = g.get('password');
  if (!password) fail('"password" is required with "username" or "user-id"');
  requireUserDomain(u, '"username"');
  const projectId = g.get('tenant-id');
  const projectName = g.get('tenant-name');
  if (!projectId && !projectName) {
    fail('a project is required for password auth: set "tenant-id" (or "project-id") or "tenant-name"');
  }
  const project: ProjectRef = projectId
    ? { id: projectId }
    : {
        name: projectName!,
        ...(g.get('tenant-domain-id') || g.get('domain-id')
          ? { domainId: (g.get('tenant-domain-id') || g.get('domain-id'))! }
          : {}),
        ...(g.get('tenant-domain-name') || g.get('domain-name')
          ? { domainName: (g.get('tenant-domain-name') || g.get('domain-name'))! }
          : {}),
      };
  if (project.name !== undefined && project.domainId === undefined && project.domainName === undefined) {
    fail(
      '"tenant-name" needs the project\'s domain: set "tenant-domain-name" (or "tenant-domain-id", "domain-name")',
    );
  }
  return { method: 'password', user: u, password, project };
}

/** Parses cloud.conf (and the clouds.yaml it names); one clear error per missing or bad key. */
export function parseOpenStackConfig(text: string, environment: ConfigEnvironment = {}): OpenStackConfig {
  const envs: Required<ConfigEnvironment> = {
    env: environment.env ?? process.env,
    readFile: environment.readFile ?? ((f) => nodeFs.readFileSync(f, 'utf8')),
    exists: environment.exists ?? ((f) => nodeFs.existsSync(f)),
    homedir: environment.homedir ?? os.homedir(),
  };
  const { global, routerId, maxRoutes } = readSections(text);
  if (routerId === undefined || routerId === '') {
    fail('[Route] "router-id" is required: the ID of the Neutron router that holds the cluster\'s routes');
  }
  if (bool('use-clouds', global.get('use-clouds'))) mergeClouds(global, envs);
  const region = global.get('region')?.trim();
  const opt = (key: GlobalKey): string | undefined => {
    const v = global.get(key)?.trim();
    return v === undefined || v === '' ? undefined : v;
  };
  const certFile = opt('cert-file');
  const keyFile = opt('key-file');
  if ((certFile === undefined) !== (keyFile === undefined)) fail('"cert-file" and "key-file" go together');
  const tlsInsecure = bool('tls-insecure', global.get('tls-insecure'));
  return {
    authUrl: authUrl(global.get('auth-url')),
    auth: auth(global),
    ...(region ? { region } : {}),
    endpointInterface: endpointInterface(global.get('os-endpoint-type')),
    ...(opt('ca-file') !== undefined ? { caFile: opt('ca-file')! } : {}),
    ...(certFile !== undefined ? { certFile, keyFile: keyFile! } : {}),
    tlsInsecure,
    routerId,
    ...(maxRoutes !== undefined ? { maxRoutes } : {}),
  };
}
