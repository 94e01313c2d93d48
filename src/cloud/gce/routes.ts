// Cluster routes as Compute Engine VPC routes, in upstream's vocabulary
// (cloud-provider-gcp providers/gce/gce_routes.go): one route per pod CIDR
// with nextHopInstance = the node's instance, priority 1000, description
// `k8s-node-route`, in the network's project. Each write is one request and
// one wait for its global operation; a 409 on insert is success once the
// existing route is seen to be the same one, and a 404 on delete is success.
import { canonicalCIDR } from '../../core/cidr.ts';
import { PermanentError, throwIfAborted } from '../../core/errors.ts';
import type { CallOptions, Node, NodeLister, Route, Routes, RouteTableRoom } from '../../core/types.ts';
import type { ComputeApi, GceOperation, GceRoute } from './client.ts';
import { GceApiError, toRouteError } from './errors.ts';
import { ListedClusterRoutes, ProjectRoutesQuota } from './room.ts';
import {
  escapeRegExp,
  instancePath,
  K8S_NODE_ROUTE,
  canonicalInstanceName,
  nodesByInstance,
  parseInstanceURL,
  parseProviderID,
  ROUTE_PRIORITY,
  routeName,
  sameInstance,
  sameNetwork,
  truncateClusterName,
} from './targets.ts';
import type { InstanceRef } from './targets.ts';

export interface GceRoutesConfig {
  /** The instances' project (`project-id`): where a node is looked up by name. */
  readonly projectID: string;
  /** The network's project, which holds its routes. */
  readonly networkProjectID: string;
  readonly networkName: string;
  /** Written into each route's `network`. */
  readonly networkURL: string;
  /** For nodes without a gce:// providerID (`local-zone`). */
  readonly localZone: string | undefined;
  /** Look such nodes up in every zone of `region` instead (upstream's multizone mode). */
  readonly multizone?: boolean;
  readonly region?: string | undefined;
}

// The route's instance is gone: it delivers nothing until re-created.
const DEAD_NEXT_HOP = 'NEXT_HOP_INSTANCE_NOT_FOUND';

export class GceRoutes implements Routes {
  private readonly api: ComputeApi;
  private readonly config: GceRoutesConfig;
  private readonly nodes: NodeLister;
  private readonly quota: ProjectRoutesQuota;
  /** The region's zones as last listed (multizone); listed again when a node is in none of them. */
  private zones: readonly string[] | undefined;

  constructor(api: ComputeApi, config: GceRoutesConfig, nodes: NodeLister, now?: () => number) {
    this.api = api;
    this.config = config;
    this.nodes = nodes;
    this.quota = new ProjectRoutesQuota(api, config.networkProjectID, now);
  }

  /** R115: the project's ROUTES quota, read at most every QUOTA_REFRESH_MS (room.ts). */
  async routeTableRoom(_clusterName: string, opts: CallOptions): Promise<RouteTableRoom | undefined> {
    const listed = opts.reconcile.scratch.get(ListedClusterRoutes.key);
    if (!(listed instanceof ListedClusterRoutes)) return undefined;
    return this.quota.room(listed.count, opts.signal);
  }

  private get network(): string {
    return `network ${this.config.networkName} in project ${this.config.networkProjectID}`;
  }

  /**
   * Upstream's list filter: name prefix, this network, description
   * k8s-node-route. Unquoted, as k8s-cloud-provider's filter package writes it:
   * with `eq` the value is an RE2 expression that must match the whole field.
   */
  listFilter(clusterName: string): string {
    const { networkProjectID, networkName } = this.config;
    return [
      `(name eq ${escapeRegExp(truncateClusterName(clusterName))}-.*)`,
      `(network eq .*/projects/${networkProjectID}/global/networks/${networkName})`,
      `(description eq ${K8S_NODE_ROUTE})`,
    ].join(' ');
  }

  async listRoutes(clusterName: string, opts: CallOptions): Promise<Route[]> {
    throwIfAborted(opts.signal);
    let listed: GceRoute[];
    try {
      listed = await this.api.listRoutes(
        this.config.networkProjectID,
        this.listFilter(clusterName),
        opts.signal,
      );
    } catch (err) {
      throw toRouteError(err, `list routes of ${this.network}`, opts.signal);
    }
    const prefix = `${truncateClusterName(clusterName)}-`;
    const byInstance = nodesByInstance(this.nodes);
    const routes: Route[] = [];
    for (const r of listed) {
      // The filter again, so a route the API let through is never taken for the cluster's.
      if (!r.name.startsWith(prefix) || r.description !== K8S_NODE_ROUTE) continue;
      if (!sameNetwork(r.network, this.config.networkProjectID, this.config.networkName)) continue;
      if (r.nextHopInstance === undefined || r.nextHopInstance === '') continue;
      routes.push(toRoute(r, this.nodes, byInstance));
    }
    opts.reconcile.scratch.set(ListedClusterRoutes.key, new ListedClusterRoutes(routes.length));
    return routes;
  }

