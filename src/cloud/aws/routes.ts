// Cluster routes in one VPC route table: destination = pod CIDR, target = the
// node's EC2 instance. The table is the cluster-tagged one (or the configured
// ID), looked up once per reconcile.
import {
  CreateRouteCommand,
  DeleteRouteCommand,
  DescribeRouteTablesCommand,
  ModifyInstanceAttributeCommand,
  ReplaceRouteCommand,
} from './ec2.ts';
import type { EC2Client, Ec2Route, Filter, RouteTable } from './ec2.ts';
import {
  ConflictError,
  PermanentError,
  RetryableError,
  isAbortError,
  throwIfAborted,
} from '../../core/errors.ts';
import type { CallOptions, NodeLister, Route, Routes, RouteTableRoom } from '../../core/types.ts';
import type { AwsCloudConfig } from './config.ts';
import { awsErrorCode, toRouteError } from './errors.ts';
import { ListedTable, type RouteTableLimit } from './room.ts';
import {
  destinationOf,
  instanceIdFromProviderID,
  instanceNodeMap,
  sameDestination,
  type Destination,
} from './targets.ts';

export const CLUSTER_TAG_PREFIX = 'kubernetes.io/cluster/';
/** The tag older (kops) clusters carry, `KubernetesCluster=<cluster ID>` (R121). */
export const LEGACY_CLUSTER_TAG = 'KubernetesCluster';

/** Options the routes need from the cloud config; `disableSrcDstCheck` defaults to true. */
export type AwsRoutesConfig = Pick<AwsCloudConfig, 'routeTableId' | 'vpcId' | 'disableSrcDstCheck'> & {
  /**
   * An INI (cloud-provider-aws) config: the table is chosen as that CCM chooses it (R121),
   * by RouteTableID alone, else by this cluster ID's tags, whatever --cluster-name says.
   */
  readonly upstreamClusterID?: () => Promise<string>;
};

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

function gatewayTarget(r: Ec2Route): string | undefined {
  for (const key of GATEWAY_TARGETS) {
    const v = r[key];
    if (v) return v;
  }
  return undefined;
}

function destinationText(d: Destination): string {
  return 'DestinationCidrBlock' in d ? d.DestinationCidrBlock : d.DestinationIpv6CidrBlock;
}

/** A promise shared by the calls of one reconcile, kept in `opts.reconcile.scratch`. */
class Shared<T> {
  readonly value: Promise<T>;
  constructor(value: Promise<T>) {
    this.value = value;
  }
}

export class AwsRoutes implements Routes {
  private readonly client: EC2Client;
  private readonly config: AwsRoutesConfig;
  private readonly nodes: NodeLister;
  private readonly limit: RouteTableLimit | undefined;

  /** `limit`: where the table's route limit comes from (R118); without it the room is not told. */
  constructor(client: EC2Client, config: AwsRoutesConfig, nodes: NodeLister, limit?: RouteTableLimit) {
    this.client = client;
    this.config = config;
    this.nodes = nodes;
    this.limit = limit;
  }

  /** R115: the table listRoutes just read, against its limit (room.ts). */
  async routeTableRoom(_clusterName: string, opts: CallOptions): Promise<RouteTableRoom | undefined> {
    const listed = opts.reconcile.scratch.get(ListedTable.key);
    if (this.limit === undefined || !(listed instanceof ListedTable)) return undefined;
    return this.limit.room(listed, opts.signal);
  }

  async listRoutes(clusterName: string, opts: CallOptions): Promise<Route[]> {
    throwIfAborted(opts.signal);
    const table = await this.findRouteTable(clusterName, opts);
    // Creates and deletes later in this reconcile reuse the table found here.
    opts.reconcile.scratch.set(this.tableKey(clusterName), new Shared(Promise.resolve(table.id)));
    opts.reconcile.scratch.set(ListedTable.key, new ListedTable(table.id, table.routes));
    const instances = instanceNodeMap(this.nodes);
    const routes: Route[] = [];
    for (const r of table.routes) {
      const route = toRoute(clusterName, r, instances);
      if (route) routes.push(route);
    }
    return routes;
  }

