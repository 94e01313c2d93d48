// The Neutron v2.0 calls the routes need, hand-written like keystone.ts (no maintained
// OpenStack SDK for Node.js): routers (their `routes` and `revision_number`), the
// `extraroute-atomic` add/remove calls, ports (fixed IPs, port security, allowed address
// pairs) and the extension list. Port lists follow Neutron's `next` links to the
// last page (list()). Every request carries the Keystone token; a 401 renews it
// once and repeats the request, which Neutron refused without acting on it. No other retry
// and no sleep here (R6): failures go to the controller as typed errors (errors.ts).
import { PermanentError, throwIfAborted } from '../../core/errors.ts';
import type { FetchLike } from '../../platform/http-fetch.ts';
import { httpError, retryAfter, transportError } from './errors.ts';
import type { Keystone } from './keystone.ts';

export interface ExtraRoute {
  readonly destination: string;
  readonly nexthop: string;
}

export interface Router {
  readonly id: string;
  readonly routes: readonly ExtraRoute[];
  /** Absent on a cloud without standard-attr-revisions. */
  readonly revision: number | undefined;
}

export interface AddressPair {
  readonly ip_address: string;
  readonly mac_address?: string;
}

export interface Port {
  readonly id: string;
  readonly networkId: string;
  readonly fixedIps: readonly string[];
  /** undefined without the port-security extension: treated as on, like Neutron's default. */
  readonly portSecurity: boolean | undefined;
  readonly pairs: readonly AddressPair[];
  readonly revision: number | undefined;
}

interface Request {
  readonly method: 'GET' | 'PUT';
  /** Below /v2.0, e.g. `/routers/<id>`. */
  readonly path: string;
  readonly what: string;
  readonly body?: unknown;
  readonly ifMatchRevision?: number;
  readonly signal: AbortSignal;
}

function asRoutes(v: unknown): ExtraRoute[] {
  if (!Array.isArray(v)) return [];
  return v
    .filter(
      (r): r is { destination: string; nexthop: string } =>
        typeof r?.destination === 'string' && typeof r?.nexthop === 'string',
    )
    .map((r) => ({ destination: r.destination, nexthop: r.nexthop }));
}

function asRouter(body: unknown, what: string): Router {
  const r = (body as { router?: { id?: unknown; routes?: unknown; revision_number?: unknown } })?.router;
  if (typeof r !== 'object' || r === null || typeof r.id !== 'string') {
    throw new PermanentError(`${what}: the answer has no router`);
  }
  return {
    id: r.id,
    routes: asRoutes(r.routes),
    revision: typeof r.revision_number === 'number' ? r.revision_number : undefined,
  };
}

function asPort(p: Record<string, unknown>): Port {
  const fixed = Array.isArray(p['fixed_ips']) ? (p['fixed_ips'] as { ip_address?: unknown }[]) : [];
  const pairs = Array.isArray(p['allowed_address_pairs'])
    ? (p['allowed_address_pairs'] as AddressPair[])
    : [];
  return {
    id: String(p['id']),
    networkId: String(p['network_id'] ?? ''),
    fixedIps: fixed.map((f) => f.ip_address).filter((a): a is string => typeof a === 'string'),
    portSecurity: typeof p['port_security_enabled'] === 'boolean' ? p['port_security_enabled'] : undefined,
    pairs: pairs.filter((a) => typeof a?.ip_address === 'string'),
    revision: typeof p['revision_number'] === 'number' ? p['revision_number'] : undefined,
  };
}

/** The `href` of a `<collection>_links` entry with `rel: next`, if any. */
export function nextLink(links: unknown): string | undefined {
  if (!Array.isArray(links)) return undefined;
  for (const l of links as { rel?: unknown; href?: unknown }[]) {
    if (l?.rel === 'next' && typeof l.href === 'string' && l.href !== '') return l.href;
  }
  return undefined;
}

/** What the routes use of Neutron (the port of routes.ts and pairs.ts; NeutronClient is the adapter). */
export type NeutronApi = Pick<
  NeutronClient,
  | 'extensions'
  | 'getRouter'
  | 'setRoutes'
  | 'addExtraRoutes'
  | 'removeExtraRoutes'
  | 'routerNetworkIds'
  | 'portsByIp'
  | 'setAddressPairs'
>;

export class NeutronClient {
  private readonly keystone: Keystone;
  private readonly fetchImpl: FetchLike;
  private readonly userAgent: string;

  constructor(keystone: Keystone, fetch: FetchLike, userAgent = 'cloud-route-controller (openstack)') {
    this.keystone = keystone;
    this.fetchImpl = fetch;
    this.userAgent = userAgent;
  }

  async extensions(signal: AbortSignal): Promise<Set<string>> {
    const body = (await this.request({
      method: 'GET',
      path: '/extensions',
      what: 'list Neutron extensions',
      signal,
    })) as {
      extensions?: { alias?: unknown }[];
    };
    return new Set(
      (body.extensions ?? []).map((e) => e.alias).filter((a): a is string => typeof a === 'string'),
    );
  }

  async getRouter(id: string, signal: AbortSignal): Promise<Router> {
    const what = `get router ${id}`;
    return asRouter(
      await this.request({ method: 'GET', path: `/routers/${encodeURIComponent(id)}`, what, signal }),
      what,
    );
  }

  /** Replaces the whole route list; with a revision, only if the router still has it (412 else). */
  async setRoutes(
    id: string,
    routes: readonly ExtraRoute[],
    revision: number | undefined,
    signal: AbortSignal,
  ): Promise<Router> {
    const what =
      `update router ${id} with ${routes.length} routes` +
      (revision !== undefined ? ` (If-Match revision ${revision})` : '');
    const body = await this.request({
      method: 'PUT',
      path: `/routers/${encodeURIComponent(id)}`,
      what,
      body: { router: { routes } },
      ...(revision !== undefined ? { ifMatchRevision: revision } : {}),
      signal,
    });
    return asRouter(body, what);
  }

