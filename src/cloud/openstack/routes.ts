// Cluster routes as the extra routes of one Neutron router ([Route] router-id), as
// cloud-provider-openstack keeps them: destination = pod CIDR, nexthop = the node's InternalIP
// of that family. Each reconcile's plan goes out as one batch (R8):
//   * with `extraroute-atomic`, one remove_extraroutes for the deletes and one add_extraroutes
//     for the creates, each a transaction in Neutron that leaves every other route alone;
//   * with `extraroute` only, one PUT of the whole route list carrying If-Match with the
//     revision_number it was read at, so a concurrent writer (another controller, an operator)
//     makes it fail 412 instead of being overwritten; the controller re-runs the batch (R24),
//     which reads the router again. Upstream guards this read-modify-write with an in-process
//     mutex only.
// A batch Neutron refuses as a whole for one bad route (a next hop on no router subnet, the
// router's max_routes) is split into single operations, so one node's bad address never costs
// another node its route.
import { PermanentError, isAbortError, throwIfAborted } from '../../core/errors.ts';
import type {
  CallOptions,
  NodeLister,
  OperationResult,
  Route,
  RoutePlan,
  Routes,
  RouteTableRoom,
} from '../../core/types.ts';
import type { ExtraRoute, NeutronApi, Router } from './neutron.ts';
import { AddressPairs } from './pairs.ts';
import { routerRoom } from './room.ts';
import {
  extraRouteOf,
  familyOf,
  nextHopFor,
  nodesByAddress,
  sameDestination,
  sameRoute,
  toRoute,
} from './targets.ts';

export interface OpenStackRoutesOptions {
  readonly neutron: NeutronApi;
  readonly routerId: string;
  readonly nodes: NodeLister;
  /** R118: the router's route limit ([Route] max-routes); default Neutron's 30. */
  readonly maxRoutes?: number;
}

interface Features {
  readonly atomic: boolean;
  readonly addressPairs: boolean;
}

/** The router as listRoutes read it, for the same reconcile's read-modify-write (saves a GET). */
class ListedRouter {
  readonly router: Router;
  constructor(router: Router) {
    this.router = router;
  }
}

/** One operation of the plan, resolved to the extra route it adds or removes. */
interface Op {
  readonly kind: 'delete' | 'create';
  readonly route: ExtraRoute | undefined;
  /** A create's node. */
  readonly targetNode?: string;
  error: Error | undefined;
}

const OK: OperationResult = { ok: true };

export class OpenStackRoutes implements Routes {
  private readonly neutron: NeutronApi;
  private readonly routerId: string;
  private readonly nodes: NodeLister;
  private readonly pairs: AddressPairs;
  private readonly maxRoutes: number | undefined;
  private features: Promise<Features> | undefined;
  // createRoute/deleteRoute outside a batch take turns: together they would race on If-Match.
  private serial: Promise<unknown> = Promise.resolve();

  constructor(opts: OpenStackRoutesOptions) {
    this.neutron = opts.neutron;
    this.routerId = opts.routerId;
    this.nodes = opts.nodes;
    this.pairs = new AddressPairs(opts.neutron, opts.routerId);
    this.maxRoutes = opts.maxRoutes;
  }

  async listRoutes(_clusterName: string, opts: CallOptions): Promise<Route[]> {
    throwIfAborted(opts.signal);
    await this.supported(opts);
    const router = await this.neutron.getRouter(this.routerId, opts.signal);
    opts.reconcile.scratch.set(this.scratchKey(), new ListedRouter(router));
    const byAddress = nodesByAddress(this.nodes);
    return router.routes.map((r) => toRoute(r, byAddress));
  }

  /** R115: the router listRoutes just read, against its limit; no call of its own. */
  routeTableRoom(_clusterName: string, opts: CallOptions): Promise<RouteTableRoom | undefined> {
    const listed = opts.reconcile.scratch.get(this.scratchKey());
    const router = listed instanceof ListedRouter ? listed.router : undefined;
    return Promise.resolve(router && routerRoom(router, this.maxRoutes));
  }

