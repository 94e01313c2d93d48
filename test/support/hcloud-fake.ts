// Test fake of the public Hetzner Cloud API (https://docs.hetzner.cloud), written
// from its public documentation for the hcloud route plug-in's tests. Stateful,
// in-process `node:http` on 127.0.0.1:0. It serves only:
//   GET  /v1/networks/{id}, GET /v1/networks?name=
//   POST /v1/networks/{id}/actions/add_route | delete_route   (async actions)
//   GET  /v1/actions/{id}
//   GET  /v1/servers/{id}, GET /v1/servers?page=&per_page=   (pagination meta)
// Behaviour modelled from the docs: bearer-token auth (401 `unauthorized`),
// RateLimit-Limit/-Remaining/-Reset headers with a bucket that refills
// limit/hour and 429 `rate_limit_exceeded` when empty, error envelope
// `{error:{code,message,details}}` with the documented HTTP statuses, `conflict`
// while another action runs on the network, `locked` on demand, and a route
// limit per network (`resource_limit_exceeded`). Assumptions where the docs are
// silent: an existing destination gives `invalid_input`, deleting an unknown
// route gives `not_found`, and a route becomes visible when its action succeeds.
import http from 'node:http';
import type { AddressInfo } from 'node:net';

export interface FakeRoute {
  destination: string;
  gateway: string;
}

export interface FakeNetwork {
  id: number;
  name: string;
  ipRange: string;
  routes: FakeRoute[];
  locked: boolean;
}

export interface FakeServer {
  id: number;
  name: string;
  privateNet: { network: number; ip: string }[];
}

export interface LoggedRequest {
  method: string;
  /** Path and query, e.g. `/v1/servers?page=2&per_page=50`. */
  path: string;
  body: unknown;
  status: number;
}

interface FakeAction {
  id: number;
  command: string;
  status: 'running' | 'success' | 'error';
  progress: number;
  started: string;
  finished: string | null;
  error: { code: string; message: string } | null;
  networkId: number;
  complete: () => void;
}

interface Injected {
  method: string;
  pathPrefix: string;
  status: number;
  code: string;
  message: string;
}

class ApiError extends Error {
  readonly status: number;
  readonly code: string;
  constructor(status: number, code: string, message: string) {
    super(message);
    this.status = status;
    this.code = code;
  }
}

export interface HcloudFakeOptions {
  token?: string;
  /** Requests per hour (the API's default is 3600). */
  rateLimit?: number;
  /** How long an action stays `running`. */
  actionDurationMs?: number;
  /** Routes per network; Hetzner documents 100. */
  routeLimit?: number;
}

function ipv4(s: string): number | undefined {
  const m = /^(\d{1,3})\.(\d{1,3})\.(\d{1,3})\.(\d{1,3})$/.exec(s);
  if (!m) return undefined;
  const parts = m.slice(1).map(Number);
  if (parts.some((p) => p > 255)) return undefined;
  return parts.reduce((n, p) => n * 256 + p, 0);
}

function cidr(s: string): { base: number; len: number } | undefined {
  const [a, l] = s.split('/');
  const base = ipv4(a ?? '');
  const len = Number(l);
  if (base === undefined || l === undefined || !/^\d+$/.test(l) || len > 32) return undefined;
  return { base, len };
}

function contains(range: string, ip: number): boolean {
  const c = cidr(range);
  if (!c) return false;
  const size = 2 ** (32 - c.len);
  const start = c.base - (c.base % size);
  return ip >= start && ip < start + size;
}

export class HcloudFake {
  readonly token: string;
  readonly requests: LoggedRequest[] = [];
  actionDurationMs: number;
  routeLimit: number;
  /** While true, actions stay `running` until releaseActions(). */
  holdActions = false;

