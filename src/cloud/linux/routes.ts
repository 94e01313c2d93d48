// `Routes` for a Linux router: one `<pod CIDR> via <node InternalIP>` route per
// pod CIDR in one routing table, marked with our routing protocol number so
// that listing and deleting never touch a route someone else added.
import { PermanentError, throwIfAborted } from '../../core/errors.ts';
import type { CallOptions, NodeAddress, NodeLister, Route, Routes } from '../../core/types.ts';
import type { LinuxConfig } from './config.ts';
import { createIpRunner } from './exec.ts';
import type { IpRunner } from './exec.ts';
import {
  canonicalIp,
  cidrFamily,
  classifyIpError,
  deleteArgs,
  ipFamily,
  isEmptyListing,
  isMissingRoute,
  isUndeliverableType,
  listArgs,
  parseRouteJson,
  replaceArgs,
} from './ip.ts';
import type { Family, IpRoute } from './ip.ts';

const FAMILIES: readonly Family[] = [4, 6];

export class LinuxRoutes implements Routes {
  readonly #config: LinuxConfig;
  readonly #nodes: NodeLister;
  readonly #run: IpRunner;

  /** `runner` replaces execFile of `config.ipCommand`, for tests. */
  constructor(config: LinuxConfig, nodes: NodeLister, runner?: IpRunner) {
    this.#config = config;
    this.#nodes = nodes;
    this.#run = runner ?? createIpRunner(config.ipCommand);
  }

  get config(): LinuxConfig {
    return this.#config;
  }

  // The table and protocol number scope the routes; the cluster name has no
  // place to live in a kernel route, so one (table, protocol) serves one cluster.
  async listRoutes(_clusterName: string, opts: CallOptions): Promise<Route[]> {
    throwIfAborted(opts.signal);
    const byGateway = this.#gatewayIndex();
    const lists = await Promise.all(FAMILIES.map((f) => this.#list(f, opts.signal, {})));
    return lists.flat().map((r) => toRoute(r, byGateway));
  }

  async createRoute(
    _clusterName: string,
    _nameHint: string,
    route: Readonly<Route>,
    opts: CallOptions,
  ): Promise<void> {
    throwIfAborted(opts.signal);
    const dst = route.destinationCIDR;
    const family = this.#familyOf(dst, 'create');
    const gateway = this.#gatewayFor(route, family);
    await this.#refuseForeign(dst, family, opts.signal);
    throwIfAborted(opts.signal);
    try {
      await this.#run(replaceArgs(this.#config, family, dst, gateway), opts.signal);
    } catch (err) {
      throw this.#mapError(
        err,
        opts.signal,
        `create route ${dst} via ${gateway} for node ${route.targetNode}`,
      );
    }
  }

  async deleteRoute(_clusterName: string, route: Readonly<Route>, opts: CallOptions): Promise<void> {
    throwIfAborted(opts.signal);
    const dst = route.destinationCIDR;
    const family = this.#familyOf(dst, 'delete');
    // listRoutes puts a single next hop into targetNodeAddresses; matching on it
    // keeps a replacement route to the node's new address from being deleted.
    const gateway = pickAddress(route.targetNodeAddresses, family);
    throwIfAborted(opts.signal);
    try {
      await this.#run(deleteArgs(this.#config, family, dst, gateway), opts.signal);
    } catch (err) {
      if (isMissingRoute(err)) return; // R3
      throw this.#mapError(err, opts.signal, `delete route ${route.name || dst}`);
    }
  }

  async #list(
    family: Family,
    signal: AbortSignal,
    opts: { exact?: string; anyProtocol?: boolean },
  ): Promise<IpRoute[]> {
    let stdout: string;
    try {
      stdout = await this.#run(listArgs(this.#config, family, opts), signal);
    } catch (err) {
      if (isEmptyListing(err)) return [];
      throw this.#mapError(err, signal, `list IPv${family} routes in table ${this.#config.table}`);
    }
    return parseRouteJson(stdout, family);
  }

