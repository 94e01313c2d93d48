// OpenStack for the openstack plug-in's integration tests: the real neutron-server (PyPI
// `neutron`, testenv/neutron/serve.py: ML2 and the L3 router plugin on SQLite) and, in front
// of it, a Keystone v3 stand-in written here. Keystone itself is not run: keystone from PyPI
// needs its own database, fernet keys, a bootstrap of users, projects, roles and the catalog,
// and keystonemiddleware's auth_token inside neutron-server calling back to it: a second heavy
// Python server, too much for the 2-core CI machines beside kube-apiserver, etcd and Neutron,
// for a plug-in that uses one call of the identity API (POST /v3/auth/tokens) and Keystone's
// 401 for a token it no longer accepts. The stand-in serves exactly that: it checks the
// credentials the test configures, issues tokens with the lifetime and catalog the test sets,
// and, in the place of keystonemiddleware, refuses a Neutron request whose token is unknown,
// expired or revoked before passing the rest to
// Neutron (which runs with auth_strategy = noauth). It also records every request and can
// fail chosen ones, or let "another writer" change the router just before one.
import { randomBytes } from 'node:crypto';
import * as fs from 'node:fs';
import * as http from 'node:http';
import * as https from 'node:https';
import * as os from 'node:os';
import * as path from 'node:path';
import type { AddressInfo } from 'node:net';
import { startProcess, terminate } from './child-processes.ts';
import type { Proc } from './child-processes.ts';
import { Keystone } from './keystone.ts';
import type { KeystoneAccount } from './keystone.ts';
import { ROOT, neutronPython, waitForReady } from './neutron-server.ts';
import { checkAuthRequest, tokenAnswer, type KeystoneAnswer } from './keystone-tokens.ts';
import { CREDENTIALS } from './openstack-conf.ts';

export { neutronPython, neutronSkip } from './neutron-server.ts';
export { CREDENTIALS, globalSection, type Credentials } from './openstack-conf.ts';

export interface ExtraRoute {
  destination: string;
  nexthop: string;
}

export interface RecordedRequest {
  seq: number;
  method: string;
  /** Below the network endpoint, e.g. /v2.0/routers/<id>, or /v3/auth/tokens. */
  path: string;
  status: number;
  ifMatch?: string;
  token?: string;
}

export interface Fault {
  method?: string;
  /** A substring of the path. */
  path?: string;
  /** How many matching requests it hits (default 1). */
  times?: number;
  status?: number;
  type?: string;
  retryAfter?: string;
  /** Runs (against Neutron directly) before the matching request is forwarded, which then goes on. */
  before?: () => Promise<void>;
}

export interface OpenStackOptions {
  /** Serve Neutron without extraroute-atomic (a cloud older than Ussuri). */
  readonly noAtomic?: boolean;
  readonly maxRoutes?: number;
  /** Neutron's `pagination_max_limit`: lists answer pages of this many items with `next` links. */
  readonly pageSize?: number;
  /**
   * The real Keystone (test/support/keystone.ts) instead of the stand-in: tokens come from it,
   * and each Neutron request's token is validated with it, as keystonemiddleware does.
   */
  readonly keystone?: boolean;
  /** Serve the stand-in over HTTPS with this certificate and key. */
  readonly tls?: { readonly cert: string; readonly key: string };
}

interface TokenInfo {
  expiresAt: number;
  revoked: boolean;
}

export class OpenStack {
  /** Neutron itself, without auth (the test's own setup and out-of-band changes). */
  readonly neutronUrl: string;
  /** Keystone v3 of the stand-in: the auth-url of cloud.conf. */
  readonly authUrl: string;
  readonly requests: RecordedRequest[] = [];
  readonly faults: Fault[] = [];
  tokenLifetimeMs = 3_600_000;
  region = 'RegionOne';
  private issuedCount = 0;
  /** With the real Keystone: the tokens Neutron requests carried, and those revoked. */
  private readonly seenTokens = new Set<string>();
  private readonly revoked = new Set<string>();
  private readonly tokens = new Map<string, TokenInfo>();
  private readonly proc: Proc;
  private readonly server: http.Server;
  private readonly dir: string;
  private seq = 0;
  /** The real Keystone, with the account it made (OpenStackOptions.keystone). */
  keystone: Keystone | undefined;
  account: KeystoneAccount | undefined;