  async createRoute(
    clusterName: string,
    _nameHint: string,
    route: Readonly<Route>,
    opts: CallOptions,
  ): Promise<Route> {
    throwIfAborted(opts.signal);
    const destination = destinationOf(route.destinationCIDR);
    const instanceId = this.instanceOf(route.targetNode);
    // R66: the route as listRoutes will report it, for the controller's route cache.
    const listed = toRoute(
      clusterName,
      { ...destination, InstanceId: instanceId, State: 'active' },
      new Map([[instanceId, route.targetNode]]),
    )!;
    const tableId = await this.routeTableId(clusterName, opts);
    if (this.config.disableSrcDstCheck ?? true) await this.disableSourceDestCheck(instanceId, opts);

    const what = `CreateRoute ${route.destinationCIDR} via ${instanceId} (node ${route.targetNode}) in ${tableId}`;
    throwIfAborted(opts.signal);
    try {
      await this.client.send(
        new CreateRouteCommand({ RouteTableId: tableId, InstanceId: instanceId, ...destination }),
        { abortSignal: opts.signal },
      );
      return listed;
    } catch (err) {
      if (awsErrorCode(err) !== 'RouteAlreadyExists' || opts.signal.aborted) {
        throw toRouteError(err, what, opts.signal);
      }
    }

    // R2: the destination is taken. Ours already → done; another instance → repoint it.
    const existing = await this.findRoute(tableId, destination, opts);
    if (existing === undefined) {
      throw new ConflictError(`${what}: route was reported to exist but is gone; it changed concurrently`);
    }
    if (existing.InstanceId === instanceId) return listed;
    const gateway = gatewayTarget(existing);
    if (gateway !== undefined) {
      // Replacing a gateway route with a pod route could cut the VPC off; a person decides.
      throw new PermanentError(
        `${what}: the table already routes ${route.destinationCIDR} to ${gateway}, not to an instance; refusing to replace it`,
      );
    }
    await this.call(`ReplaceRoute ${route.destinationCIDR} via ${instanceId} in ${tableId}`, opts, () =>
      this.client.send(
        new ReplaceRouteCommand({ RouteTableId: tableId, InstanceId: instanceId, ...destination }),
        { abortSignal: opts.signal },
      ),
    );
    return listed;
  }

  async deleteRoute(clusterName: string, route: Readonly<Route>, opts: CallOptions): Promise<void> {
    throwIfAborted(opts.signal);
    const destination = destinationOf(route.destinationCIDR);
    const tableId = await this.routeTableId(clusterName, opts);
    const what = `DeleteRoute ${route.destinationCIDR} in ${tableId}`;
    throwIfAborted(opts.signal);
    try {
      await this.client.send(new DeleteRouteCommand({ RouteTableId: tableId, ...destination }), {
        abortSignal: opts.signal,
      });
    } catch (err) {
      // R3: already gone is the outcome we wanted.
      if (awsErrorCode(err) === 'InvalidRoute.NotFound' && !opts.signal.aborted) return;
      throw toRouteError(err, what, opts.signal);
    }
  }

  private tableKey(clusterName: string): string {
    return `aws/route-table/${clusterName}`;
  }

  /** The table ID, shared by all calls of one reconcile (R5: 200 creates must not mean 200 lookups). */
  private routeTableId(clusterName: string, opts: CallOptions): Promise<string> {
    return this.shared(this.tableKey(clusterName), opts, async () => {
      const table = await this.findRouteTable(clusterName, opts);
      return table.id;
    });
  }

  private disableSourceDestCheck(instanceId: string, opts: CallOptions): Promise<void> {
    // Instances forward pod traffic only with the check off (the upstream AWS provider does the same).
    return this.shared(`aws/src-dst-check-off/${instanceId}`, opts, async () => {
      await this.call(`ModifyInstanceAttribute SourceDestCheck=false on ${instanceId}`, opts, () =>
        this.client.send(
          new ModifyInstanceAttributeCommand({ InstanceId: instanceId, SourceDestCheck: { Value: false } }),
          { abortSignal: opts.signal },
        ),
      );
    });
  }

