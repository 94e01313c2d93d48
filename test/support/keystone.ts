// The real Keystone for the openstack tests (PyPI `keystone`, testenv/keystone/serve.py on a
// copy of the template database scripts/keystone.sh built): started per test file, then given,
// through its own v3 API as an operator would, a project, a user with the member role, an
// application credential and the network service's endpoints. `validate` and `revoke` are what
// keystonemiddleware and an operator do with a token.
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { startProcess, terminate } from './child-processes.ts';
import type { Proc } from './child-processes.ts';
import { skipUnless, scriptPaths } from './prerequisites.ts';
import { isExecutable } from './testenv-binaries.ts';

const ROOT = path.resolve(import.meta.dirname, '..', '..');
/** serve.py's bootstrap password for `admin`. */
const ADMIN_PASSWORD = 'keystone-admin-test';

export interface KeystoneInstall {
  readonly python: string;
  readonly template: string;
}

/** KEYSTONE_PYTHON and KEYSTONE_TEMPLATE, else what scripts/keystone.sh installed. */
export function keystoneInstall(): KeystoneInstall | undefined {
  let python = process.env['KEYSTONE_PYTHON'] ?? '';
  let template = process.env['KEYSTONE_TEMPLATE'] ?? '';
  if (python === '' || template === '') {
    const found = scriptPaths('keystone.sh');
    if (found === undefined) return undefined;
    python = found['KEYSTONE_PYTHON'] ?? '';
    template = found['KEYSTONE_TEMPLATE'] ?? '';
  }
  return isExecutable(python) && fs.existsSync(path.join(template, 'keystone.sqlite'))
    ? { python, template }
    : undefined;
}

/** `{ skip }` for node:test; with CI=true a missing Keystone fails instead, so a broken install cannot pass. */
export function keystoneSkip(): { skip: string | false } {
  return skipUnless(
    keystoneInstall() !== undefined,
    'keystone not installed: run scripts/keystone.sh (or set KEYSTONE_PYTHON and KEYSTONE_TEMPLATE)',
  );
}

/** What the test's cloud.conf uses: made by Keystone, so the ids are its own. */
export interface KeystoneAccount {
  readonly username: string;
  readonly password: string;
  readonly domain: string;
  readonly projectId: string;
  readonly appCredentialId: string;
  readonly appCredentialSecret: string;
}

async function waitForReady(log: string, proc: Proc, timeoutMs: number): Promise<string> {
  const deadline = Date.now() + timeoutMs;
  while (Date.now() < deadline) {
    const text = fs.existsSync(log) ? fs.readFileSync(log, 'utf8') : '';
    const m = /KEYSTONE_READY (http:\/\/127\.0\.0\.1:\d+)/.exec(text);
    if (m) return m[1]!;
    if (proc.exitInfo !== undefined) throw new Error(`keystone exited: ${text.slice(-3000)}`);
    await new Promise((r) => setTimeout(r, 200));
  }
  throw new Error(`keystone did not start in ${timeoutMs} ms: ${fs.readFileSync(log, 'utf8').slice(-3000)}`);
}

export class Keystone {
  /** The identity v3 URL: cloud.conf's auth-url. */
  readonly authUrl: string;
  private readonly proc: Proc;
  private readonly dir: string;
  private adminToken = '';

  private constructor(proc: Proc, url: string, dir: string) {
    this.proc = proc;
    this.authUrl = `${url}/v3`;
    this.dir = dir;
  }

