// Route names ↔ nodes, as cloud-provider-azure stashes the node in the route's
// name (pkg/provider/azure_routes.go: mapNodeNameToRouteName, MapRouteNameToNodeName,
// cidrtoRfc1035), since Azure routes carry no tags. Two schemes:
//   single stack: `<node>`                (upstream before v1.24, and here for one-family nodes)
//   dual stack:   `<node>____<cidr without ':' '.' '/'>` (upstream always since v1.24)
// Ownership (R13, R21): a route is the cluster's only if its name is one of
// these schemes; the controller then also requires its prefix inside the
// cluster CIDRs before deleting it. Upstream's delete removes every route whose
// name merely *starts with* the node's name (node1 takes node10's routes); here
// a name maps to exactly one node.
import { canonicalCIDR, formatIP, parseIP, tryParseCIDR } from '../../core/cidr.ts';
import type { IPFamily } from '../../core/cidr.ts';
import type { Node, NodeLister } from '../../core/types.ts';

export const ROUTE_NAME_SEPARATOR = '____';
/** Microsoft.Network's limit on a route's name. */
export const MAX_ROUTE_NAME_LENGTH = 80;

// A Kubernetes node name (DNS-1123 subdomain), compared case-insensitively as Azure compares names.
const NODE_NAME = /^[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*$/;

/** cloud-provider-azure's cidrtoRfc1035: the CIDR with ':', '.' and '/' removed. */
export function cidrToRfc1035(cidr: string): string {
  return cidr.replace(/[:./]/g, '');
}

/** The name upstream gives the route of `cidr` to `node`; dual stack adds the CIDR. */
export function routeName(node: string, cidr: string, dualStack: boolean): string {
  return dualStack ? `${node}${ROUTE_NAME_SEPARATOR}${cidrToRfc1035(cidr)}` : node;
}

/**
 * The node a route belongs to by its name, lowercased, or undefined for a name
 * of neither scheme (someone else's route: never listed, never deleted). A
 * dual-stack name counts only if its suffix is its own prefix's, so
 * `node1____10244024` routing 10.244.5.0/24 is not ours.
 */
export function routeOwner(name: string, addressPrefix: string): string | undefined {
  const lower = name.toLowerCase();
  const parts = lower.split(ROUTE_NAME_SEPARATOR);
  if (parts.length > 2) return undefined;
  const node = parts[0]!;
  if (!NODE_NAME.test(node) || node.length > 253) return undefined;
  if (parts.length === 2) {
    // Azure keeps the prefix as written; compare with its canonical spelling too, in case one side isn't.
    const canonical = canonicalCIDR(addressPrefix);
    const suffixes = [addressPrefix, ...(canonical !== undefined ? [canonical] : [])].map((p) =>
      cidrToRfc1035(p).toLowerCase(),
    );
    if (!suffixes.includes(parts[1]!)) return undefined;
  }
  return node;
}

/** Case-insensitive route name equality (Azure resource names are). */
export function sameName(a: string | undefined, b: string | undefined): boolean {
  return a !== undefined && b !== undefined && a.toLowerCase() === b.toLowerCase();
}

export function familyOf(cidr: string): IPFamily | undefined {
  return tryParseCIDR(cidr)?.family;
}

/** IP text in one canonical spelling (RFC 5952 for IPv6), for comparing next hops. */
export function canonicalIP(text: string): string | undefined {
  const ip = parseIP(text);
  return ip === undefined ? undefined : formatIP(ip.family, ip.ip);
}

/**
 * The next hop for a route of `family` to `node`: its first InternalIP of that
 * family, as upstream picks the node's private IP of the route's family.
 */
export function nextHopFor(node: Node, family: IPFamily): string | undefined {
  for (const a of node.status?.addresses ?? []) {
    if (a.type === 'InternalIP' && parseIP(a.address)?.family === family) return a.address;
  }
  return undefined;
}

/** A node with pod CIDRs of both families gets dual-stack route names. */
export function isDualStack(node: Node): boolean {
  const families = new Set((node.spec?.podCIDRs ?? []).map(familyOf).filter((f) => f !== undefined));
  return families.size > 1;
}

/** Node names lowercased → the node, for mapping route names (case-insensitive) to nodes. */
export function nodesByLowerName(nodes: NodeLister): Map<string, Node> {
  const out = new Map<string, Node>();
  for (const node of nodes.list()) {
    const name = node.metadata?.name;
    if (name !== undefined) out.set(name.toLowerCase(), node);
  }
  return out;
}
