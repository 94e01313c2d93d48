// Incremental planning (SPEC R103–R105): what a cached reconcile must plan
// again. The watch handlers mark the nodes the trigger filter saw change; a
// cached reconcile plans only the closure of those marks (the nodes, the
// destinations they claim or are routed to, every other claimant of those
// destinations, every route to them) against the route cache. Outside that
// closure nothing changed since a plan that left nothing to do, so a full plan
// would do nothing there either. Pure: no I/O, no clock.
import { destinationKey, type CachedRoute, type RouteCache } from './route-cache.ts';
import type { Node, NodeLister } from './types.ts';

/** What a cached reconcile took to plan: node names and destination keys. */
export interface FocusMarks {
  readonly names: ReadonlySet<string>;
  readonly destinations: ReadonlySet<string>;
}

/** The part of the cluster a focused plan reads. */
export interface FocusedView {
  readonly nodes: Node[];
  readonly routes: CachedRoute[];
}

function nameOf(n: Node): string {
  return n.metadata?.name ?? '';
}

function claimedKeys(n: Node | undefined): string[] {
  return (n?.spec?.podCIDRs ?? []).map(destinationKey);
}

export class PlanFocus {
  private names = new Set<string>();
  private destinations = new Set<string>();
  // Destination key → names of the nodes claiming it. A superset is harmless
  // (each claimant is read again from the node cache), a missing claimant is
  // not, so entries are added on every event and removed only when the event's
  // old object claimed them and the new one does not.
  private readonly claimants = new Map<string, string | string[]>();
  private tracking = false;
  private baseline = false;

  /**
   * The watch handlers are subscribed (true) or gone (false). Marks mean
   * something only from a listing reconcile after the subscription on.
   */
  track(on: boolean): void {
    this.tracking = on;
    this.baseline = false;
    this.names.clear();
    this.destinations.clear();
  }

  /** Whether a cached reconcile may plan from the marks (else it plans everything). */
  get ready(): boolean {
    return this.baseline;
  }

  /** R104: a node added, deleted, or updated with a trigger (or a new cloud identity). */
  nodeChanged(oldNode: Node | undefined, newNode: Node | undefined): void {
    for (const n of [oldNode, newNode]) if (n !== undefined) this.names.add(nameOf(n));
    const before = claimedKeys(oldNode);
    const after = claimedKeys(newNode);
    for (const k of [...before, ...after]) this.destinations.add(k);
    if (oldNode !== undefined) {
      const kept = newNode !== undefined && nameOf(newNode) === nameOf(oldNode) ? new Set(after) : new Set();
      for (const k of before) if (!kept.has(k)) this.unclaim(k, nameOf(oldNode));
    }
    if (newNode !== undefined) for (const k of after) this.claim(k, nameOf(newNode));
  }

  /** R105: a listing reconcile plans everything: the marks so far are spent; the index starts again. */
  reset(nodes: readonly Node[]): void {
    this.names.clear();
    this.destinations.clear();
    this.claimants.clear();
    this.baseline = this.tracking;
    for (const n of nodes) for (const k of claimedKeys(n)) this.claim(k, nameOf(n));
  }

  /** The marks since the last take (or reset); marks made from now on are new. */
  take(): FocusMarks {
    const marks = { names: this.names, destinations: this.destinations };
    this.names = new Set();
    this.destinations = new Set();
    return marks;
  }

  /** R105: what a reconcile left unsettled (or all it took, when it threw) is planned again. */
  restore(marks: FocusMarks): void {
    for (const n of marks.names) this.names.add(n);
    for (const d of marks.destinations) this.destinations.add(d);
  }

  /** Whether anything is marked (for tests and the plan report). */
  get pending(): number {
    return this.names.size + this.destinations.size;
  }

  /** R103: the closure of `marks` over the node cache and the route cache. */
  view(marks: FocusMarks, nodes: NodeLister, cache: RouteCache): FocusedView {
    const nameQueue = [...marks.names];
    const keyQueue = [...marks.destinations];
    const seenNames = new Set<string>();
    const seenKeys = new Set<string>();
    const routes = new Set<CachedRoute>();
    const found: Node[] = [];
    const takeRoute = (r: CachedRoute): void => {
      if (routes.has(r)) return;
      routes.add(r);
      if (r.route.targetNode !== '') nameQueue.push(r.route.targetNode);
      keyQueue.push(destinationKey(r.route.destinationCIDR));
    };
    while (nameQueue.length > 0 || keyQueue.length > 0) {
      const name = nameQueue.pop();
      if (name !== undefined) {
        if (seenNames.has(name)) continue;
        seenNames.add(name);
        const node = nodes.get(name);
        if (node !== undefined) {
          found.push(node);
          keyQueue.push(...claimedKeys(node));
        }
        for (const r of cache.targeting(name)) takeRoute(r);
        continue;
      }
      const key = keyQueue.pop()!;
      if (seenKeys.has(key)) continue;
      seenKeys.add(key);
      const c = this.claimants.get(key);
      if (c !== undefined) nameQueue.push(...(Array.isArray(c) ? c : [c]));
      for (const r of cache.to(key)) takeRoute(r);
    }
    return { nodes: found, routes: cache.inCacheOrder(routes) };
  }

  private claim(key: string, name: string): void {
    const c = this.claimants.get(key);
    if (c === undefined) this.claimants.set(key, name);
    else if (Array.isArray(c)) {
      if (!c.includes(name)) c.push(name);
    } else if (c !== name) this.claimants.set(key, [c, name]);
  }

  private unclaim(key: string, name: string): void {
    const c = this.claimants.get(key);
    if (c === undefined) return;
    if (!Array.isArray(c)) {
      if (c === name) this.claimants.delete(key);
      return;
    }
    const rest = c.filter((x) => x !== name);
    if (rest.length === 0) this.claimants.delete(key);
    else this.claimants.set(key, rest.length === 1 ? rest[0]! : rest);
  }
}