  async applyRoutes(_clusterName: string, plan: RoutePlan, opts: CallOptions): Promise<OperationResult[]> {
    throwIfAborted(opts.signal);
    const features = await this.supported(opts);
    const ops: Op[] = [
      ...plan.deletes.map((d) => this.deleteOp(d)),
      ...plan.creates.map((c) => this.createOp(c.route)),
    ];
    const deletes = ops.filter((o) => o.kind === 'delete' && o.error === undefined);
    const creates = ops.filter((o) => o.kind === 'create' && o.error === undefined);
    // A pod CIDR is allowed on its node's port before the route sends traffic there.
    if (features.addressPairs) await this.pairStep('add', creates, opts);
    const ready = creates.filter((o) => o.error === undefined);
    if (features.atomic) {
      await this.atomic(deletes, ready, opts);
    } else {
      await this.readModifyWrite(deletes, ready, opts);
    }
    if (features.addressPairs) {
      // Revoke a deleted route's CIDR, unless a create of this plan routes it to the same port.
      const kept = ready.filter((o) => o.error === undefined).map((o) => o.route!);
      const revoked = deletes.filter((o) => o.error === undefined);
      await this.pairStep('remove', revoked, opts, kept);
    }
    return ops.map((o): OperationResult => {
      if (o.error !== undefined) return { ok: false, error: o.error };
      // R66: a create's route as listRoutes will report it, for the controller's route cache.
      return o.kind === 'create' ? { ok: true, route: listedAs(o.route!, o.targetNode!) } : OK;
    });
  }