  private constructor(proc: Proc, neutronUrl: string, server: http.Server, dir: string, scheme: string) {
    this.proc = proc;
    this.neutronUrl = neutronUrl;
    this.server = server;
    this.dir = dir;
    this.authUrl = `${scheme}://127.0.0.1:${(server.address() as AddressInfo).port}/identity/v3`;
  }

  /** cloud.conf's auth-url: the real Keystone's, else the stand-in's. */
  get identityUrl(): string {
    return this.keystone?.authUrl ?? this.authUrl;
  }

  static async start(opts: OpenStackOptions = {}): Promise<OpenStack> {
    const python = neutronPython();
    if (python === undefined) throw new Error('neutron is not installed (scripts/neutron.sh)');
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'routectl-neutron-'));
    const log = path.join(dir, 'neutron.log');
    const args = [path.join(ROOT, 'testenv', 'neutron', 'serve.py'), '--port', '0', '--state-dir', dir];
    if (opts.noAtomic) args.push('--no-atomic');
    if (opts.maxRoutes !== undefined) args.push('--max-routes', String(opts.maxRoutes));
    if (opts.pageSize !== undefined) args.push('--page-size', String(opts.pageSize));
    const proc = startProcess(python, args, log);
    const url = await waitForReady(log, proc, 120_000);
    const ref: { os?: OpenStack } = {};
    const handler = (req: http.IncomingMessage, res: http.ServerResponse): void => {
      ref.os!.handle(req, res).catch((err: unknown) => {
        res.writeHead(500, { 'Content-Type': 'application/json' });
        res.end(JSON.stringify({ error: { code: 500, title: 'stand-in failure', message: String(err) } }));
      });
    };
    const server = opts.tls
      ? https.createServer({ cert: opts.tls.cert, key: opts.tls.key }, handler)
      : http.createServer(handler);
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    ref.os = new OpenStack(proc, url, server, dir, opts.tls ? 'https' : 'http');
    if (opts.keystone) {
      const port = (server.address() as AddressInfo).port;
      try {
        ref.os.keystone = await Keystone.start();
        ref.os.account = await ref.os.keystone.provision(
          `${opts.tls ? 'https' : 'http'}://127.0.0.1:${port}/network`,
          CREDENTIALS.password,
        );
      } catch (err) {
        // Neutron and the proxy are running: a failed Keystone must not leave them behind.
        await ref.os.stop();
        throw err;
      }
    }
    return ref.os;
  }

  async stop(): Promise<void> {
    this.server.closeAllConnections();
    await new Promise<void>((resolve) => this.server.close(() => resolve()));
    await terminate(this.proc, 5_000);
    await this.keystone?.stop();
    fs.rmSync(this.dir, { recursive: true, force: true });
  }

  /** How many tokens were issued (with the real Keystone: how many distinct ones Neutron saw). */
  get tokensIssued(): number {
    return this.keystone !== undefined ? this.seenTokens.size : this.issuedCount;
  }

  /** The tokens issued so far (secrets: for asserting that none reaches a log). */
  issuedTokens(): string[] {
    return this.keystone !== undefined ? [...this.seenTokens] : [...this.tokens.keys()];
  }

  /** Every token issued so far is refused from now on (as after a revocation or expiry). */
  async revokeTokens(): Promise<void> {
    for (const t of this.tokens.values()) t.revoked = true;
    for (const t of this.seenTokens) {
      if (this.revoked.has(t)) continue;
      this.revoked.add(t);
      await this.keystone?.revoke(t);
    }
  }

  /** Requests below the network endpoint, optionally by method and path substring. */
  neutronRequests(method?: string, pathPart?: string): RecordedRequest[] {
    return this.requests.filter(
      (r) =>
        r.path.startsWith('/v2.0') &&
        (method === undefined || r.method === method) &&
        (pathPart === undefined || r.path.includes(pathPart)),
    );
  }

  // -- direct Neutron calls (no auth): the test's setup and "another writer" --------------------

  async neutron<T = Record<string, unknown>>(
    method: string,
    p: string,
    body?: unknown,
    headers: Record<string, string> = {},
  ): Promise<{ status: number; body: T }> {
    const res = await fetch(`${this.neutronUrl}/v2.0${p}`, {
      method,
      headers: { 'Content-Type': 'application/json', ...headers },
      ...(body !== undefined ? { body: JSON.stringify(body) } : {}),
    });
    const text = await res.text();
    return { status: res.status, body: (text === '' ? {} : JSON.parse(text)) as T };
  }

  private async create(kind: string, attrs: Record<string, unknown>): Promise<string> {
    const r = await this.neutron<Record<string, { id: string }>>('POST', `/${kind}s`, {
      [kind]: { project_id: CREDENTIALS.projectId, ...attrs },
    });
    if (r.status !== 201) throw new Error(`create ${kind}: HTTP ${r.status} ${JSON.stringify(r.body)}`);
    return r.body[kind]!.id;
  }

  /** A network with an IPv4 and an IPv6 subnet, a router with interfaces on both. */
  async topology(
    v4 = '10.0.0.0/24',
    v6 = 'fd00::/64',
    gateway?: string,
  ): Promise<{ routerId: string; networkId: string }> {
    const networkId = await this.create('network', { name: 'k8s' });
    const s4 = await this.create('subnet', {
      network_id: networkId,
      cidr: v4,
      ip_version: 4,
      ...(gateway !== undefined ? { gateway_ip: gateway } : {}),
    });
    const s6 = await this.create('subnet', {
      network_id: networkId,
      cidr: v6,
      ip_version: 6,
      ipv6_address_mode: 'slaac',
      ipv6_ra_mode: 'slaac',
    });
    const routerId = await this.create('router', { name: 'k8s' });
    for (const subnet of [s4, s6]) {
      const r = await this.neutron('PUT', `/routers/${routerId}/add_router_interface`, { subnet_id: subnet });
      if (r.status !== 200)
        throw new Error(`add_router_interface: HTTP ${r.status} ${JSON.stringify(r.body)}`);
    }
    return { routerId, networkId };
  }

  /** A node's port with the given fixed IPs (port security on unless said otherwise). */
  async port(networkId: string, ips: string[], portSecurity = true): Promise<string> {
    return this.create('port', {
      network_id: networkId,
      fixed_ips: ips.map((ip_address) => ({ ip_address })),
      port_security_enabled: portSecurity,
      ...(portSecurity ? {} : { security_groups: [] }),
    });
  }

  async routes(routerId: string): Promise<ExtraRoute[]> {
    const r = await this.neutron<{ router: { routes: ExtraRoute[] } }>('GET', `/routers/${routerId}`);
    return r.body.router.routes;
  }

  /** "dest=nexthop" strings, sorted, for readable assertions. */
  async routeList(routerId: string): Promise<string[]> {
    return (await this.routes(routerId)).map((r) => `${r.destination}=${r.nexthop}`).sort();
  }

  async setRoutes(routerId: string, routes: ExtraRoute[]): Promise<void> {
    const r = await this.neutron('PUT', `/routers/${routerId}`, { router: { routes } });
    if (r.status !== 200) throw new Error(`set routes: HTTP ${r.status} ${JSON.stringify(r.body)}`);
  }

  async pairs(portId: string): Promise<string[]> {
    const r = await this.neutron<{ port: { allowed_address_pairs: { ip_address: string }[] } }>(
      'GET',
      `/ports/${portId}`,
    );
    return r.body.port.allowed_address_pairs.map((p) => p.ip_address).sort();
  }

  // -- the stand-in -------------------------------------------------------------------------------

  private record(r: Omit<RecordedRequest, 'seq'>): void {
    this.requests.push({ seq: ++this.seq, ...r });
  }

  private async handle(req: http.IncomingMessage, res: http.ServerResponse): Promise<void> {
    const chunks: Buffer[] = [];
    for await (const c of req) chunks.push(c as Buffer);
    const body = Buffer.concat(chunks).toString('utf8');
    const url = req.url ?? '/';
    const send = (status: number, payload: unknown, headers: Record<string, string> = {}): void => {
      res.writeHead(status, { 'Content-Type': 'application/json', ...headers });
      res.end(JSON.stringify(payload));
    };
    if (req.method === 'POST' && url === '/identity/v3/auth/tokens') {
      const status = this.issue(body);
      this.record({ method: 'POST', path: '/v3/auth/tokens', status: status.status });
      send(status.status, status.body, status.headers);
      return;
    }
    if (!url.startsWith('/network/')) {
      send(404, { error: { code: 404, title: 'Not Found', message: url } });
      return;
    }
    const p = url.slice('/network'.length);
    const method = req.method ?? 'GET';
    const token = String(req.headers['x-auth-token'] ?? '');
    const ifMatch = req.headers['if-match'] as string | undefined;
    const entry = { method, path: p, token, ...(ifMatch !== undefined ? { ifMatch } : {}) };
    if (!(await this.tokenValid(token))) {
      this.record({ ...entry, status: 401 });
      send(
        401,
        {
          error: {
            code: 401,
            title: 'Unauthorized',
            message: 'The request you have made requires authentication.',
          },
        },
        { 'WWW-Authenticate': 'Keystone uri="stand-in"' },
      );
      return;
    }
    const fault = this.faults.find(
      (f) =>
        (f.method === undefined || f.method === method) &&
        (f.path === undefined || p.includes(f.path)) &&
        (f.times ?? 1) > 0,
    );
    if (fault !== undefined) {
      fault.times = (fault.times ?? 1) - 1;
      if (fault.before) await fault.before();
      if (fault.status !== undefined) {
        this.record({ ...entry, status: fault.status });
        send(
          fault.status,
          {
            NeutronError: { type: fault.type ?? 'Injected', message: `injected ${fault.status}`, detail: '' },
          },
          fault.retryAfter !== undefined ? { 'Retry-After': fault.retryAfter } : {},
        );
        return;
      }
    }
    const headers: Record<string, string> = { Accept: 'application/json' };
    if (body !== '') headers['Content-Type'] = 'application/json';
    if (ifMatch !== undefined) headers['If-Match'] = ifMatch;
    const upstream = await fetch(`${this.neutronUrl}${p}`, {
      method,
      headers,
      ...(body !== '' ? { body } : {}),
    });
    const text = await upstream.text();
    this.record({ ...entry, status: upstream.status });
    res.writeHead(upstream.status, {
      'Content-Type': upstream.headers.get('content-type') ?? 'application/json',
    });
    res.end(text);
  }

  /** The stand-in's own tokens, or the real Keystone's answer (keystonemiddleware's check). */
  private async tokenValid(token: string): Promise<boolean> {
    if (this.keystone !== undefined) {
      const valid = await this.keystone.validate(token);
      if (valid) this.seenTokens.add(token);
      return valid;
    }
    const info = this.tokens.get(token);
    return info !== undefined && !info.revoked && Date.now() < info.expiresAt;
  }

  private issue(body: string): KeystoneAnswer {
    const checked = checkAuthRequest(body);
    if ('status' in checked) return checked;
    const id = `gAAAA${randomBytes(24).toString('hex')}`;
    const now = Date.now();
    this.tokens.set(id, { expiresAt: now + this.tokenLifetimeMs, revoked: false });
    this.issuedCount++;
    const address = this.server.address() as AddressInfo;
    const scheme = this.authUrl.startsWith('https') ? 'https' : 'http';
    return tokenAnswer({
      id,
      methods: checked.methods,
      issuedAt: now,
      lifetimeMs: this.tokenLifetimeMs,
      region: this.region,
      identityUrl: this.authUrl,
      networkUrl: `${scheme}://127.0.0.1:${address.port}/network`,
    });
  }
}
