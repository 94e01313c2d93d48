// Translation between the controller's view (node names, pod CIDR strings) and
// EC2's (instance IDs, one destination field per address family).
import { isIPv4, isIPv6 } from 'node:net';
import { PermanentError } from '../../core/errors.ts';
import type { NodeLister } from '../../core/types.ts';

const INSTANCE_ID = /^i-[0-9a-z]+$/;

/**
 * The EC2 instance ID of a providerID. Accepts the forms the AWS cloud
 * provider writes and reads: `aws:///<zone>/<id>`, `aws:////<id>`, and a bare
 * `i-…`. Anything else (Fargate, other clouds) has no instance: undefined.
 */
export function instanceIdFromProviderID(providerID: string | undefined): string | undefined {
  if (providerID === undefined || providerID === '') return undefined;
  if (INSTANCE_ID.test(providerID)) return providerID;
  if (!providerID.startsWith('aws://')) return undefined;
  const last = providerID.slice('aws://'.length).split('/').filter(Boolean).pop();
  return last !== undefined && INSTANCE_ID.test(last) ? last : undefined;
}

/** instance ID → node name, from the providerIDs in the node cache. */
export function instanceNodeMap(nodes: NodeLister): Map<string, string> {
  const out = new Map<string, string>();
  for (const node of nodes.list()) {
    const id = instanceIdFromProviderID(node.spec?.providerID);
    const name = node.metadata?.name;
    if (id !== undefined && name !== undefined) out.set(id, name);
  }
  return out;
}

export type Destination = { DestinationCidrBlock: string } | { DestinationIpv6CidrBlock: string };

function splitCidr(cidr: string): { addr: string; len: number } | undefined {
  const slash = cidr.indexOf('/');
  if (slash < 0) return undefined;
  const addr = cidr.slice(0, slash);
  const lenText = cidr.slice(slash + 1);
  if (!/^\d{1,3}$/.test(lenText)) return undefined;
  return { addr, len: Number(lenText) };
}

/** The CreateRoute/DeleteRoute destination field for a CIDR; PermanentError if it is neither family. */
export function destinationOf(cidr: string): Destination {
  const parts = splitCidr(cidr);
  if (parts && isIPv4(parts.addr) && parts.len <= 32) return { DestinationCidrBlock: cidr };
  if (parts && isIPv6(parts.addr) && parts.len <= 128) return { DestinationIpv6CidrBlock: cidr };
  throw new PermanentError(`destination ${JSON.stringify(cidr)} is not an IPv4 or IPv6 CIDR`);
}

function ipv6Text(addr: string): string {
  // The WHATWG URL parser prints IPv6 hosts in RFC 5952 form; no hand-rolled expansion needed.
  return new URL(`http://[${addr}]/`).hostname.slice(1, -1);
}

/**
 * Compares a destination we asked for with one EC2 reports, tolerating
 * differences in IPv6 spelling (EC2 may print it compressed or lowercased).
 */
export function sameDestination(a: string, b: string): boolean {
  if (a === b) return true;
  const pa = splitCidr(a);
  const pb = splitCidr(b);
  if (!pa || !pb || pa.len !== pb.len) return false;
  if (isIPv6(pa.addr) && isIPv6(pb.addr)) return ipv6Text(pa.addr) === ipv6Text(pb.addr);
  return false;
}