  private readonly server: http.Server;
  private readonly networks = new Map<number, FakeNetwork>();
  private readonly servers = new Map<number, FakeServer>();
  private readonly actions = new Map<number, FakeAction>();
  private readonly timers = new Set<NodeJS.Timeout>();
  private readonly injected: Injected[] = [];
  private nextActionId = 1000;
  private nextActionError: { code: string; message: string } | undefined;
  private limit: number;
  private remaining: number;
  private refilledAt = Date.now();

  private constructor(opts: HcloudFakeOptions) {
    this.token = opts.token ?? 'fake-token-0123456789abcdef';
    this.limit = opts.rateLimit ?? 3600;
    this.remaining = this.limit;
    this.actionDurationMs = opts.actionDurationMs ?? 15;
    this.routeLimit = opts.routeLimit ?? 100;
    this.server = http.createServer((req, res) => void this.handle(req, res));
  }

  static async start(opts: HcloudFakeOptions = {}): Promise<HcloudFake> {
    const fake = new HcloudFake(opts);
    await new Promise<void>((resolve) => fake.server.listen(0, '127.0.0.1', resolve));
    return fake;
  }

  get endpoint(): string {
    return `http://127.0.0.1:${(this.server.address() as AddressInfo).port}/v1`;
  }

  async close(): Promise<void> {
    for (const t of this.timers) clearTimeout(t);
    this.timers.clear();
    this.server.closeAllConnections();
    await new Promise<void>((resolve) => this.server.close(() => resolve()));
  }

  addNetwork(n: { id: number; name: string; ipRange: string; routes?: FakeRoute[] }): void {
    this.networks.set(n.id, { ...n, routes: [...(n.routes ?? [])], locked: false });
  }

  addServer(s: { id: number; name: string; privateNet?: { network: number; ip: string }[] }): void {
    this.servers.set(s.id, { id: s.id, name: s.name, privateNet: [...(s.privateNet ?? [])] });
  }

  routes(networkId: number): FakeRoute[] {
    return [...(this.networks.get(networkId)?.routes ?? [])];
  }

  setLocked(networkId: number, locked: boolean): void {
    const n = this.networks.get(networkId);
    if (n) n.locked = locked;
  }

  setRateLimit(limit: number, remaining: number): void {
    this.limit = limit;
    this.remaining = remaining;
    this.refilledAt = Date.now();
  }

  /** The next request matching method and path prefix (after /v1) fails with this API error. */
  failNext(method: string, pathPrefix: string, err: { status: number; code: string; message: string }): void {
    this.injected.push({ method, pathPrefix, ...err });
  }

  /** The next action created ends with status `error` and this error, changing nothing. */
  failNextAction(err: { code: string; message: string }): void {
    this.nextActionError = err;
  }

  /** Completes every held action. */
  releaseActions(): void {
    for (const a of this.actions.values()) if (a.status === 'running') a.complete();
  }

  mutations(): LoggedRequest[] {
    return this.requests.filter((r) => r.method === 'POST');
  }

  // --- HTTP plumbing -------------------------------------------------------

  private rateHeaders(): Record<string, string> {
    const now = Date.now();
    const perMs = this.limit / 3_600_000;
    this.remaining = Math.min(this.limit, this.remaining + (now - this.refilledAt) * perMs);
    this.refilledAt = now;
    const reset = Math.ceil((now + (this.limit - this.remaining) / perMs) / 1000);
    return {
      'RateLimit-Limit': String(this.limit),
      'RateLimit-Remaining': String(Math.floor(this.remaining)),
      'RateLimit-Reset': String(reset),
    };
  }

