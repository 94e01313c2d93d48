// The one definition of a wrong delete, shared by the simulator (src/sim/run.ts)
// and the churn benchmark: deleting a route a node present at that moment
// still needs.
import { canonicalCIDR } from '../core/cidr.ts';
import type { Node, NodeAddress, Route } from '../core/types.ts';

const internalAddress = (a: readonly NodeAddress[] | undefined): string | undefined =>
  a?.find((x) => x.type === 'InternalIP')?.address;

/**
 * Whether `route` is one `node` needs right now (deleting it would unroute the
 * node): one of its pod CIDRs (compared canonically), not a blackhole, and, if
 * the route names an InternalIP, the node's current one.
 */
export function neededBy(node: Node | undefined, route: Readonly<Route>): boolean {
  if (node === undefined || route.blackhole) return false;
  const cidr = canonicalCIDR(route.destinationCIDR);
  if (cidr === undefined || !(node.spec?.podCIDRs ?? []).some((p) => canonicalCIDR(p) === cidr)) return false;
  const target = internalAddress(route.targetNodeAddresses);
  return target === undefined || internalAddress(node.status?.addresses) === target;
}
