// One reconcile's edit of a route table: the routes as read, changed by the
// plan's deletes then creates, each with its own outcome. routes.ts writes the
// result with one PUT; an operation that changes nothing never needs it.
import type { Route as AzureRoute } from '@azure/arm-network';
import { PermanentError, RetryableError } from '../../core/errors.ts';
import { canonicalCIDR, tryParseCIDR } from '../../core/cidr.ts';
import type { NodeLister, Route } from '../../core/types.ts';
import {
  MAX_ROUTE_NAME_LENGTH,
  canonicalIP,
  isDualStack,
  nextHopFor,
  routeName,
  routeOwner,
  sameName,
} from './targets.ts';

/** What an operation did to the draft: nothing to write, a change, or a refusal. */
export type EditOutcome =
  | { readonly kind: 'unchanged' }
  | { readonly kind: 'changed' }
  | { readonly kind: 'failed'; readonly error: Error };

const UNCHANGED: EditOutcome = { kind: 'unchanged' };
const CHANGED: EditOutcome = { kind: 'changed' };

function failed(error: Error): EditOutcome {
  return { kind: 'failed', error };
}

/** The route as this plug-in writes it, and as listRoutes reads it back. */
export interface DesiredRoute {
  readonly name: string;
  readonly addressPrefix: string;
  readonly nextHopIpAddress: string;
}

export class TableDraft {
  private routes: AzureRoute[];
  private readonly nodes: NodeLister;

  constructor(routes: readonly AzureRoute[], nodes: NodeLister) {
    this.routes = [...routes];
    this.nodes = nodes;
  }

  result(): AzureRoute[] {
    return this.routes;
  }

  /** Puts back routes taken from result() earlier (a create that does not fit, R118). */
  restore(routes: readonly AzureRoute[]): void {
    this.routes = [...routes];
  }

  /**
   * R3: removes the listed route (same name, same destination) and nothing
   * else; a route already gone, or renamed or re-pointed since, is left alone.
   */
  delete(route: Readonly<Route>): EditOutcome {
    const canonical = canonicalCIDR(route.destinationCIDR);
    const before = this.routes.length;
    this.routes = this.routes.filter((r) => {
      const samePrefix = canonical !== undefined && canonicalCIDR(r.addressPrefix ?? '') === canonical;
      if (!samePrefix) return true;
      if (route.name !== '') return !sameName(r.name, route.name);
      // A route without a name (not as listed): only a route of its target by name.
      return routeOwner(r.name ?? '', r.addressPrefix ?? '') !== route.targetNode.toLowerCase();
    });
    return this.routes.length === before ? UNCHANGED : CHANGED;
  }

  /** The route a create asks for, or why it cannot be made. */
  desired(route: Readonly<Route>): DesiredRoute | Error {
    const cidr = tryParseCIDR(route.destinationCIDR);
    if (cidr === undefined) {
      return new PermanentError(`destination ${JSON.stringify(route.destinationCIDR)} is not a CIDR`);
    }
    const node = this.nodes.get(route.targetNode);
    if (node === undefined) return new PermanentError(`node ${route.targetNode} is not in the node cache`);
    const nextHop = nextHopFor(node, cidr.family);
    if (nextHop === undefined) {
      // The kubelet reports addresses shortly after registering; a node of the wrong family never will.
      return new RetryableError(
        `node ${route.targetNode} has no IPv${cidr.family} InternalIP for the next hop of ${route.destinationCIDR}`,
      );
    }
    const name = routeName(route.targetNode, route.destinationCIDR, isDualStack(node));
    if (name.length > MAX_ROUTE_NAME_LENGTH) {
      return new PermanentError(
        `route name ${name} is longer than Azure's ${MAX_ROUTE_NAME_LENGTH} characters (node name too long)`,
      );
    }
    return { name, addressPrefix: route.destinationCIDR, nextHopIpAddress: nextHop };
  }

  /**
   * R2: puts the route in: a route of the same name is replaced; another route
   * of the cluster with the same destination is replaced too (it routes to
   * the wrong node); a foreign route with that destination is refused.
   */
  create(route: Readonly<Route>): EditOutcome {
    const want = this.desired(route);
    if (want instanceof Error) return failed(want);
    const canonical = canonicalCIDR(want.addressPrefix);
    const same = this.routes.find((r) => sameName(r.name, want.name));
    if (
      same !== undefined &&
      canonicalCIDR(same.addressPrefix ?? '') === canonical &&
      same.nextHopType === 'VirtualAppliance' &&
      canonicalIP(same.nextHopIpAddress ?? '') === canonicalIP(want.nextHopIpAddress)
    ) {
      return UNCHANGED;
    }
    const rivals = this.routes.filter(
      (r) => !sameName(r.name, want.name) && canonicalCIDR(r.addressPrefix ?? '') === canonical,
    );
    const foreign = rivals.find((r) => routeOwner(r.name ?? '', r.addressPrefix ?? '') === undefined);
    if (foreign !== undefined) {
      return failed(
        new PermanentError(
          `the route table already routes ${want.addressPrefix} by route ${foreign.name ?? '?'}, which is not a node's; refusing to replace it`,
        ),
      );
    }
    const drop = new Set<AzureRoute>(rivals);
    if (same !== undefined) drop.add(same);
    this.routes = this.routes.filter((r) => !drop.has(r));
    this.routes.push({
      name: want.name,
      addressPrefix: want.addressPrefix,
      nextHopType: 'VirtualAppliance',
      nextHopIpAddress: want.nextHopIpAddress,
    });
    return CHANGED;
  }
}