  /**
   * Runs `fn` once per reconcile for `key`. A failure is not cached, so a later
   * call tries again; a peer's abort (its own timeout) does not fail this call.
   */
  private async shared<T>(key: string, opts: CallOptions, fn: () => Promise<T>): Promise<T> {
    const scratch = opts.reconcile.scratch;
    const cached = scratch.get(key);
    if (cached instanceof Shared) {
      try {
        return (await cached.value) as T;
      } catch (err) {
        if (!isAbortError(err) || opts.signal.aborted) throw err;
      }
    }
    const entry = new Shared(fn());
    scratch.set(key, entry);
    entry.value.catch(() => {
      if (scratch.get(key) === entry) scratch.delete(key);
    });
    return entry.value;
  }

  private async call<T>(what: string, opts: CallOptions, fn: () => Promise<T>): Promise<T> {
    throwIfAborted(opts.signal);
    try {
      return await fn();
    } catch (err) {
      throw toRouteError(err, what, opts.signal);
    }
  }

  private instanceOf(nodeName: string): string {
    const node = this.nodes.get(nodeName);
    if (node === undefined) throw new PermanentError(`node ${nodeName} is not in the node cache`);
    const providerID = node.spec?.providerID;
    if (providerID === undefined || providerID === '') {
      // The cloud node controller sets it shortly after the node registers.
      throw new RetryableError(`node ${nodeName} has no spec.providerID yet`);
    }
    const id = instanceIdFromProviderID(providerID);
    if (id === undefined) {
      throw new PermanentError(
        `node ${nodeName} has providerID ${JSON.stringify(providerID)}, not aws:///<zone>/<instance-id>`,
      );
    }
    return id;
  }

  private async describeTables(
    input: { RouteTableIds?: string[]; Filters?: Filter[] },
    what: string,
    opts: CallOptions,
  ): Promise<RouteTable[]> {
    const tables: RouteTable[] = [];
    let token: string | undefined;
    do {
      const page = await this.call(what, opts, () =>
        this.client.send(new DescribeRouteTablesCommand({ ...input, NextToken: token }), {
          abortSignal: opts.signal,
        }),
      );
      tables.push(...(page.RouteTables ?? []));
      token = page.NextToken || undefined;
    } while (token !== undefined);
    return tables;
  }

  /** The cluster's table with its routes: by configured ID, else by cluster tag; exactly one. */
  private async findRouteTable(
    clusterName: string,
    opts: CallOptions,
  ): Promise<{ id: string; routes: Ec2Route[] }> {
    if (this.config.upstreamClusterID) return this.findUpstreamRouteTable(opts);
    const { routeTableId, vpcId } = this.config;
    const filters: Filter[] = vpcId ? [{ Name: 'vpc-id', Values: [vpcId] }] : [];
    const inVpc = vpcId ? ` in ${vpcId}` : '';
    let tables: RouteTable[];
    let wanted: string;
    if (routeTableId) {
      wanted = `route table ${routeTableId}${inVpc}`;
      tables = await this.describeTables(
        { RouteTableIds: [routeTableId], Filters: filters },
        `DescribeRouteTables ${routeTableId}`,
        opts,
      );
    } else {
      const tag = `${CLUSTER_TAG_PREFIX}${clusterName}`;
      wanted = `route table tagged ${tag}=owned|shared${inVpc}`;
      tables = await this.describeTables(
        { Filters: [...filters, { Name: `tag:${tag}`, Values: ['owned', 'shared'] }] },
        `DescribeRouteTables tag ${tag}`,
        opts,
      );
      if (tables.length === 0) {
        // R121: older clusters carry only the legacy tag; asked for only when the new one is absent.
        const legacy = `tag:${LEGACY_CLUSTER_TAG}`;
        tables = await this.describeTables(
          { Filters: [...filters, { Name: legacy, Values: [clusterName] }] },
          `DescribeRouteTables tag ${LEGACY_CLUSTER_TAG}=${clusterName}`,
          opts,
        );
      }
    }
    if (tables.length === 0) {
      const hint = routeTableId
        ? 'check routeTableId and vpcId in the cloud config'
        : 'tag the cluster route table or set routeTableId in the cloud config';
      throw new PermanentError(`no ${wanted} for cluster ${clusterName}: ${hint}`);
    }
    if (tables.length > 1) {
      const ids = tables.map((t) => t.RouteTableId ?? '?').join(', ');
      throw new PermanentError(
        `found ${tables.length} of ${wanted} for cluster ${clusterName} (${ids}); set routeTableId in the cloud config to choose one`,
      );
    }
    const table = tables[0]!;
    if (!table.RouteTableId) throw new RetryableError(`DescribeRouteTables returned a table without an ID`);
    return { id: table.RouteTableId, routes: table.Routes ?? [] };
  }

