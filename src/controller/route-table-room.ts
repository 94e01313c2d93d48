// The route table's room (R115–R117): how many routes the cloud's container allows and holds,
// read with every listRoutes, kept current by the controller's own confirmed writes, exported
// as gauges and named in the Event of a create the cloud refused because the container is full.
// It wraps the provider's Routes, so the reconcile itself knows nothing of it.
import { parseCIDR, type Cidr } from '../core/cidr.ts';
import { errorKind, errorMessage, isAbortError, QuotaExceededError, retryAfterMs } from '../core/errors.ts';
import type { Logger } from '../core/ports.ts';
import { isResponsibleForRoute } from '../core/responsibility.ts';
import type {
  CallOptions,
  OperationResult,
  Route,
  RoutePlan,
  Routes,
  RouteTableRoom,
} from '../core/types.ts';
import type { RouteControllerMetrics } from './metrics.ts';

/** R116: the share of the limit from which the room is reported as running out. */
export const ROOM_WARNING_RATIO = 0.9;

/** What the controller knows of the room: the provider's last answer, kept current by its writes. */
export interface RoomView extends RouteTableRoom {
  /** The cluster's managed routes (R13) among `used`. */
  readonly cluster: number;
  /** Everything else in the container that counts against the limit. */
  readonly others: number;
  /** limit - used, never below 0. */
  readonly left: number;
}

export interface RoomTrackerDeps {
  readonly clusterCIDRs: readonly Cidr[];
  readonly metrics: RouteControllerMetrics | undefined;
  readonly logger: Logger;
}

export class RouteTableRoomTracker {
  private readonly deps: RoomTrackerDeps;
  private room: RouteTableRoom | undefined;
  private cluster = 0;
  private others = 0;
  private warned = false;

  constructor(deps: RoomTrackerDeps) {
    this.deps = deps;
  }

  /** The current view, or undefined while the provider has not told (or cannot tell). */
  view(): RoomView | undefined {
    const room = this.room;
    if (room === undefined) return undefined;
    const used = this.cluster + this.others;
    return {
      ...room,
      used,
      cluster: this.cluster,
      others: this.others,
      left: Math.max(0, room.limit - used),
    };
  }

  /** R116: the provider's answer after a list; `listed` is what that list returned. */
  observe(room: RouteTableRoom | undefined, listed: readonly Route[]): void {
    this.room = room;
    if (room === undefined) {
      this.deps.metrics?.routeTableRoutes.reset();
      this.deps.metrics?.routeTableLimit.reset();
      return;
    }
    const cluster = listed.filter((r) => this.managed(r)).length;
    this.cluster = cluster;
    // A provider may list only the cluster's routes (gce) or count some it does not list.
    this.others = Math.max(0, room.used - cluster);
    this.publish();
  }

  /** R116: a create (+1) or delete (-1) the cloud confirmed, between lists. */
  adjust(delta: number): void {
    if (this.room === undefined) return;
    this.cluster = Math.max(0, this.cluster + delta);
    this.publish();
  }

  /**
   * R117: a create refused because the container is full names the limit, what holds it and
   * how to raise it (the message reaches the node's Event, R34). Other errors pass unchanged.
   */
  explain(err: unknown): unknown {
    const v = this.view();
    if (v === undefined || errorKind(err) !== 'quota_exceeded') return err;
    const after = retryAfterMs(err);
    return new QuotaExceededError(
      `${errorMessage(err)}; ${v.container} holds ${v.used} of its limit of ${v.limit} routes ` +
        `(${v.cluster} of this cluster, ${v.others} others); no route of a live node is removed to make room: ${v.raise}`,
      { cause: err, ...(after === undefined ? {} : { retryAfterMs: after }) },
    );
  }

  private managed(r: Route): boolean {
    let dest: Cidr;
    try {
      dest = parseCIDR(r.destinationCIDR);
    } catch {
      return false;
    }
    return isResponsibleForRoute(this.deps.clusterCIDRs, dest);
  }

