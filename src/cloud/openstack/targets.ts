// Next hops ↔ nodes. A route on the router is (destination, nexthop); like
// cloud-provider-openstack, the next hop is the node's InternalIP of the route's family and
// listRoutes finds the node by that address. The listed route's name carries the next hop
// (`<destination> via <nexthop>`), so a delete removes exactly the route it was given (R3)
// even after the node changed its address or was deleted.
import { canonicalCIDR, formatIP, parseIP, tryParseCIDR } from '../../core/cidr.ts';
import type { IPFamily } from '../../core/cidr.ts';
import type { Node, NodeAddress, NodeLister, Route } from '../../core/types.ts';
import type { ExtraRoute } from './neutron.ts';

const VIA = ' via ';

/** IP text in one canonical spelling (RFC 5952 for IPv6), for comparing next hops. */
export function canonicalIP(text: string): string | undefined {
  const ip = parseIP(text.trim());
  return ip === undefined ? undefined : formatIP(ip.family, ip.ip);
}

export function familyOf(cidr: string): IPFamily | undefined {
  return tryParseCIDR(cidr)?.family;
}

/** The node's first InternalIP of the family, as upstream picks the next hop. */
export function nextHopFor(addresses: readonly NodeAddress[], family: IPFamily): string | undefined {
  for (const a of addresses) {
    if (a.type === 'InternalIP' && parseIP(a.address)?.family === family) return a.address;
  }
  return undefined;
}

export function routeName(r: ExtraRoute): string {
  return `${r.destination}${VIA}${r.nexthop}`;
}

/** The (destination, nexthop) a listed route stands for, from its name; undefined if not ours. */
export function extraRouteOf(route: Readonly<Route>): ExtraRoute | undefined {
  const at = route.name.lastIndexOf(VIA);
  if (at === -1) return undefined;
  const destination = route.name.slice(0, at);
  const nexthop = route.name.slice(at + VIA.length);
  if (
    canonicalIP(nexthop) === undefined ||
    canonicalCIDR(destination) !== canonicalCIDR(route.destinationCIDR)
  ) {
    return undefined;
  }
  return { destination, nexthop };
}

/** Same destination (canonical CIDR) and same next hop (canonical IP). */
export function sameRoute(a: ExtraRoute, b: ExtraRoute): boolean {
  return sameDestination(a, b) && canonicalIP(a.nexthop) === canonicalIP(b.nexthop);
}

export function sameDestination(a: ExtraRoute, b: ExtraRoute): boolean {
  const d = canonicalCIDR(a.destination);
  return d !== undefined && d === canonicalCIDR(b.destination);
}

/**
 * Canonical IP → node, InternalIPs first: an address that is one node's InternalIP and
 * another's ExternalIP (a shared NAT address) names the first.
 */
export function nodesByAddress(nodes: NodeLister): Map<string, Node> {
  const out = new Map<string, Node>();
  const all = nodes.list();
  for (const internal of [true, false]) {
    for (const node of all) {
      for (const a of node.status?.addresses ?? []) {
        if ((a.type === 'InternalIP') !== internal) continue;
        const ip = canonicalIP(a.address);
        if (ip !== undefined && !out.has(ip)) out.set(ip, node);
      }
    }
  }
  return out;
}

/**
 * A router route as the controller sees it. The target is the node with the next hop among
 * its addresses; with none the route is a blackhole (as upstream reports it), and so is one
 * whose next hop is no longer the node's next hop for the family (its InternalIP changed):
 * R20 deletes and re-creates it in the same reconcile.
 */
export function toRoute(r: ExtraRoute, byAddress: ReadonlyMap<string, Node>): Route {
  const hop = canonicalIP(r.nexthop);
  const node = hop !== undefined ? byAddress.get(hop) : undefined;
  const family = familyOf(r.destination);
  const want =
    node !== undefined && family !== undefined ? nextHopFor(node.status?.addresses ?? [], family) : undefined;
  return {
    name: routeName(r),
    targetNode: node?.metadata?.name ?? '',
    targetNodeAddresses: [],
    enableNodeAddresses: false,
    destinationCIDR: r.destination,
    blackhole: node === undefined || want === undefined || canonicalIP(want) !== hop,
  };
}
