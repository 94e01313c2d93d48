// Translation between the controller's view (node names, pod CIDR strings, routes) and
// EC2's (instance IDs, one destination field per address family, routes with their targets).
import { isIPv4, isIPv6 } from 'node:net';
import { PermanentError } from '../../core/errors.ts';
import type { NodeLister, Route } from '../../core/types.ts';
import type { Ec2Route } from './ec2.ts';

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

export function destinationText(d: Destination): string {
  return 'DestinationCidrBlock' in d ? d.DestinationCidrBlock : d.DestinationIpv6CidrBlock;
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

// Targets that mean "not a node": the VPC's local route, gateways, peering.
// An instance route carries InstanceId (and its ENI), so it never has these.
const GATEWAY_TARGETS = [
  'GatewayId',
  'NatGatewayId',
  'TransitGatewayId',
  'VpcPeeringConnectionId',
  'EgressOnlyInternetGatewayId',
  'CarrierGatewayId',
  'LocalGatewayId',
  'CoreNetworkArn',
  'OdbNetworkArn',
] as const satisfies readonly (keyof Ec2Route)[];

/** The route's gateway or peering target, or undefined for an instance route. */
export function gatewayTarget(r: Ec2Route): string | undefined {
  for (const key of GATEWAY_TARGETS) {
    const v = r[key];
    if (v) return v;
  }
  return undefined;
}

/**
 * One EC2 route as the controller sees it, or undefined for routes that can
 * never be a node's: the local route, gateway and peering routes, prefix lists.
 */
export function toRoute(
  clusterName: string,
  r: Ec2Route,
  instances: ReadonlyMap<string, string>,
): Route | undefined {
  const destination = r.DestinationCidrBlock ?? r.DestinationIpv6CidrBlock;
  if (!destination) return undefined;
  if (gatewayTarget(r) !== undefined) return undefined;
  const blackhole = r.State === 'blackhole';
  // An instance route, or the remains of one: a blackhole whose target is gone.
  if (!r.InstanceId && !blackhole) return undefined;
  return {
    // EC2 routes have no names; the upstream AWS provider's naming, for logs.
    name: `${clusterName}-${destination}`,
    targetNode: r.InstanceId ? (instances.get(r.InstanceId) ?? '') : '',
    targetNodeAddresses: [],
    enableNodeAddresses: false,
    destinationCIDR: destination,
    blackhole,
  };
}