  private publish(): void {
    const v = this.view()!;
    const m = this.deps.metrics;
    m?.routeTableRoutes.set({ owner: 'cluster' }, v.cluster);
    m?.routeTableRoutes.set({ owner: 'other' }, v.others);
    m?.routeTableLimit.set(v.limit);
    const full = v.used >= ROOM_WARNING_RATIO * v.limit;
    if (full && !this.warned)
      this.deps.logger.warn(
        `${v.container} holds ${v.used} of its limit of ${v.limit} routes (${v.left} left): ${v.raise}`,
      );
    this.warned = full;
  }
}

/**
 * R115–R117: the provider's Routes, reading the room with every successful listRoutes (in the
 * same call, so it costs no call of the controller's own) and counting confirmed writes.
 * Providers without `routeTableRoom` are returned unwrapped.
 */
export function withRouteTableRoom(routes: Routes, tracker: RouteTableRoomTracker, logger: Logger): Routes {
  if (routes.routeTableRoom === undefined) return routes;
  return new RoomReadingRoutes(routes, tracker, logger);
}

class RoomReadingRoutes implements Routes {
  private readonly inner: Routes;
  private readonly tracker: RouteTableRoomTracker;
  private readonly logger: Logger;
  private lastFailure: string | undefined;
  private readonly apply = (c: string, p: RoutePlan, o: CallOptions): Promise<OperationResult[]> =>
    this.applyBatch(c, p, o);

  constructor(inner: Routes, tracker: RouteTableRoomTracker, logger: Logger) {
    this.inner = inner;
    this.tracker = tracker;
    this.logger = logger;
  }

  /** R8: the executor batches iff the provider does (asked at each reconcile, as without the wrapper). */
  get applyRoutes(): Routes['applyRoutes'] {
    return this.inner.applyRoutes === undefined ? undefined : this.apply;
  }

  async listRoutes(clusterName: string, opts: CallOptions): Promise<Route[]> {
    const listed = await this.inner.listRoutes(clusterName, opts);
    try {
      this.tracker.observe(await this.inner.routeTableRoom!(clusterName, opts), listed);
    } catch (err) {
      if (isAbortError(err) && opts.signal.aborted) throw err;
      // The room is information only: the list stands (R115). Logged once per distinct error.
      const msg = `Could not read the route table's room: ${errorMessage(err)}`;
      if (msg !== this.lastFailure) this.logger.warn(msg);
      else this.logger.v(2).info(msg);
      this.lastFailure = msg;
      return listed;
    }
    this.lastFailure = undefined;
    return listed;
  }

  async createRoute(
    clusterName: string,
    nameHint: string,
    route: Readonly<Route>,
    opts: CallOptions,
  ): Promise<void | Route> {
    try {
      const r = await this.inner.createRoute(clusterName, nameHint, route, opts);
      this.tracker.adjust(1);
      return r;
    } catch (err) {
      throw this.tracker.explain(err);
    }
  }

  async deleteRoute(clusterName: string, route: Readonly<Route>, opts: CallOptions): Promise<void> {
    await this.inner.deleteRoute(clusterName, route, opts);
    this.tracker.adjust(-1);
  }

  routeTableRoom(clusterName: string, opts: CallOptions): Promise<RouteTableRoom | undefined> {
    return this.inner.routeTableRoom!(clusterName, opts);
  }

  private async applyBatch(
    clusterName: string,
    plan: RoutePlan,
    opts: CallOptions,
  ): Promise<OperationResult[]> {
    const results = await this.inner.applyRoutes!(clusterName, plan, opts);
    const nDeletes = plan.deletes.length;
    return results.map((r, i) => {
      if (r.ok) {
        this.tracker.adjust(i < nDeletes ? -1 : 1);
        return r;
      }
      return i < nDeletes ? r : { ok: false, error: this.tracker.explain(r.error) };
    });
  }
}
