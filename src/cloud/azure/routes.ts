// Cluster routes in one Azure route table (kubenet-style): destination = pod
// CIDR, next hop VirtualAppliance = the node's InternalIP of the route's
// family, the node encoded in the route's name (targets.ts). Every reconcile
// writes the whole table with one PUT carrying the ETag it read (R8): a
// concurrent writer makes it fail 412, and the controller re-runs the batch
// (R24), which re-reads the table. No batching window: a new node's route goes
// out with the next reconcile's PUT.
import type { RouteTable } from '@azure/arm-network';
import { isAbortError, throwIfAborted } from '../../core/errors.ts';
import type {
  CallOptions,
  NodeLister,
  OperationResult,
  Route,
  RoutePlan,
  Routes,
  RouteTableRoom,
} from '../../core/types.ts';
import type { RouteTableApi } from './client.ts';
import { toRouteError } from './errors.ts';
import { TableDraft } from './table.ts';
import type { EditOutcome } from './table.ts';
import { AZURE_DEFAULT_ROUTE_LIMIT, createWithinLimit, ListedCount, tableRoom } from './room.ts';
import { canonicalIP, familyOf, nextHopFor, nodesByLowerName, routeOwner } from './targets.ts';

export interface AzureRoutesConfig {
  /** The route table's resource group (routeTableResourceGroup). */
  readonly resourceGroup: string;
  readonly routeTableName: string;
  /** Where a missing table is created. */
  readonly location: string;
  /** R118: routes the table allows (`routeTableRouteLimit`); default Azure's. */
  readonly routeLimit?: number;
}

/** The table as listRoutes read it, kept for the same reconcile's applyRoutes (saves a GET). */
class ListedTable {
  readonly table: RouteTable;
  constructor(table: RouteTable) {
    this.table = table;
  }
}

const OK: OperationResult = { ok: true };

export class AzureRoutes implements Routes {
  private readonly api: RouteTableApi;
  private readonly config: AzureRoutesConfig;
  private readonly nodes: NodeLister;
  // createRoute/deleteRoute each write the whole table: in flight together they
  // would fail each other's If-Match, so they take turns (R5).
  private serial: Promise<unknown> = Promise.resolve();

  constructor(api: RouteTableApi, config: AzureRoutesConfig, nodes: NodeLister) {
    this.api = api;
    this.config = config;
    this.nodes = nodes;
  }

  private get table(): string {
    return `route table ${this.config.routeTableName} in resource group ${this.config.resourceGroup}`;
  }

  private scratchKey(): string {
    return `azure/route-table/${this.config.resourceGroup}/${this.config.routeTableName}`.toLowerCase();
  }

  async listRoutes(_clusterName: string, opts: CallOptions): Promise<Route[]> {
    throwIfAborted(opts.signal);
    const table = await this.read(opts);
    opts.reconcile.scratch.set(ListedCount.key, new ListedCount(table?.routes?.length ?? 0));
    if (table === undefined) return []; // created by the first write
    opts.reconcile.scratch.set(this.scratchKey(), new ListedTable(table));
    const nodes = nodesByLowerName(this.nodes);
    const routes: Route[] = [];
    for (const r of table.routes ?? []) {
      const route = toRoute(r, nodes);
      if (route !== undefined) routes.push(route);
    }
    return routes;
  }

  /** R115: the table listRoutes just read, against its limit; no call of its own. */
  routeTableRoom(_clusterName: string, opts: CallOptions): Promise<RouteTableRoom | undefined> {
    const listed = opts.reconcile.scratch.get(ListedCount.key);
    return Promise.resolve(
      listed instanceof ListedCount ? tableRoom(this.table, listed.count, this.limit) : undefined,
    );
  }

  private get limit(): number {
    return this.config.routeLimit ?? AZURE_DEFAULT_ROUTE_LIMIT;
  }