  private async handle(req: http.IncomingMessage, res: http.ServerResponse): Promise<void> {
    const chunks: Buffer[] = [];
    for await (const c of req) chunks.push(c as Buffer);
    const raw = Buffer.concat(chunks).toString('utf8');
    const method = req.method ?? 'GET';
    const path = req.url ?? '/';
    const entry: LoggedRequest = { method, path, body: undefined, status: 0 };
    this.requests.push(entry);
    let status = 200;
    let payload: unknown;
    let headers: Record<string, string> = {};
    try {
      if (req.headers.authorization !== `Bearer ${this.token}`) {
        throw new ApiError(401, 'unauthorized', 'unable to authenticate');
      }
      headers = this.rateHeaders();
      if (this.remaining < 1) {
        throw new ApiError(429, 'rate_limit_exceeded', 'limit of requests per hour reached');
      }
      this.remaining -= 1;
      headers['RateLimit-Remaining'] = String(Math.floor(this.remaining));
      if (raw !== '') {
        try {
          entry.body = JSON.parse(raw);
        } catch {
          throw new ApiError(400, 'json_error', 'invalid JSON in request body');
        }
      }
      const url = new URL(path, 'http://fake');
      const route = url.pathname.replace(/^\/v1/, '');
      const idx = this.injected.findIndex((i) => i.method === method && route.startsWith(i.pathPrefix));
      if (idx >= 0) {
        const inj = this.injected.splice(idx, 1)[0]!;
        throw new ApiError(inj.status, inj.code, inj.message);
      }
      [status, payload] = this.dispatch(method, route, url.searchParams, entry.body);
    } catch (err) {
      if (!(err instanceof ApiError)) throw err;
      status = err.status;
      payload = { error: { code: err.code, message: err.message, details: null } };
    }
    entry.status = status;
    res.writeHead(status, { 'Content-Type': 'application/json', ...headers });
    res.end(JSON.stringify(payload));
  }

  private dispatch(method: string, route: string, q: URLSearchParams, body: unknown): [number, unknown] {
    let m: RegExpExecArray | null;
    if (method === 'GET' && route === '/networks') {
      const name = q.get('name');
      const list = [...this.networks.values()].filter((n) => name === null || n.name === name);
      return [200, { networks: list.map((n) => this.networkJson(n)), meta: this.meta(1, 25, list.length) }];
    }
    if (method === 'GET' && (m = /^\/networks\/(\d+)$/.exec(route))) {
      return [200, { network: this.networkJson(this.network(Number(m[1]))) }];
    }
    if (method === 'POST' && (m = /^\/networks\/(\d+)\/actions\/(add_route|delete_route)$/.exec(route))) {
      const network = this.network(Number(m[1]));
      return [201, { action: this.actionJson(this.routeAction(network, m[2]!, body)) }];
    }
    if (method === 'GET' && (m = /^\/actions\/(\d+)$/.exec(route))) {
      const a = this.actions.get(Number(m[1]));
      if (!a) throw new ApiError(404, 'not_found', 'action not found');
      return [200, { action: this.actionJson(a) }];
    }
    if (method === 'GET' && (m = /^\/servers\/(\d+)$/.exec(route))) {
      const s = this.servers.get(Number(m[1]));
      if (!s) throw new ApiError(404, 'not_found', 'server not found');
      return [200, { server: this.serverJson(s) }];
    }
    if (method === 'GET' && route === '/servers') {
      const page = Math.max(1, Number(q.get('page') ?? 1) || 1);
      const perPage = Math.min(50, Math.max(1, Number(q.get('per_page') ?? 25) || 25));
      const name = q.get('name');
      const all = [...this.servers.values()]
        .filter((s) => name === null || s.name === name)
        .sort((a, b) => a.id - b.id);
      const slice = all.slice((page - 1) * perPage, page * perPage);
      return [
        200,
        { servers: slice.map((s) => this.serverJson(s)), meta: this.meta(page, perPage, all.length) },
      ];
    }
    throw new ApiError(404, 'not_found', `no such endpoint: ${method} ${route}`);
  }

  private network(id: number): FakeNetwork {
    const n = this.networks.get(id);
    if (!n) throw new ApiError(404, 'not_found', 'network not found');
    return n;
  }

