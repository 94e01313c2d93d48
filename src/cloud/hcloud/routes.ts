// Routes of one Hetzner Cloud network: destination → gateway, where the
// gateway is the private IP of a node's server in that network.
import { AbortError, PermanentError, RetryableError, throwIfAborted } from '../../core/errors.ts';
import type { CallOptions, NodeLister, Route, Routes, RouteTableRoom } from '../../core/types.ts';
import type { ApiNetwork, ApiRoute, ApiServer } from './api.ts';
import type { HcloudClient } from './client.ts';
import { canonicalIPv4, canonicalIPv4Cidr } from './ipv4.ts';
import { ListedNetwork, networkRoom } from './room.ts';

export interface HcloudRoutesOptions {
  readonly client: HcloudClient;
  /** Network ID or name from the cloud config. */
  readonly network: number | string;
  readonly nodes: NodeLister;
  /** R118: routes the network allows; default Hetzner's 100. */
  readonly routeLimit?: number;
}

/** Server ID → private IP in our network; null: the server exists but is not attached. */
type ServerIPs = Map<number, string | null>;

const SCRATCH_SERVER_IPS = 'hcloud:server-ips';
const PROVIDER_ID = /^hcloud:\/\/(\d+)$/;

/** Server ID from `hcloud://<id>`; undefined for anything else (e.g. hrobot:// servers). */
export function serverIdFromProviderID(providerID: string | undefined): number | undefined {
  const m = PROVIDER_ID.exec(providerID?.trim() ?? '');
  if (!m) return undefined;
  const id = Number(m[1]);
  return Number.isSafeInteger(id) && id > 0 ? id : undefined;
}

/** Listed name `<gateway>-<destination>` as in the official CCM; deleteRoute reads the gateway back. */
function routeName(r: ApiRoute): string {
  return `${r.gateway}-${r.destination}`;
}

function gatewayFromName(name: string): string | undefined {
  const i = name.indexOf('-');
  return i > 0 ? canonicalIPv4(name.slice(0, i)) : undefined;
}

function privateIPIn(server: ApiServer, networkId: number): string | null {
  const pn = server.privateNet.find((p) => p.network === networkId);
  return pn ? canonicalIPv4(pn.ip) : null;
}

/**
 * FIFO lock. Hetzner rejects a second route action on a network while one is
 * running (`conflict`), so with 200 calls in flight (R5) mutations queue here.
 */
class NetworkLock {
  private tail: Promise<void> = Promise.resolve();

  async run<T>(signal: AbortSignal, fn: () => Promise<T>): Promise<T> {
    const prev = this.tail;
    let release = (): void => {};
    const mine = new Promise<void>((resolve) => (release = resolve));
    this.tail = prev.then(() => mine);
    try {
      await new Promise<void>((resolve, reject) => {
        const onAbort = (): void =>
          reject(new AbortError('The operation was aborted', { cause: signal.reason }));
        if (signal.aborted) return onAbort();
        signal.addEventListener('abort', onAbort, { once: true });
        void prev.then(() => {
          signal.removeEventListener('abort', onAbort);
          resolve();
        });
      });
      return await fn();
    } finally {
      release();
    }
  }
}

export class HcloudRoutes implements Routes {
  private readonly client: HcloudClient;
  private readonly network: number | string;
  private readonly nodes: NodeLister;
  private readonly lock = new NetworkLock();
  private networkId: number | undefined;
  private readonly routeLimit: number | undefined;

  constructor(opts: HcloudRoutesOptions) {
    this.client = opts.client;
    this.routeLimit = opts.routeLimit;
    this.network = opts.network;
    this.nodes = opts.nodes;
  }

  async listRoutes(_clusterName: string, opts: CallOptions): Promise<Route[]> {
    const { signal } = opts;
    throwIfAborted(signal);
    const networkId = await this.resolveNetworkId(signal);
    const [network, servers] = await Promise.all([
      this.client.getNetwork(networkId, signal),
      this.client.listServers(signal),
    ]);
    opts.reconcile.scratch.set(ListedNetwork.key, new ListedNetwork(network));
    const ips = this.serverIPs(opts);
    const serverByIP = new Map<string, ApiServer>();
    for (const s of servers) {
      const ip = privateIPIn(s, networkId);
      ips.set(s.id, ip);
      if (ip !== null) serverByIP.set(ip, s);
    }
    const nodeByServer = new Map<number, string>();
    for (const node of this.nodes.list()) {
      const id = serverIdFromProviderID(node.spec?.providerID);
      const name = node.metadata?.name;
      if (id !== undefined && name) nodeByServer.set(id, name);
    }
    return network.routes.map((r) => {
      const server = serverByIP.get(canonicalIPv4(r.gateway));
      // R1: a gateway without server or node is reported, never an error.
      const targetNode = server ? (nodeByServer.get(server.id) ?? '') : '';
      return {
        name: routeName(r),
        targetNode,
        targetNodeAddresses: [],
        enableNodeAddresses: false,
        destinationCIDR: r.destination,
        blackhole: targetNode === '',
      };
    });
  }

  /** R115: the network listRoutes just read, against its limit; no call of its own. */
  routeTableRoom(_clusterName: string, opts: CallOptions): Promise<RouteTableRoom | undefined> {
    const listed = opts.reconcile.scratch.get(ListedNetwork.key);
    return Promise.resolve(
      listed instanceof ListedNetwork ? networkRoom(listed.network, this.routeLimit) : undefined,
    );
  }