  static async start(): Promise<Keystone> {
    const install = keystoneInstall();
    if (install === undefined) throw new Error('keystone is not installed (scripts/keystone.sh)');
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'routectl-keystone-'));
    const log = path.join(dir, 'keystone.log');
    const serve = path.join(ROOT, 'testenv', 'keystone', 'serve.py');
    const proc = startProcess(
      install.python,
      [serve, '--port', '0', '--state-dir', dir, '--template', install.template],
      log,
    );
    try {
      const ks = new Keystone(proc, await waitForReady(log, proc, 120_000), dir);
      ks.adminToken = await ks.issue({
        identity: {
          methods: ['password'],
          password: { user: { name: 'admin', domain: { name: 'Default' }, password: ADMIN_PASSWORD } },
        },
        scope: { project: { name: 'admin', domain: { name: 'Default' } } },
      });
      return ks;
    } catch (err) {
      await terminate(proc, 5_000);
      throw err;
    }
  }

  async stop(): Promise<void> {
    await terminate(this.proc, 5_000);
    fs.rmSync(this.dir, { recursive: true, force: true });
  }

  private async issue(auth: unknown): Promise<string> {
    const res = await fetch(`${this.authUrl}/auth/tokens`, {
      method: 'POST',
      headers: { 'Content-Type': 'application/json' },
      body: JSON.stringify({ auth }),
    });
    const text = await res.text();
    if (res.status !== 201) throw new Error(`keystone: issue a token: HTTP ${res.status} ${text}`);
    return res.headers.get('x-subject-token') ?? '';
  }

  /** One admin call of the v3 API; its JSON answer. */
  async call<T = Record<string, unknown>>(
    method: string,
    p: string,
    body?: unknown,
    token = this.adminToken,
  ): Promise<T> {
    const res = await fetch(`${this.authUrl}${p}`, {
      method,
      headers: { 'Content-Type': 'application/json', 'X-Auth-Token': token },
      ...(body !== undefined ? { body: JSON.stringify(body) } : {}),
    });
    const text = await res.text();
    if (!res.ok) throw new Error(`keystone: ${method} ${p}: HTTP ${res.status} ${text}`);
    return (text === '' ? {} : JSON.parse(text)) as T;
  }

  /**
   * As an operator sets a cluster up: a project, a user with the member role in it, the network
   * service with public and internal endpoints at `networkUrl`, and the user's application credential.
   */
  async provision(networkUrl: string, password: string): Promise<KeystoneAccount> {
    const username = 'k8s-routes';
    const { project } = await this.call<{ project: { id: string } }>('POST', '/projects', {
      project: { name: 'k8s', domain_id: 'default' },
    });
    const { user } = await this.call<{ user: { id: string } }>('POST', '/users', {
      user: { name: username, password, domain_id: 'default', default_project_id: project.id },
    });
    const { roles } = await this.call<{ roles: { id: string }[] }>('GET', '/roles?name=member');
    await this.call('PUT', `/projects/${project.id}/users/${user.id}/roles/${roles[0]!.id}`);
    const { service } = await this.call<{ service: { id: string } }>('POST', '/services', {
      service: { type: 'network', name: 'neutron' },
    });
    for (const iface of ['public', 'internal']) {
      await this.call('POST', '/endpoints', {
        endpoint: { service_id: service.id, interface: iface, url: networkUrl, region_id: 'RegionOne' },
      });
    }
    const userToken = await this.issue({
      identity: {
        methods: ['password'],
        password: { user: { name: username, domain: { name: 'Default' }, password } },
      },
      scope: { project: { id: project.id } },
    });
    const { application_credential: ac } = await this.call<{
      application_credential: { id: string; secret: string };
    }>(
      'POST',
      `/users/${user.id}/application_credentials`,
      { application_credential: { name: 'k8s-routes' } },
      userToken,
    );
    return {
      username,
      password,
      domain: 'Default',
      projectId: project.id,
      appCredentialId: ac.id,
      appCredentialSecret: ac.secret,
    };
  }

  /** What keystonemiddleware asks Keystone for each request: is this token valid now? */
  async validate(token: string): Promise<boolean> {
    if (token === '') return false;
    const res = await fetch(`${this.authUrl}/auth/tokens`, {
      headers: { 'X-Auth-Token': this.adminToken, 'X-Subject-Token': token },
    });
    await res.body?.cancel();
    return res.status === 200;
  }

  /** Revokes a token (DELETE /v3/auth/tokens), as `openstack token revoke` does. */
  async revoke(token: string): Promise<void> {
    const res = await fetch(`${this.authUrl}/auth/tokens`, {
      method: 'DELETE',
      headers: { 'X-Auth-Token': this.adminToken, 'X-Subject-Token': token },
    });
    await res.body?.cancel();
    if (res.status !== 204) throw new Error(`keystone: revoke: HTTP ${res.status}`);
  }
}
