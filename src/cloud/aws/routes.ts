// Cluster routes in one VPC route table: destination = pod CIDR, target = the
// node's EC2 instance. The table is the cluster-tagged one (or the configured
// ID; route-table.ts), looked up once per reconcile; routes map to nodes in targets.ts.
import {
  CreateRouteCommand,
  DeleteRouteCommand,
  ModifyInstanceAttributeCommand,
  ReplaceRouteCommand,
} from './ec2.ts';
import type { EC2Client } from './ec2.ts';
import {
  ConflictError,
  PermanentError,
  RetryableError,
  isAbortError,
  throwIfAborted,
} from '../../core/errors.ts';
import type { CallOptions, NodeLister, Route, Routes, RouteTableRoom } from '../../core/types.ts';
import type { AwsCloudConfig } from './config.ts';
import { awsErrorCode, ec2Call, toRouteError } from './errors.ts';
import { ListedTable, type RouteTableLimit } from './room.ts';
import { RouteTableLookup, type RouteTableConfig } from './route-table.ts';
import {
  destinationOf,
  gatewayTarget,
  instanceIdFromProviderID,
  instanceNodeMap,
  toRoute,
  type Destination,
} from './targets.ts';

// Kept importable from here, where they were first defined.
export { CLUSTER_TAG_PREFIX, LEGACY_CLUSTER_TAG, hasClusterTag } from './route-table.ts';
export { toRoute } from './targets.ts';

/** Options the routes need from the cloud config; `disableSrcDstCheck` defaults to true. */
export type AwsRoutesConfig = RouteTableConfig & Pick<AwsCloudConfig, 'disableSrcDstCheck'>;

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
  private readonly tables: RouteTableLookup;

  /** `limit`: where the table's route limit comes from (R118); without it the room is not told. */
  constructor(client: EC2Client, config: AwsRoutesConfig, nodes: NodeLister, limit?: RouteTableLimit) {
    this.client = client;
    this.config = config;
    this.nodes = nodes;
    this.limit = limit;
    this.tables = new RouteTableLookup(client, config);
  }

  /** R115: the table listRoutes just read, against its limit (room.ts). */
  async routeTableRoom(_clusterName: string, opts: CallOptions): Promise<RouteTableRoom | undefined> {
    const listed = opts.reconcile.scratch.get(ListedTable.key);
    if (this.limit === undefined || !(listed instanceof ListedTable)) return undefined;
    return this.limit.room(listed, opts.signal);
  }

  async listRoutes(clusterName: string, opts: CallOptions): Promise<Route[]> {
    throwIfAborted(opts.signal);
    const table = await this.tables.find(clusterName, opts.signal);
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
    await this.repoint({ tableId, destination, cidr: route.destinationCIDR, instanceId, what }, opts);
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

  /** R2: CreateRoute found the destination taken. Ours already → done; another instance → repoint it. */
  private async repoint(
    want: { tableId: string; destination: Destination; cidr: string; instanceId: string; what: string },
    opts: CallOptions,
  ): Promise<void> {
    const { tableId, destination, cidr, instanceId, what } = want;
    const existing = await this.tables.findRoute(tableId, destination, opts.signal);
    if (existing === undefined) {
      throw new ConflictError(`${what}: route was reported to exist but is gone; it changed concurrently`);
    }
    if (existing.InstanceId === instanceId) return;
    const gateway = gatewayTarget(existing);
    if (gateway !== undefined) {
      // Replacing a gateway route with a pod route could cut the VPC off; a person decides.
      throw new PermanentError(
        `${what}: the table already routes ${cidr} to ${gateway}, not to an instance; refusing to replace it`,
      );
    }
    await ec2Call(`ReplaceRoute ${cidr} via ${instanceId} in ${tableId}`, opts.signal, () =>
      this.client.send(
        new ReplaceRouteCommand({ RouteTableId: tableId, InstanceId: instanceId, ...destination }),
        { abortSignal: opts.signal },
      ),
    );
  }

  private tableKey(clusterName: string): string {
    return `aws/route-table/${clusterName}`;
  }

  /** The table ID, shared by all calls of one reconcile (R5: 200 creates must not mean 200 lookups). */
  private routeTableId(clusterName: string, opts: CallOptions): Promise<string> {
    return this.shared(this.tableKey(clusterName), opts, async () => {
      const table = await this.tables.find(clusterName, opts.signal);
      return table.id;
    });
  }

  private disableSourceDestCheck(instanceId: string, opts: CallOptions): Promise<void> {
    // Instances forward pod traffic only with the check off (the upstream AWS provider does the same).
    return this.shared(`aws/src-dst-check-off/${instanceId}`, opts, async () => {
      await ec2Call(`ModifyInstanceAttribute SourceDestCheck=false on ${instanceId}`, opts.signal, () =>
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
}