  async createRoute(
    clusterName: string,
    nameHint: string,
    route: Readonly<Route>,
    opts: CallOptions,
  ): Promise<Route> {
    const [result] = await this.one(clusterName, { deletes: [], creates: [{ nameHint, route }] }, opts);
    if (!result!.ok) throw result!.error;
    return listedAs(this.createOp(route).route!, route.targetNode);
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

  private scratchKey(): string {
    return `openstack/router/${this.routerId}`;
  }

  /** The extensions, read once; a cloud without `extraroute` has no route support. */
  private async supported(opts: CallOptions): Promise<Features> {
    this.features ??= this.neutron.extensions(opts.signal).then((ext) => {
      if (!ext.has('extraroute') && !ext.has('extraroute-atomic')) {
        throw new PermanentError(
          'Neutron does not offer the "extraroute" extension: the router cannot hold routes to nodes',
        );
      }
      return { atomic: ext.has('extraroute-atomic'), addressPairs: ext.has('allowed-address-pairs') };
    });
    try {
      return await this.features;
    } catch (err) {
      // Not kept: a timeout or a Keystone outage must not disable the plug-in for good.
      this.features = undefined;
      throw err;
    }
  }

  private deleteOp(route: Readonly<Route>): Op {
    const extra = extraRouteOf(route);
    if (extra !== undefined) return { kind: 'delete', route: extra, error: undefined };
    const error = new PermanentError(
      `delete route ${route.name || route.destinationCIDR}: not a route this plug-in listed (its name must be "<destination> via <nexthop>")`,
    );
    return { kind: 'delete', route: undefined, error };
  }

  private createOp(route: Readonly<Route>): Op {
    const what = `create route ${route.destinationCIDR} to node ${route.targetNode}`;
    const family = familyOf(route.destinationCIDR);
    if (family === undefined) {
      return {
        kind: 'create',
        route: undefined,
        error: new PermanentError(`${what}: not a CIDR`),
      };
    }
    const addresses =
      route.targetNodeAddresses.length > 0
        ? route.targetNodeAddresses
        : (this.nodes.get(route.targetNode)?.status?.addresses ?? []);
    const nexthop = nextHopFor(addresses, family);
    if (nexthop === undefined) {
      const error = new PermanentError(`${what}: the node has no IPv${family} InternalIP to route to`);
      return { kind: 'create', route: undefined, error };
    }
    return {
      kind: 'create',
      route: { destination: route.destinationCIDR, nexthop },
      targetNode: route.targetNode,
      error: undefined,
    };
  }

  private async pairStep(
    step: 'add' | 'remove',
    ops: readonly Op[],
    opts: CallOptions,
    keep: readonly ExtraRoute[] = [],
  ): Promise<void> {
    const changes = ops.map((o) => ({ nexthop: o.route!.nexthop, destination: o.route!.destination }));
    const errors = await (step === 'add'
      ? this.pairs.add(changes, opts)
      : this.pairs.remove(changes, keep, opts));
    errors.forEach((e, i) => {
      if (e !== undefined) ops[i]!.error = e;
    });
  }

  /** extraroute-atomic: deletes in one call, then creates in one, then R2's replacements. */
  private async atomic(deletes: readonly Op[], creates: readonly Op[], opts: CallOptions): Promise<void> {
    await this.batch(deletes, opts, (routes) =>
      this.neutron.removeExtraRoutes(this.routerId, routes, opts.signal),
    );
    let after: Router | undefined;
    await this.batch(creates, opts, async (routes) => {
      after = await this.neutron.addExtraRoutes(this.routerId, routes, opts.signal);
      return after;
    });
    // R2: a destination another next hop still holds (out of band: Neutron keeps both) is
    // replaced, never left beside ours.
    const added = creates.filter((o) => o.error === undefined).map((o) => o.route!);
    const foreign = (after?.routes ?? []).filter(
      (r) => added.some((a) => sameDestination(a, r)) && !added.some((a) => sameRoute(a, r)),
    );
    if (foreign.length === 0) return;
    try {
      await this.neutron.removeExtraRoutes(this.routerId, foreign, opts.signal);
    } catch (err) {
      if (isAbortError(err)) throw err;
      for (const o of creates) if (foreign.some((f) => sameDestination(f, o.route!))) o.error = err as Error;
    }
  }

  /** One call for all `ops`; a whole-batch refusal of a bad request is retried one by one. */
  private async batch(
    ops: readonly Op[],
    opts: CallOptions,
    call: (routes: ExtraRoute[]) => Promise<Router>,
  ): Promise<void> {
    if (ops.length === 0) return;
    try {
      await call(ops.map((o) => o.route!));
      return;
    } catch (err) {
      if (isAbortError(err)) throw err;
      if (ops.length === 1 || !splittable(err)) {
        for (const o of ops) o.error = err as Error;
        return;
      }
    }
    for (const o of ops) {
      try {
        await call([o.route!]);
      } catch (err) {
        if (isAbortError(err)) throw err;
        o.error = err as Error;
      }
    }
  }

  /** extraroute only: one PUT of the whole list, If-Match the revision it was read at. */
  private async readModifyWrite(
    deletes: readonly Op[],
    creates: readonly Op[],
    opts: CallOptions,
  ): Promise<void> {
    const ops = [...deletes, ...creates];
    if (ops.length === 0) return;
    try {
      await this.writeList(ops, opts);
    } catch (err) {
      if (isAbortError(err)) throw err;
      if (ops.length === 1 || !splittable(err)) {
        for (const o of ops) o.error = err as Error;
        return;
      }
      for (const o of ops) {
        try {
          await this.writeList([o], opts);
        } catch (e) {
          if (isAbortError(e)) throw e;
          o.error = e as Error;
        }
      }
    }
  }

  private async writeList(ops: readonly Op[], opts: CallOptions): Promise<void> {
    const scratch = opts.reconcile.scratch;
    const listed = scratch.get(this.scratchKey());
    // Used once: after any write the revision has moved on.
    scratch.delete(this.scratchKey());
    const router =
      listed instanceof ListedRouter
        ? listed.router
        : await this.neutron.getRouter(this.routerId, opts.signal);
    let routes = [...router.routes];
    const changed = new Set<Op>();
    for (const o of ops) {
      const r = o.route!;
      const before = routes.length;
      if (o.kind === 'delete') {
        routes = routes.filter((x) => !sameRoute(x, r)); // R3: exactly this one
      } else {
        // R2: the destination moves to our next hop; present already → nothing to do.
        const present = routes.some((x) => sameRoute(x, r));
        routes = routes.filter((x) => !sameDestination(x, r) || sameRoute(x, r));
        if (!present) routes.push({ destination: r.destination, nexthop: r.nexthop });
        if (!present || routes.length !== before) changed.add(o);
        continue;
      }
      if (routes.length !== before) changed.add(o);
    }
    if (changed.size === 0) return;
    await this.neutron.setRoutes(this.routerId, routes, router.revision, opts.signal);
  }
}

function listedAs(r: ExtraRoute, targetNode: string): Route {
  return { ...toRoute(r, new Map()), targetNode, blackhole: false };
}

/** A 400 about the request's content: another subset of the batch may pass. */
function splittable(err: unknown): boolean {
  return (
    (err as { kind?: unknown })?.kind === 'permanent' ||
    (err as { kind?: unknown })?.kind === 'quota_exceeded'
  );
}