  async createRoute(
    _clusterName: string,
    _nameHint: string,
    route: Readonly<Route>,
    opts: CallOptions,
  ): Promise<Route> {
    const { signal } = opts;
    throwIfAborted(signal);
    const destination = canonicalIPv4Cidr(route.destinationCIDR);
    if (destination === undefined) {
      const why = route.destinationCIDR.includes(':')
        ? 'Hetzner Cloud network routes support IPv4 destinations only'
        : 'not a valid IPv4 CIDR';
      throw new PermanentError(
        `hcloud: cannot create route ${route.destinationCIDR} for node ${route.targetNode}: ${why}`,
      );
    }
    const networkId = await this.resolveNetworkId(signal);
    const gateway = await this.gatewayFor(route.targetNode, networkId, opts);
    await this.lock.run(signal, async () => {
      // Fresh state inside the lock: the listed snapshot may predate our own
      // earlier mutations or someone else's.
      const network = await this.client.getNetwork(networkId, signal);
      const existing = findRoute(network, destination);
      if (existing && canonicalIPv4(existing.gateway) === gateway) return;
      if (existing) {
        throwIfAborted(signal);
        const del = await this.client.deleteRoute(networkId, existing, signal);
        if (del)
          await this.client.waitForAction(
            del,
            `replace route ${existing.destination} via ${existing.gateway}`,
            signal,
          );
      }
      throwIfAborted(signal);
      const add: ApiRoute = { destination, gateway };
      const action = await this.client.addRoute(networkId, add, signal);
      await this.client.waitForAction(
        action,
        `add route ${destination} via ${gateway} (node ${route.targetNode})`,
        signal,
      );
    });
    // R66: as listRoutes reports it; its name carries the gateway deleteRoute checks.
    return {
      name: routeName({ destination, gateway }),
      targetNode: route.targetNode,
      targetNodeAddresses: [],
      enableNodeAddresses: false,
      destinationCIDR: destination,
      blackhole: false,
    };
  }

  async deleteRoute(_clusterName: string, route: Readonly<Route>, opts: CallOptions): Promise<void> {
    const { signal } = opts;
    throwIfAborted(signal);
    const destination = canonicalIPv4Cidr(route.destinationCIDR);
    // The network can hold no such route, so it is already gone (R3).
    if (destination === undefined) return;
    const listedGateway = gatewayFromName(route.name);
    const networkId = await this.resolveNetworkId(signal);
    await this.lock.run(signal, async () => {
      const network = await this.client.getNetwork(networkId, signal);
      const existing = findRoute(network, destination);
      if (!existing) return;
      // Replaced since it was listed: the route we were asked to delete is gone,
      // and the new one must survive.
      if (listedGateway !== undefined && canonicalIPv4(existing.gateway) !== listedGateway) return;
      throwIfAborted(signal);
      const action = await this.client.deleteRoute(networkId, existing, signal);
      if (action)
        await this.client.waitForAction(
          action,
          `delete route ${existing.destination} via ${existing.gateway}`,
          signal,
        );
    });
  }

  private async resolveNetworkId(signal: AbortSignal): Promise<number> {
    if (this.networkId !== undefined) return this.networkId;
    if (typeof this.network === 'number') return (this.networkId = this.network);
    const found = await this.client.findNetworkByName(this.network, signal);
    if (!found) {
      throw new PermanentError(`hcloud: network "${this.network}" not found in the project of HCLOUD_TOKEN`);
    }
    return (this.networkId = found.id);
  }

  private serverIPs(opts: CallOptions): ServerIPs {
    const scratch = opts.reconcile.scratch;
    const cached = scratch.get(SCRATCH_SERVER_IPS);
    if (cached instanceof Map) return cached as ServerIPs;
    const fresh: ServerIPs = new Map();
    scratch.set(SCRATCH_SERVER_IPS, fresh);
    return fresh;
  }

  /** The target node's server's private IP in the network, cached per reconcile. */
  private async gatewayFor(nodeName: string, networkId: number, opts: CallOptions): Promise<string> {
    const node = this.nodes.get(nodeName);
    if (!node) throw new PermanentError(`hcloud: node ${nodeName} is not in the node cache`);
    const providerID = node.spec?.providerID ?? '';
    const serverId = serverIdFromProviderID(providerID);
    if (serverId === undefined) {
      const why =
        providerID === ''
          ? 'has no spec.providerID yet'
          : `has providerID "${providerID}"; routes need a cloud server (hcloud://<server-id>)`;
      throw new PermanentError(`hcloud: node ${nodeName} ${why}`);
    }
    const ips = this.serverIPs(opts);
    let ip = ips.get(serverId);
    if (ip === undefined) {
      const server = await this.client.getServer(serverId, opts.signal);
      if (!server) {
        throw new PermanentError(`hcloud: server ${serverId} of node ${nodeName} not found (not_found)`);
      }
      ip = privateIPIn(server, networkId);
      ips.set(serverId, ip);
    }
    if (ip === null) {
      // Attaching a server is an action of its own and may still be running.
      throw new RetryableError(
        `hcloud: server ${serverId} of node ${nodeName} is not attached to network ${networkId}`,
      );
    }
    return ip;
  }
}

function findRoute(network: ApiNetwork, canonicalDestination: string): ApiRoute | undefined {
  return network.routes.find((r) => canonicalIPv4Cidr(r.destination) === canonicalDestination);
}