  async createRoute(
    clusterName: string,
    nameHint: string,
    route: Readonly<Route>,
    opts: CallOptions,
  ): Promise<Route> {
    throwIfAborted(opts.signal);
    const dest = route.destinationCIDR;
    if (canonicalCIDR(dest) === undefined)
      throw new PermanentError(`invalid destination CIDR ${JSON.stringify(dest)}`);
    const name = routeName(clusterName, nameHint, dest);
    const what = `insert route ${name} ${dest} to node ${route.targetNode} in ${this.network}`;
    const instance = await this.instanceOf(route.targetNode, opts);
    const body: GceRoute = {
      name,
      destRange: dest,
      network: this.config.networkURL,
      nextHopInstance: instancePath(instance),
      priority: ROUTE_PRIORITY,
      description: K8S_NODE_ROUTE,
    };
    try {
      const op = await this.api.insertRoute(this.config.networkProjectID, body, opts.signal);
      await this.done(op, opts);
    } catch (err) {
      if (
        !(err instanceof GceApiError) ||
        !(err.status === 409 || err.reason === 'RESOURCE_ALREADY_EXISTS')
      ) {
        throw toRouteError(err, what, opts.signal);
      }
      await this.sameAsExisting(name, dest, instance, what, opts);
    }
    // R66: the route as listRoutes will report it.
    return {
      name,
      targetNode: route.targetNode,
      targetNodeAddresses: [],
      enableNodeAddresses: false,
      destinationCIDR: dest,
      blackhole: false,
    };
  }

  async deleteRoute(_clusterName: string, route: Readonly<Route>, opts: CallOptions): Promise<void> {
    throwIfAborted(opts.signal);
    if (route.name === '')
      throw new PermanentError(`cannot delete the route to ${route.destinationCIDR}: it has no name`);
    const what = `delete route ${route.name} ${route.destinationCIDR} from ${this.network}`;
    try {
      const op = await this.api.deleteRoute(this.config.networkProjectID, route.name, opts.signal);
      await this.done(op, opts);
    } catch (err) {
      // Already gone (R3); upstream reports this as an error.
      if (err instanceof GceApiError && (err.status === 404 || err.reason === 'RESOURCE_NOT_FOUND')) return;
      throw toRouteError(err, what, opts.signal);
    }
  }

  /** Waits for a write's operation; one that ends in error throws it as the API's error. */
  private async done(op: GceOperation, opts: CallOptions): Promise<void> {
    const end = await this.api.waitOperation(this.config.networkProjectID, op, opts.signal);
    const first = end.error?.errors?.[0];
    if (first !== undefined || end.error !== undefined) {
      throw new GceApiError(
        `operation ${end.name} failed: ${first?.message ?? 'no message'}`,
        end.httpErrorStatusCode ?? 0,
        first?.code ?? '',
      );
    }
  }

  /**
   * The next hop for a node: its providerID's instance, else the instance
   * named like it (up to the first dot, as upstream) in the managed zones:
   * local-zone, or with multizone every zone of its region.
   */
  private async instanceOf(nodeName: string, opts: CallOptions): Promise<InstanceRef> {
    const node = this.nodes.get(nodeName);
    const fromID = parseProviderID(node?.spec?.providerID);
    if (fromID !== undefined) return fromID;
    const name = canonicalInstanceName(nodeName);
    const { multizone, region, localZone } = this.config;
    if (multizone === true && region !== undefined) return this.searchRegion(nodeName, name, region, opts);
    if (localZone === undefined) {
      throw new PermanentError(
        `node ${nodeName} has no gce:// providerID, and gce.conf sets no local-zone to find its instance by name` +
          (multizone === true ? " (multizone searches the zones of local-zone's region)" : ''),
      );
    }
    const found = await this.findIn([localZone], nodeName, name, opts);
    if (found !== undefined) return found;
    throw new PermanentError(`node ${nodeName}: no instance ${name} in zone ${localZone}`);
  }

