// What the provider-level integration tests pass to a plug-in's Routes, as the controller would:
// the options of one call, the route it wants, and the nodes it knows.
import type { CallOptions, Node, NodeAddress, NodeLister, Route } from '../../src/core/types.ts';

/** The options of one call in a reconcile of its own (a fresh per-reconcile scratch). */
export function callOptions(signal: AbortSignal = new AbortController().signal): CallOptions {
  return { signal, reconcile: { id: 'r', scratch: new Map() } };
}

/** The route the controller asks for: the pod CIDR to the node (addresses only where the plug-in needs them). */
export function wantRoute(
  targetNode: string,
  destinationCIDR: string,
  targetNodeAddresses: NodeAddress[] = [],
): Route {
  return {
    name: '',
    targetNode,
    targetNodeAddresses,
    enableNodeAddresses: false,
    destinationCIDR,
    blackhole: false,
  };
}

/** A create for the node's first pod CIDR to its addresses, named by its UID as the controller does. */
export function nodeRoute(node: Node): { nameHint: string; route: Route } {
  return {
    nameHint: node.metadata!.uid!,
    route: wantRoute(node.metadata!.name!, node.spec!.podCIDRs![0]!, node.status!.addresses!),
  };
}

/** A fixed set of nodes, looked up by name. */
export function nodeLister(nodes: readonly Node[]): NodeLister {
  return { get: (name) => nodes.find((n) => n.metadata?.name === name), list: () => nodes };
}
