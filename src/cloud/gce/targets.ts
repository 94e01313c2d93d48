// Route names, instances and nodes, as cloud-provider-gcp ties them together
// (providers/gce/gce_routes.go): a route is the cluster's if its name starts
// with the cluster name cut to 26 characters and a hyphen and its description
// is `k8s-node-route`; its target is its next-hop instance, whose name is the
// node's name on GCE. Here the instance comes from the node's providerID
// (`gce://<project>/<zone>/<instance>`) first, so a node whose name is not its
// instance's still maps, and a route that reaches another instance than its
// node's is reported as a blackhole.
import { tryParseCIDR } from '../../core/cidr.ts';
import { PermanentError } from '../../core/errors.ts';
import type { Node, NodeLister } from '../../core/types.ts';

/** Upstream's description of every route it writes (k8sNodeRouteTag). */
export const K8S_NODE_ROUTE = 'k8s-node-route';
/** Upstream's cut: 26 + '-' + a 36-character UID = 63, the longest name Compute Engine takes. */
export const CLUSTER_NAME_PREFIX_LENGTH = 26;
/** Upstream's priority for node routes. */
export const ROUTE_PRIORITY = 1000;

const RESOURCE_NAME = /^[a-z]([-a-z0-9]{0,61}[a-z0-9])?$/;
const INSTANCE_URL = /(?:^|\/)projects\/([^/]+)\/zones\/([^/]+)\/instances\/([^/]+)$/;
const NETWORK_URL = /(?:^|\/)projects\/([^/]+)\/global\/networks\/([^/]+)$/;
const PROVIDER_ID = /^gce:\/\/([^/]+)\/([^/]+)\/([^/]+)$/;

export interface InstanceRef {
  readonly project: string;
  readonly zone: string;
  readonly name: string;
}

export function truncateClusterName(clusterName: string): string {
  return clusterName.slice(0, CLUSTER_NAME_PREFIX_LENGTH);
}

/**
 * The name of the route for one of a node's pod CIDRs: upstream's
 * `<cluster prefix>-<name hint>` for IPv4, so routes upstream made are kept as
 * they are; IPv6 gets `<cluster prefix>-<hint without hyphens>-v6` (62
 * characters with a UID hint), which no IPv4 name can equal. Upstream gives
 * both CIDRs of a dual-stack node the same name, and its second insert's 409
 * passes for success.
 */
export function routeName(clusterName: string, nameHint: string, destinationCIDR: string): string {
  const prefix = truncateClusterName(clusterName);
  const family = tryParseCIDR(destinationCIDR)?.family;
  const name = family === 6 ? `${prefix}-${nameHint.replace(/-/g, '')}-v6` : `${prefix}-${nameHint}`;
  if (!RESOURCE_NAME.test(name)) {
    throw new PermanentError(
      `route name ${JSON.stringify(name)} (cluster name ${JSON.stringify(clusterName)}, name hint ${JSON.stringify(nameHint)}) is not a valid Compute Engine name: lower case letters, digits and hyphens, at most 63 characters, starting with a letter`,
    );
  }
  return name;
}

/** Upstream's canonicalizeInstanceName: a node named like a host name is its instance up to the first dot. */
export function canonicalInstanceName(nodeName: string): string {
  const dot = nodeName.indexOf('.');
  return dot === -1 ? nodeName : nodeName.slice(0, dot);
}

export function parseProviderID(providerID: string | undefined): InstanceRef | undefined {
  const m = PROVIDER_ID.exec(providerID ?? '');
  return m ? { project: m[1]!, zone: m[2]!, name: m[3]! } : undefined;
}

/** An instance in any form the API uses (full URL, projects/…/instances/…). */
export function parseInstanceURL(url: string | undefined): InstanceRef | undefined {
  const m = INSTANCE_URL.exec(url ?? '');
  return m ? { project: m[1]!, zone: m[2]!, name: m[3]! } : undefined;
}

export function instancePath(i: InstanceRef): string {
  return `projects/${i.project}/zones/${i.zone}/instances/${i.name}`;
}

export function sameInstance(a: InstanceRef | undefined, b: InstanceRef | undefined): boolean {
  return (
    a !== undefined && b !== undefined && a.project === b.project && a.zone === b.zone && a.name === b.name
  );
}

/** Whether a route's `network` URL names this network, whatever host and API version it carries. */
export function sameNetwork(url: string | undefined, project: string, network: string): boolean {
  const m = NETWORK_URL.exec(url ?? '');
  return m !== null && m[1] === project && m[2] === network;
}

export function escapeRegExp(s: string): string {
  return s.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');
}

/** Nodes by the instance their providerID names (`project/zone/name`). */
export function nodesByInstance(nodes: NodeLister): Map<string, Node> {
  const out = new Map<string, Node>();
  for (const n of nodes.list()) {
    const ref = parseProviderID(n.spec?.providerID);
    if (ref !== undefined) out.set(`${ref.project}/${ref.zone}/${ref.name}`, n);
  }
  return out;
}
