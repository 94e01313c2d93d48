// R123: another writer on the cluster's routes. Every list is compared with what the last
// list showed plus this controller's own confirmed writes since; a route in the cluster
// CIDRs that appeared, vanished (while its node lives) or now points at another node was
// changed by someone else. One such list is counted and logged (a person may have fixed a
// route by hand); a second within the window raises the suspicion: a gauge, a Warning
// Event per change on its node, naming the likely cause, usually a cloud-controller-manager
// whose route controller was left on.
import { tryParseCIDR, type Cidr } from '../core/cidr.ts';
import type { Clock } from '../core/clock.ts';
import type { EventRecorder, Logger } from '../core/ports.ts';
import { isResponsibleForRoute } from '../core/responsibility.ts';
import type { CallOptions, NodeLister, OperationResult, Route, RoutePlan, Routes } from '../core/types.ts';
import type { RouteControllerMetrics } from './metrics.ts';

export type ForeignChangeKind = 'created' | 'deleted' | 'repointed';

export interface ForeignChange {
  readonly change: ForeignChangeKind;
  /** Canonical destination. */
  readonly destination: string;
  /** The node the route belonged to (deleted, repointed) or points at now (created); '' if none. */
  readonly node: string;
  /** repointed: the node it points at now. */
  readonly to?: string;
}

export interface SecondWriterOptions {
  readonly clusterCIDRs: readonly Cidr[];
  readonly nodes: NodeLister;
  readonly recorder: EventRecorder;
  readonly logger: Logger;
  readonly clock: Clock;
  readonly metrics?: RouteControllerMetrics | undefined;
  /** Two listings with foreign changes within this raise the suspicion (default 1 h). */
  readonly windowMs?: number;
}

export const SECOND_WRITER_REASON = 'RouteChangedByAnotherWriter';
export const SECOND_WRITER_WINDOW_MS = 3_600_000;
/** Cloud lists are eventually consistent (EC2's, ARM's): our own write is trusted over a list this soon after it. */
export const OWN_WRITE_GRACE_MS = 60_000;

const CAUSE =
  'likely another route controller writes these routes, such as a cloud-controller-manager whose route controller is still on ' +
  '(turn it off there: --controllers without route, or --configure-cloud-routes=false; for hcloud HCLOUD_NETWORK_ROUTES_ENABLED=false)';

export class SecondWriterDetector {
  private readonly opts: SecondWriterOptions;
  /** destination → target node, as the last list showed it and our writes since left it. */
  private expected: Map<string, string> | undefined;
  /** Destinations whose state our own failed or unanswered writes left unknown. */
  private readonly uncertain = new Set<string>();
  /** When our own last write to each destination settled: a list soon after may not show it yet. */
  private readonly recent = new Map<string, number>();
  /** Times of listings that showed foreign changes, within the window. */
  private sightings: number[] = [];

  constructor(opts: SecondWriterOptions) {
    this.opts = opts;
  }

  get suspected(): boolean {
    return this.sightings.length >= 2;
  }

  /** The provider's routes, observed: lists are compared, our own writes recorded. */
  wrap(inner: Routes): Routes {
    const routes: Routes = {
      listRoutes: async (clusterName: string, opts: CallOptions) => {
        const listed = await inner.listRoutes(clusterName, opts);
        this.listed(listed);
        return listed;
      },
      createRoute: async (
        clusterName: string,
        nameHint: string,
        route: Readonly<Route>,
        opts: CallOptions,
      ) => {
        try {
          const out = await inner.createRoute(clusterName, nameHint, route, opts);
          this.wrote(route.destinationCIDR, route.targetNode);
          return out;
        } catch (err) {
          this.wrote(route.destinationCIDR, undefined);
          throw err;
        }
      },
      deleteRoute: async (clusterName: string, route: Readonly<Route>, opts: CallOptions) => {
        try {
          await inner.deleteRoute(clusterName, route, opts);
          this.wrote(route.destinationCIDR, null);
        } catch (err) {
          this.wrote(route.destinationCIDR, undefined);
          throw err;
        }
      },
    };
    // A getter: the batch hook is looked up on each use, as the executor reads it from the provider.
    Object.defineProperty(routes, 'applyRoutes', {
      enumerable: true,
      get: () => {
        const apply = inner.applyRoutes?.bind(inner);
        return apply === undefined
          ? undefined
          : (c: string, p: RoutePlan, o: CallOptions) => this.apply(apply, c, p, o);
      },
    });
    return routes;
  }

