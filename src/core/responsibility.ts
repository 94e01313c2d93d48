import { containsIP, firstAddress, lastAddress, type Cidr } from './cidr.ts';

/**
 * R13 (upstream isResponsibleForRoute): a route is managed iff a cluster CIDR of
 * its family contains its first or last address. Checking both ends also claims
 * routes wider than a cluster CIDR that start inside it.
 */
export function isResponsibleForRoute(clusterCIDRs: readonly Cidr[], dest: Cidr): boolean {
  const first = firstAddress(dest);
  const last = lastAddress(dest);
  return clusterCIDRs.some((c) => containsIP(c, dest.family, first) || containsIP(c, dest.family, last));
}