  /**
   * cloud-provider-aws v1.37.1 findRouteTable (aws_routes.go): RouteTableID as a
   * `route-table-id` filter, else every table carrying the cluster ID's tag (any value) or
   * the legacy `KubernetesCluster=<id>`; no VPC filter; exactly one. Upstream lists all
   * tables and filters them itself; the tag-key filter asks EC2 for the same candidates.
   */
  private async findUpstreamRouteTable(opts: CallOptions): Promise<{ id: string; routes: Ec2Route[] }> {
    const { routeTableId } = this.config;
    let tables: RouteTable[];
    let wanted: string;
    if (routeTableId) {
      wanted = `route table ${routeTableId}`;
      tables = await this.describeTables(
        { Filters: [{ Name: 'route-table-id', Values: [routeTableId] }] },
        `DescribeRouteTables ${routeTableId}`,
        opts,
      );
    } else {
      const clusterID = await this.config.upstreamClusterID!();
      const key = `${CLUSTER_TAG_PREFIX}${clusterID}`;
      wanted = `route table tagged ${key} or ${LEGACY_CLUSTER_TAG}=${clusterID}`;
      const candidates = await this.describeTables(
        { Filters: [{ Name: 'tag-key', Values: [key, LEGACY_CLUSTER_TAG] }] },
        `DescribeRouteTables tag ${key}`,
        opts,
      );
      tables = candidates.filter((t) => hasClusterTag(t.Tags ?? [], clusterID));
    }
    if (tables.length === 0) {
      throw new PermanentError(
        `unable to find ${wanted}: ${routeTableId ? 'check RouteTableID' : 'tag the cluster route table or set RouteTableID'} in the cloud config`,
      );
    }
    if (tables.length > 1) {
      const ids = tables.map((t) => t.RouteTableId ?? '?').join(', ');
      throw new PermanentError(
        `found ${tables.length} of ${wanted} (${ids}); set RouteTableID in the cloud config to choose one`,
      );
    }
    const table = tables[0]!;
    if (!table.RouteTableId) throw new RetryableError(`DescribeRouteTables returned a table without an ID`);
    return { id: table.RouteTableId, routes: table.Routes ?? [] };
  }

  private async findRoute(
    tableId: string,
    destination: Destination,
    opts: CallOptions,
  ): Promise<Ec2Route | undefined> {
    const [table] = await this.describeTables(
      { RouteTableIds: [tableId] },
      `DescribeRouteTables ${tableId}`,
      opts,
    );
    const wanted = destinationText(destination);
    return table?.Routes?.find((r) => {
      const d = r.DestinationCidrBlock ?? r.DestinationIpv6CidrBlock;
      return d !== undefined && sameDestination(wanted, d);
    });
  }
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

/** upstream awsTagging.hasClusterTag: the cluster's tag key with any value, or the legacy tag's value. */
export function hasClusterTag(tags: readonly { Key?: string; Value?: string }[], clusterID: string): boolean {
  const key = `${CLUSTER_TAG_PREFIX}${clusterID}`;
  return tags.some((t) => t.Key === key || (t.Key === LEGACY_CLUSTER_TAG && t.Value === clusterID));
}