  /** Upstream's getInstanceByName in multizone mode, with its zone refresh when a node is in none. */
  private async searchRegion(
    nodeName: string,
    name: string,
    region: string,
    opts: CallOptions,
  ): Promise<InstanceRef> {
    const known = this.zones;
    const zones = known ?? (await this.listZones(region, opts));
    const found = await this.findIn(zones, nodeName, name, opts);
    if (found !== undefined) return found;
    // Zones listed before may be stale (a zone added to the region since): list again, search the new ones.
    const fresh = known === undefined ? zones : await this.listZones(region, opts);
    const added = fresh.filter((z) => !zones.includes(z));
    const late = await this.findIn(added, nodeName, name, opts);
    if (late !== undefined) return late;
    throw new PermanentError(
      `node ${nodeName} has no gce:// providerID and no instance ${name} is in any zone of region ${region} (${fresh.join(', ') || 'none listed'})`,
    );
  }

  private async listZones(region: string, opts: CallOptions): Promise<readonly string[]> {
    try {
      this.zones = await this.api.listZones(this.config.projectID, region, opts.signal);
      return this.zones;
    } catch (err) {
      throw toRouteError(err, `list the zones of region ${region}`, opts.signal);
    }
  }

  /** The instance in the first of `zones` that has it; a 404 means not in that zone, any other error stops. */
  private async findIn(
    zones: readonly string[],
    nodeName: string,
    name: string,
    opts: CallOptions,
  ): Promise<InstanceRef | undefined> {
    for (const zone of zones) {
      try {
        const found = await this.api.getInstance(this.config.projectID, zone, name, opts.signal);
        return parseInstanceURL(found.selfLink) ?? { project: this.config.projectID, zone, name };
      } catch (err) {
        if (err instanceof GceApiError && err.status === 404) continue;
        throw toRouteError(err, `find instance ${name} of node ${nodeName} in zone ${zone}`, opts.signal);
      }
    }
    return undefined;
  }

  /** After a 409: success iff the route of that name is this one (R2), else a conflict. */
  private async sameAsExisting(
    name: string,
    dest: string,
    instance: InstanceRef,
    what: string,
    opts: CallOptions,
  ): Promise<void> {
    let existing: GceRoute;
    try {
      existing = await this.api.getRoute(this.config.networkProjectID, name, opts.signal);
    } catch (err) {
      // Deleted in between: the create's retry (R24) will insert it.
      throw toRouteError(
        err instanceof GceApiError && err.status === 404
          ? new GceApiError(`route ${name} existed, then was gone`, 409, 'alreadyExists')
          : err,
        what,
        opts.signal,
      );
    }
    const same =
      canonicalCIDR(existing.destRange) === canonicalCIDR(dest) &&
      sameInstance(parseInstanceURL(existing.nextHopInstance), instance) &&
      sameNetwork(existing.network, this.config.networkProjectID, this.config.networkName);
    if (!same) {
      throw toRouteError(
        new GceApiError(
          `route ${name} already exists for ${existing.destRange} via ${existing.nextHopInstance ?? existing.nextHopIp ?? 'another next hop'}`,
          409,
          'alreadyExists',
        ),
        what,
      );
    }
  }
}

/**
 * A listed route as the controller sees it. Its node is the one whose
 * providerID names the next-hop instance, else (upstream) the node named like
 * the instance; a route whose instance is gone, or that reaches another
 * instance than its node's providerID names, is a blackhole (R20 replaces it).
 */
export function toRoute(r: GceRoute, nodes: NodeLister, byInstance: ReadonlyMap<string, Node>): Route {
  const ref = parseInstanceURL(r.nextHopInstance);
  let node: Node | undefined;
  let wrongInstance = false;
  if (ref !== undefined) {
    node = byInstance.get(`${ref.project}/${ref.zone}/${ref.name}`);
    if (node === undefined) {
      node = nodes.get(ref.name);
      const own = parseProviderID(node?.spec?.providerID);
      wrongInstance = own !== undefined && !sameInstance(own, ref);
    }
  }
  const dead = (r.warnings ?? []).some((w) => w.code === DEAD_NEXT_HOP);
  return {
    name: r.name,
    targetNode: node?.metadata?.name ?? '',
    targetNodeAddresses: [],
    enableNodeAddresses: false,
    destinationCIDR: r.destRange,
    blackhole: node !== undefined && (dead || wrongInstance),
  };
}