  async applyRoutes(_clusterName: string, plan: RoutePlan, opts: CallOptions): Promise<OperationResult[]> {
    throwIfAborted(opts.signal);
    const scratch = opts.reconcile.scratch;
    const listed = scratch.get(this.scratchKey());
    // Used once: after a conflict the retry must read the table anew.
    scratch.delete(this.scratchKey());
    const table = listed instanceof ListedTable ? listed.table : await this.read(opts);
    const draft = new TableDraft(table?.routes ?? [], this.nodes);
    // R8: every delete before any create, so a destination moves within one write.
    const edits: EditOutcome[] = [
      ...plan.deletes.map((d) => draft.delete(d)),
      // R97, R118: a create the table has no room for is refused alone, before the PUT.
      ...plan.creates.map((c) => createWithinLimit(draft, c.route, this.limit, this.table)),
    ];
    if (!edits.some((e) => e.kind === 'changed')) return edits.map(outcome);
    let written: OperationResult;
    try {
      await this.write(table, draft.result(), opts);
      written = OK;
    } catch (err) {
      // R4: an aborted call rejects as a whole; other write failures are each operation's.
      if (isAbortError(err)) throw err;
      written = { ok: false, error: err };
    }
    return edits.map((e) => (e.kind === 'changed' ? written : outcome(e)));
  }

  async createRoute(
    clusterName: string,
    nameHint: string,
    route: Readonly<Route>,
    opts: CallOptions,
  ): Promise<Route> {
    const [result] = await this.one(clusterName, { deletes: [], creates: [{ nameHint, route }] }, opts);
    if (!result!.ok) throw result!.error;
    // R66: the route as listRoutes will report it.
    const want = new TableDraft([], this.nodes).desired(route);
    return {
      name: want instanceof Error ? '' : want.name,
      targetNode: route.targetNode,
      targetNodeAddresses: [],
      enableNodeAddresses: false,
      destinationCIDR: route.destinationCIDR,
      blackhole: false,
    };
  }

  async deleteRoute(clusterName: string, route: Readonly<Route>, opts: CallOptions): Promise<void> {
    const [result] = await this.one(clusterName, { deletes: [route], creates: [] }, opts);
    if (!result!.ok) throw result!.error;
  }

  private one(clusterName: string, plan: RoutePlan, opts: CallOptions): Promise<OperationResult[]> {
    const run = this.serial.then(() => this.applyRoutes(clusterName, plan, opts));
    this.serial = run.catch(() => undefined);
    return run;
  }

  private async read(opts: CallOptions): Promise<RouteTable | undefined> {
    throwIfAborted(opts.signal);
    try {
      return await this.api.get(this.config.resourceGroup, this.config.routeTableName, opts.signal);
    } catch (err) {
      throw toRouteError(err, `GET ${this.table}`, opts.signal);
    }
  }

  /** One PUT of the whole table; a missing table is created in the configured location. */
  private async write(
    current: RouteTable | undefined,
    routes: RouteTable['routes'],
    opts: CallOptions,
  ): Promise<void> {
    throwIfAborted(opts.signal);
    const { resourceGroup, routeTableName, location } = this.config;
    const creating = current === undefined;
    const body: RouteTable = creating ? { location, routes } : { ...current, routes };
    const what = creating
      ? `PUT ${this.table} (creating it in ${location})`
      : `PUT ${this.table} with ${routes?.length ?? 0} routes`;
    try {
      await this.api.put(resourceGroup, routeTableName, body, {
        signal: opts.signal,
        ...(creating ? { ifNoneMatch: '*' } : current.etag !== undefined ? { ifMatch: current.etag } : {}),
      });
    } catch (err) {
      throw toRouteError(err, what, opts.signal);
    }
  }
}

function outcome(e: EditOutcome): OperationResult {
  return e.kind === 'failed' ? { ok: false, error: e.error } : OK;
}

/**
 * An Azure route as the controller sees it, or undefined for a route that is
 * not the cluster's by name (never listed, so never deleted). A route whose
 * node is gone has targetNode ''; one whose next hop is no longer its node's
 * InternalIP is a blackhole, replaced in the same reconcile (R20).
 */
export function toRoute(
  r: NonNullable<RouteTable['routes']>[number],
  nodes: ReadonlyMap<string, NonNullable<ReturnType<NodeLister['get']>>>,
): Route | undefined {
  const name = r.name ?? '';
  const prefix = r.addressPrefix ?? '';
  const owner = routeOwner(name, prefix);
  if (owner === undefined || prefix === '') return undefined;
  const node = nodes.get(owner);
  const family = familyOf(prefix);
  const want = node !== undefined && family !== undefined ? nextHopFor(node, family) : undefined;
  const delivers =
    r.nextHopType === 'VirtualAppliance' &&
    want !== undefined &&
    canonicalIP(r.nextHopIpAddress ?? '') === canonicalIP(want);
  return {
    name,
    targetNode: node?.metadata?.name ?? '',
    targetNodeAddresses: [],
    enableNodeAddresses: false,
    destinationCIDR: prefix,
    blackhole: node !== undefined && !delivers,
  };
}