  /**
   * `replace` would silently take over a route another tool put in the table for
   * the same destination; refuse instead, so a hand-made route is never clobbered.
   */
  async #refuseForeign(dst: string, family: Family, signal: AbortSignal): Promise<void> {
    const [all, ours] = await Promise.all([
      this.#list(family, signal, { exact: dst, anyProtocol: true }),
      this.#list(family, signal, { exact: dst }),
    ]);
    if (all.length <= ours.length) return;
    const mine = new Set(ours.map((r) => describe({ ...r, protocol: undefined })));
    const foreign = all
      .filter((r) => !mine.has(describe({ ...r, protocol: undefined })))
      // ip omits the protocol when it is boot, the default of `ip route add`.
      .map((r) => describe({ ...r, protocol: r.protocol ?? 'boot' }));
    throw new PermanentError(
      `table ${this.#config.table} already has a route for ${dst} that this controller does not own ` +
        `(protocol other than ${this.#config.protocol}: ${foreign.join('; ') || 'unknown'}); ` +
        `remove it or configure another table`,
    );
  }

  #familyOf(dst: string, op: string): Family {
    const family = dst.includes('/') ? cidrFamily(dst) : undefined;
    if (family === undefined) {
      throw new PermanentError(`cannot ${op} route: destination ${JSON.stringify(dst)} is not a valid CIDR`);
    }
    return family;
  }

  #gatewayFor(route: Readonly<Route>, family: Family): string {
    const fromRoute = route.targetNodeAddresses.length > 0;
    const node = fromRoute ? undefined : this.#nodes.get(route.targetNode);
    const addresses = fromRoute ? route.targetNodeAddresses : (node?.status?.addresses ?? []);
    const gateway = pickAddress(addresses, family, true);
    if (gateway !== undefined) return gateway;
    const known = fromRoute || node !== undefined ? '' : ' (node not in the node cache)';
    throw new PermanentError(
      `cannot create route ${route.destinationCIDR}: node ${route.targetNode}${known} has no ` +
        `IPv${family} InternalIP address to use as next hop; the linux provider routes each pod CIDR ` +
        `via the node's InternalIP of the same family`,
    );
  }

  /** Canonical InternalIP → node name; lowest name wins when nodes share an address. */
  #gatewayIndex(): Map<string, string> {
    const index = new Map<string, string>();
    const nodes = [...this.#nodes.list()].sort((a, b) =>
      (a.metadata?.name ?? '').localeCompare(b.metadata?.name ?? ''),
    );
    for (const node of nodes) {
      const name = node.metadata?.name;
      if (!name) continue;
      for (const a of node.status?.addresses ?? []) {
        if (a.type !== 'InternalIP') continue;
        const ip = canonicalIp(a.address);
        if (ip !== undefined && !index.has(ip)) index.set(ip, name);
      }
    }
    return index;
  }

  #mapError(err: unknown, signal: AbortSignal, what: string): Error {
    throwIfAborted(signal);
    if (err instanceof Error && err.name === 'AbortError') return err;
    return classifyIpError(err, what);
  }
}

/** First InternalIP of the family (canonical), else, unless internalOnly, any address of it. */
function pickAddress(
  addresses: readonly NodeAddress[],
  family: Family,
  internalOnly = false,
): string | undefined {
  const ofFamily = addresses
    .map((a) => ({ type: a.type, ip: canonicalIp(a.address) }))
    .filter((a): a is { type: string; ip: string } => a.ip !== undefined && ipFamily(a.ip) === family);
  const internal = ofFamily.find((a) => a.type === 'InternalIP');
  return (internal ?? (internalOnly ? undefined : ofFamily[0]))?.ip;
}

function describe(r: IpRoute): string {
  const via = r.gateways.length > 0 ? ` via ${r.gateways.join(',')}` : '';
  const proto = r.protocol !== undefined ? ` proto ${r.protocol}` : '';
  const metric = r.metric !== undefined ? ` metric ${r.metric}` : '';
  return `${r.type === 'unicast' ? '' : `${r.type} `}${r.dst}${via}${proto}${metric}`;
}

/** R1: a next hop that is no node's InternalIP gives targetNode '' and blackhole. */
export function toRoute(r: IpRoute, byGateway: ReadonlyMap<string, string>): Route {
  const base = { name: describe(r), enableNodeAddresses: false, destinationCIDR: r.dst };
  if (isUndeliverableType(r.type) || r.gateways.length === 0) {
    return { ...base, targetNode: '', targetNodeAddresses: [], blackhole: true };
  }
  const gateways = r.gateways.map((g) => canonicalIp(g) ?? g);
  const nodes = new Set(gateways.map((g) => byGateway.get(g)));
  if (gateways.length === 1) {
    const [gateway] = gateways as [string];
    const node = byGateway.get(gateway);
    return {
      ...base,
      targetNode: node ?? '',
      targetNodeAddresses: [{ type: 'InternalIP', address: gateway }],
      blackhole: node === undefined,
    };
  }
  // Multipath (never created here): one node only if every next hop is that node.
  const [only] = nodes;
  const single = nodes.size === 1 && only !== undefined ? only : '';
  const noneKnown = nodes.size === 1 && only === undefined;
  return { ...base, targetNode: single, targetNodeAddresses: [], blackhole: noneKnown };
}
