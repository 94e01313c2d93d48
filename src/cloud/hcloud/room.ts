// R115, R118: the room of the Hetzner Cloud network that holds the cluster's routes. Every
// route of the network counts against its limit (100 routes per network, Hetzner's
// documented limit), whoever made it.
import type { RouteTableRoom } from '../../core/types.ts';
import type { ApiNetwork } from './api.ts';

/** Routes per network (docs.hetzner.com, Networks: limits). */
export const HCLOUD_DEFAULT_ROUTE_LIMIT = 100;

/** The network as listRoutes read it, kept in the reconcile's scratch for routeTableRoom. */
export class ListedNetwork {
  static readonly key = 'hcloud:listed-network';
  readonly network: ApiNetwork;
  constructor(network: ApiNetwork) {
    this.network = network;
  }
}

export function networkRoom(network: ApiNetwork, limit = HCLOUD_DEFAULT_ROUTE_LIMIT): RouteTableRoom {
  return {
    container: `network ${network.name} (${network.id})`,
    limit,
    used: network.routes.length,
    raise:
      'remove routes the network no longer needs, or ask Hetzner support whether the routes-per-network limit can be raised (then set "routeLimit" in the cloud config to match)',
  };
}