  /** extraroute-atomic: adds routes in one transaction; present ones are left as they are. */
  async addExtraRoutes(id: string, routes: readonly ExtraRoute[], signal: AbortSignal): Promise<Router> {
    return this.extraRoutes('add', id, routes, signal);
  }

  /** extraroute-atomic: removes exactly these (destination, nexthop) pairs; absent ones are no error. */
  async removeExtraRoutes(id: string, routes: readonly ExtraRoute[], signal: AbortSignal): Promise<Router> {
    return this.extraRoutes('remove', id, routes, signal);
  }

  /** The networks the router has interfaces on (where nodes' ports are looked up). */
  async routerNetworkIds(routerId: string, signal: AbortSignal): Promise<string[]> {
    const ports = await this.list<{ network_id?: unknown }>(
      `/ports?device_id=${encodeURIComponent(routerId)}&fields=network_id`,
      'ports',
      `list the ports of router ${routerId}`,
      signal,
    );
    return [...new Set(ports.map((p) => p.network_id).filter((n): n is string => typeof n === 'string'))];
  }

  /** Ports with `ip` as a fixed IP on one of `networkIds`. */
  async portsByIp(ip: string, networkIds: readonly string[], signal: AbortSignal): Promise<Port[]> {
    const query = [
      `fixed_ips=${encodeURIComponent(`ip_address=${ip}`)}`,
      ...networkIds.map((n) => `network_id=${encodeURIComponent(n)}`),
    ];
    const ports = await this.list<Record<string, unknown>>(
      `/ports?${query.join('&')}`,
      'ports',
      `find the port of ${ip}`,
      signal,
    );
    return ports.map(asPort);
  }

  /** Replaces a port's allowed address pairs, only if the port still has `revision` (412 else). */
  async setAddressPairs(port: Port, pairs: readonly AddressPair[], signal: AbortSignal): Promise<void> {
    await this.request({
      method: 'PUT',
      path: `/ports/${encodeURIComponent(port.id)}`,
      what: `update the allowed address pairs of port ${port.id} (${pairs.map((p) => p.ip_address).join(', ') || 'none'})`,
      body: { port: { allowed_address_pairs: pairs } },
      ...(port.revision !== undefined ? { ifMatchRevision: port.revision } : {}),
      signal,
    });
  }

  /**
   * Every page of a collection: Neutron pages lists when the cloud sets
   * `pagination_max_limit` (or the client a `limit`), answering the first page
   * with a `<collection>_links` entry `rel: next`. Its query (filters, limit,
   * marker) is applied to this request's path below the catalog's endpoint,
   * not followed as an absolute URL: Neutron builds the link from the host it
   * was called as, which behind a proxy is not always the catalog's.
   */
  private async list<T>(path: string, collection: string, what: string, signal: AbortSignal): Promise<T[]> {
    const base = path.split('?')[0]!;
    const out: T[] = [];
    const seen = new Set<string>();
    let next: string | undefined = path;
    for (let page = 1; next !== undefined; page++) {
      const body = (await this.request({
        method: 'GET',
        path: next,
        what: page === 1 ? what : `${what} (page ${page})`,
        signal,
      })) as Record<string, unknown>;
      const items = body[collection];
      if (Array.isArray(items)) out.push(...(items as T[]));
      const href = nextLink(body[`${collection}_links`]);
      next = href === undefined ? undefined : `${base}${new URL(href, 'http://neutron.invalid').search}`;
      if (next !== undefined && seen.has(next)) {
        throw new PermanentError(
          `${what}: Neutron's next link repeats a page (${next}); the list would not end`,
        );
      }
      if (next !== undefined) seen.add(next);
    }
    return out;
  }

  private async extraRoutes(
    op: 'add' | 'remove',
    id: string,
    routes: readonly ExtraRoute[],
    signal: AbortSignal,
  ): Promise<Router> {
    const list = routes.map((r) => `${r.destination} via ${r.nexthop}`).join(', ');
    const what = `${op}_extraroutes ${list} on router ${id}`;
    const body = await this.request({
      method: 'PUT',
      path: `/routers/${encodeURIComponent(id)}/${op}_extraroutes`,
      what,
      body: { router: { routes } },
      signal,
    });
    return asRouter(body, what);
  }

  private async request(req: Request): Promise<unknown> {
    for (let attempt = 0; ; attempt++) {
      throwIfAborted(req.signal);
      const token = await this.keystone.token(req.signal);
      const headers: Record<string, string> = {
        'X-Auth-Token': token.id,
        Accept: 'application/json',
        'User-Agent': this.userAgent,
      };
      if (req.body !== undefined) headers['Content-Type'] = 'application/json';
      if (req.ifMatchRevision !== undefined) headers['If-Match'] = `revision_number=${req.ifMatchRevision}`;
      let res;
      try {
        res = await this.fetchImpl(`${token.networkUrl}${req.path}`, {
          method: req.method,
          headers,
          ...(req.body !== undefined ? { body: JSON.stringify(req.body) } : {}),
          signal: req.signal,
        });
      } catch (err) {
        throw transportError(req.what, err, req.signal);
      }
      const text = await res.text();
      if (res.status === 401 && attempt === 0) {
        this.keystone.invalidate(token);
        continue;
      }
      if (!res.ok) throw httpError(req.what, res.status, text, retryAfter(res.headers.get('retry-after')));
      if (text === '') return {};
      try {
        return JSON.parse(text) as unknown;
      } catch {
        throw new PermanentError(`${req.what}: the answer is not JSON`);
      }
    }
  }
}