  private routeAction(network: FakeNetwork, command: string, body: unknown): FakeAction {
    const b = (typeof body === 'object' && body !== null ? body : {}) as Record<string, unknown>;
    const destination = typeof b['destination'] === 'string' ? b['destination'] : '';
    const gateway = typeof b['gateway'] === 'string' ? b['gateway'] : '';
    const dest = cidr(destination);
    if (!dest)
      throw new ApiError(
        400,
        'invalid_input',
        'invalid input in field "destination": must be an IPv4 network',
      );
    const gw = ipv4(gateway);
    if (gw === undefined || !contains(network.ipRange, gw)) {
      throw new ApiError(
        400,
        'invalid_input',
        'invalid input in field "gateway": must be an IP of the network',
      );
    }
    if (network.locked) throw new ApiError(423, 'locked', 'network is locked');
    const busy = [...this.actions.values()].some((a) => a.networkId === network.id && a.status === 'running');
    if (busy) throw new ApiError(409, 'conflict', 'a change is currently being performed on this network');
    const idx = network.routes.findIndex((r) => r.destination === destination);
    if (command === 'add_route') {
      if (idx >= 0) throw new ApiError(400, 'invalid_input', 'destination overlaps with an existing route');
      if (network.routes.length >= this.routeLimit) {
        throw new ApiError(
          403,
          'resource_limit_exceeded',
          `network has reached its limit of ${this.routeLimit} routes`,
        );
      }
    } else if (idx < 0 || network.routes[idx]!.gateway !== gateway) {
      throw new ApiError(404, 'not_found', 'route not found');
    }
    const failWith = this.nextActionError;
    this.nextActionError = undefined;
    const action: FakeAction = {
      id: this.nextActionId++,
      command,
      status: 'running',
      progress: 0,
      started: new Date().toISOString(),
      finished: null,
      error: null,
      networkId: network.id,
      complete: () => {
        if (action.status !== 'running') return;
        action.progress = 100;
        action.finished = new Date().toISOString();
        if (failWith) {
          action.status = 'error';
          action.error = failWith;
          return;
        }
        if (command === 'add_route') network.routes.push({ destination, gateway });
        else network.routes = network.routes.filter((r) => r.destination !== destination);
        action.status = 'success';
      },
    };
    this.actions.set(action.id, action);
    if (!this.holdActions) {
      const t = setTimeout(() => {
        this.timers.delete(t);
        action.complete();
      }, this.actionDurationMs);
      this.timers.add(t);
    }
    return action;
  }

  private meta(page: number, perPage: number, total: number): unknown {
    const last = Math.max(1, Math.ceil(total / perPage));
    return {
      pagination: {
        page,
        per_page: perPage,
        previous_page: page > 1 ? page - 1 : null,
        next_page: page < last ? page + 1 : null,
        last_page: last,
        total_entries: total,
      },
    };
  }

  private networkJson(n: FakeNetwork): unknown {
    const servers = [...this.servers.values()].filter((s) => s.privateNet.some((p) => p.network === n.id));
    return {
      ...{ id: n.id, name: n.name, ip_range: n.ipRange, labels: {}, protection: { delete: false } },
      subnets: [{ type: 'cloud', ip_range: n.ipRange, network_zone: 'eu-central', gateway: '' }],
      routes: n.routes.map((r) => ({ ...r })),
      servers: servers.map((s) => s.id),
    };
  }

  private serverJson(s: FakeServer): unknown {
    const privateNet = s.privateNet.map((p) => ({ ...p, alias_ips: [], mac_address: '86:00:00:00:00:01' }));
    return { id: s.id, name: s.name, status: 'running', private_net: privateNet, labels: {} };
  }

  private actionJson(a: FakeAction): unknown {
    const { id, command, status, progress, started, finished, error } = a;
    return {
      id,
      command,
      status,
      progress,
      started,
      finished,
      error,
      resources: [{ id: a.networkId, type: 'network' }],
    };
  }
}