  private async apply(
    apply: NonNullable<Routes['applyRoutes']>,
    clusterName: string,
    plan: RoutePlan,
    opts: CallOptions,
  ): Promise<OperationResult[]> {
    let results: OperationResult[] | undefined;
    try {
      results = await apply(clusterName, plan, opts);
      return results;
    } finally {
      plan.deletes.forEach((r, i) => this.wrote(r.destinationCIDR, results?.[i]?.ok ? null : undefined));
      plan.creates.forEach(({ route }, i) => {
        const ok = results?.[plan.deletes.length + i]?.ok;
        this.wrote(route.destinationCIDR, ok ? route.targetNode : undefined);
      });
    }
  }

  /** Our own write: the route now targets `node`, is gone (null), or is unknown (undefined). */
  private wrote(destination: string, node: string | null | undefined): void {
    const dest = this.ours(destination);
    if (dest === undefined || this.expected === undefined) return;
    this.recent.set(dest, this.opts.clock.now());
    if (node === undefined) this.uncertain.add(dest);
    else if (node === null) this.expected.delete(dest);
    else this.expected.set(dest, node);
  }

  private ours(destination: string): string | undefined {
    const cidr = tryParseCIDR(destination);
    if (cidr === undefined || !isResponsibleForRoute(this.opts.clusterCIDRs, cidr)) return undefined;
    return cidr.canonical;
  }

  /** Compares a list with the expectation and reports what someone else changed. */
  listed(routes: readonly Route[]): ForeignChange[] {
    const current = new Map<string, Route>();
    for (const r of routes) {
      const dest = this.ours(r.destinationCIDR);
      if (dest !== undefined) current.set(dest, r);
    }
    const changes = this.expected === undefined ? [] : this.diff(this.expected, current);
    this.expected = new Map([...current].map(([d, r]) => [d, r.targetNode]));
    this.uncertain.clear();
    const settled = this.opts.clock.now() - OWN_WRITE_GRACE_MS;
    for (const [dest, at] of this.recent) if (at <= settled) this.recent.delete(dest);
    this.report(changes);
    return changes;
  }

  /**
   * A destination whose state our own writes left unknown, or that we wrote so recently that an
   * eventually consistent list may not show it yet: not evidence of another writer.
   */
  private unsure(destination: string): boolean {
    const at = this.recent.get(destination);
    return (
      this.uncertain.has(destination) || (at !== undefined && this.opts.clock.now() - at < OWN_WRITE_GRACE_MS)
    );
  }

  private diff(expected: ReadonlyMap<string, string>, current: ReadonlyMap<string, Route>): ForeignChange[] {
    const changes: ForeignChange[] = [];
    for (const [destination, r] of current) {
      if (this.unsure(destination)) continue;
      const was = expected.get(destination);
      if (was === undefined) changes.push({ change: 'created', destination, node: r.targetNode });
      // A target that became '' is a node that left (or a blackhole), not a write.
      else if (was !== '' && r.targetNode !== '' && was !== r.targetNode && !r.blackhole) {
        changes.push({ change: 'repointed', destination, node: was, to: r.targetNode });
      }
    }
    for (const [destination, was] of expected) {
      if (this.unsure(destination) || current.has(destination)) continue;
      // Only a live node's route: a cloud may drop the routes of an instance that is gone.
      if (was !== '' && this.opts.nodes.get(was) !== undefined) {
        changes.push({ change: 'deleted', destination, node: was });
      }
    }
    return changes;
  }

  private report(changes: readonly ForeignChange[]): void {
    const { clock, metrics, logger } = this.opts;
    const now = clock.now();
    const windowMs = this.opts.windowMs ?? SECOND_WRITER_WINDOW_MS;
    this.sightings = this.sightings.filter((t) => now - t < windowMs);
    if (changes.length > 0) this.sightings.push(now);
    metrics?.secondWriterSuspected.set(this.suspected ? 1 : 0);
    for (const c of changes) {
      metrics?.foreignRouteChanges.inc({ change: c.change });
      const what = describe(c);
      if (!this.suspected) {
        logger.info(`${what} by another writer since the last list`);
        continue;
      }
      const message = `${what} by another writer since the last list (out-of-band route changes in ${this.sightings.length} listings within ${Math.round(windowMs / 60_000)} min): ${CAUSE}`;
      logger.warn(message);
      // On the node whose route it is (for a repoint, the one that lost it).
      const uid = c.node === '' ? undefined : this.opts.nodes.get(c.node)?.metadata?.uid;
      if (uid !== undefined) {
        this.opts.recorder.event({ name: c.node, uid }, 'Warning', SECOND_WRITER_REASON, message);
      }
    }
  }
}

function describe(c: ForeignChange): string {
  const of = c.node === '' ? '' : ` of node ${c.node}`;
  if (c.change === 'created')
    return `Route ${c.destination}${c.node === '' ? '' : ` to node ${c.node}`} was created`;
  if (c.change === 'deleted') return `Route ${c.destination}${of} was deleted`;
  return `Route ${c.destination}${of} was repointed to node ${c.to}`;
}
