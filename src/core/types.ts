// The provider contract (SPEC §2.1). Cloud plug-ins implement `Routes`; the
// controller owns counting, timing, timeouts and retries (R6, R7, R9).

export interface NodeAddress {
  readonly type: string; // InternalIP, ExternalIP, Hostname, ...
  readonly address: string;
}

export interface Route {
  /** Provider's name, informational; '' on create. */
  name: string;
  /** Node name; '' if the target is no known node. */
  targetNode: string;
  targetNodeAddresses: readonly NodeAddress[];
  /** True only if listRoutes fills targetNodeAddresses faithfully. */
  enableNodeAddresses: boolean;
  /** As the cloud reports it. */
  destinationCIDR: string;
  blackhole: boolean;
}

export interface ReconcileScope {
  readonly id: string;
  /** Lives one reconcile: providers may cache e.g. a looked-up route table. */
  readonly scratch: Map<string, unknown>;
}

export interface CallOptions {
  /** Aborted on timeout, shutdown, leadership loss (R4). */
  readonly signal: AbortSignal;
  readonly reconcile: ReconcileScope;
}

export interface RoutePlan {
  deletes: Readonly<Route>[];
  creates: { nameHint: string; route: Readonly<Route> }[];
}

/**
 * One result per operation: deletes then creates, in plan order. A create's result MAY carry
 * the route exactly as listRoutes would list it (R66, as createRoute may resolve to it).
 */
export type OperationResult = { ok: true; route?: Route } | { ok: false; error: unknown };

export interface Routes {
  listRoutes(clusterName: string, opts: CallOptions): Promise<Route[]>;
  createRoute(
    clusterName: string,
    nameHint: string,
    route: Readonly<Route>,
    opts: CallOptions,
    // R66: a provider MAY resolve to the created route exactly as listRoutes would list it.
  ): Promise<void | Route>;
  deleteRoute(clusterName: string, route: Readonly<Route>, opts: CallOptions): Promise<void>;
  /** Optional batch hook (R8): called once per reconcile instead of per-route calls. */
  applyRoutes?(clusterName: string, plan: RoutePlan, opts: CallOptions): Promise<OperationResult[]>;
  /**
   * Optional (R115): how many routes the container (route table, router, network, project quota)
   * allows and holds. Called right after each successful listRoutes, with the same options (so
   * the same reconcile scratch); answers from what that list read and a limit it keeps, making
   * no cloud call of its own per reconcile. undefined: the cloud cannot tell.
   */
  routeTableRoom?(clusterName: string, opts: CallOptions): Promise<RouteTableRoom | undefined>;
}

/** R115: the room in the container that holds the cluster's routes. */
export interface RouteTableRoom {
  /** What holds the routes and counts against the limit, for messages: "route table rtb-0abc". */
  readonly container: string;
  /** Routes the container (or quota) allows. */
  readonly limit: number;
  /** Routes it holds now, the cluster's and others' (those that count against the limit). */
  readonly used: number;
  /** How to raise the limit, one sentence for Events, logs and `plan`. */
  readonly raise: string;
}

export interface CloudProvider {
  readonly name: string;
  /** undefined: the cloud has no route support. */
  routes(): Routes | undefined;
  /**
   * R68: the cloud's documented limit for route writes, from which the adaptive
   * write budget starts; 'unlimited' (or absent): writes are not paced under
   * --cloud-write-qps=auto.
   */
  readonly writeLimit?: { readonly qps: number; readonly burst: number } | 'unlimited';
  /**
   * R67: the node fields listRoutes maps a route's target by. A change of one
   * of them makes the route cache list again. Absent: all of them.
   */
  readonly routeTargetKeys?: readonly ('uid' | 'providerID' | 'addresses')[];
  /**
   * R124: what a rollback to the cloud's own cloud-controller-manager would leave wrong with
   * these cluster CIDRs (routes that CCM cannot see, names it replaces); `plan` prints them.
   */
  rollbackHazards?(clusterCIDRs: readonly string[]): string[];
}

/**
 * The subset of core/v1 Node the controller reads. Structurally compatible
 * with `V1Node` from @kubernetes/client-node, so informer objects pass as-is.
 */
export interface NodeCondition {
  type: string;
  status: string;
  reason?: string;
  message?: string;
  lastTransitionTime?: Date | string;
  lastHeartbeatTime?: Date | string;
}

export interface Node {
  metadata?: {
    name?: string;
    uid?: string;
    resourceVersion?: string;
    creationTimestamp?: Date | string;
  };
  spec?: {
    podCIDRs?: string[];
    providerID?: string;
  };
  status?: {
    addresses?: NodeAddress[];
    conditions?: NodeCondition[];
  };
}

/** Read-only view of the node cache handed to provider factories (SPEC §2.1). */
export interface NodeLister {
  get(name: string): Node | undefined;
  list(): readonly Node[];
}

/** A registered factory builds the provider from the --cloud-config text. */
export type CloudProviderFactory = (
  config: string,
  nodes: NodeLister,
) => CloudProvider | Promise<CloudProvider>;
