// The route cache of watch mode (SPEC R65–R67): the last listed routes,
// written through with every create and delete the provider confirmed. A
// cached reconcile plans against it instead of calling listRoutes. Pure: the
// caller passes the time. Indexed by target node and by destination so that
// an incremental reconcile (R103) reads only the routes around what changed.
import { CidrParseError, parseCIDRCached } from './cidr.ts';
import type { Node, Route } from './types.ts';

export interface CachedRoute {
  readonly route: Route;
  /**
   * False for a route the controller created whose provider did not return it
   * as listRoutes would (R66): deleting it needs a listed copy first (R3).
   */
  readonly listed: boolean;
}

/**
 * What a provider maps a route's target to a node by: the node's incarnation
 * (`uid`), its cloud identity (`providerID`), its `addresses`. When one of them
 * changes, the cloud may now report the node's routes differently (a
 * re-created instance leaves a blackhole behind), which only a list can tell.
 */
export type RouteTargetKey = 'uid' | 'providerID' | 'addresses';
export const ALL_TARGET_KEYS: readonly RouteTargetKey[] = ['uid', 'providerID', 'addresses'];

export function targetFingerprint(n: Node, keys: readonly RouteTargetKey[] = ALL_TARGET_KEYS): string {
  const part = (k: RouteTargetKey): string =>
    k === 'uid'
      ? (n.metadata?.uid ?? '')
      : k === 'providerID'
        ? (n.spec?.providerID ?? '')
        : (n.status?.addresses ?? [])
            .map((a) => `${a.type}=${a.address}`)
            .sort()
            .join(',');
  return keys.map(part).join('|');
}

/** The key a destination is indexed by: its canonical form, or the text when it does not parse. */
export function destinationKey(text: string): string {
  const c = parseCIDRCached(text);
  return c instanceof CidrParseError ? `invalid:${text}` : c.canonical;
}

interface Entry extends CachedRoute {
  /** Insertion order: a list's order first, then creates (R18 reads the first match). */
  readonly seq: number;
}

function addTo(index: Map<string, Entry[]>, key: string, e: Entry): void {
  const bucket = index.get(key);
  if (bucket === undefined) index.set(key, [e]);
  else bucket.push(e);
}

function removeFrom(index: Map<string, Entry[]>, key: string, e: Entry): void {
  const bucket = index.get(key);
  if (bucket === undefined) return;
  const i = bucket.indexOf(e);
  if (i >= 0) bucket.splice(i, 1);
  if (bucket.length === 0) index.delete(key);
}

export class RouteCache {
  private entries: Set<Entry> | undefined;
  private readonly byTarget = new Map<string, Entry[]>();
  private readonly byDestination = new Map<string, Entry[]>();
  private seq = 0;
  /** Node name → fingerprint when the routes targeting it were last listed or created. */
  private targets = new Map<string, string>();
  private listedAt = 0;
  private readonly maxAgeMs: number;
  private readonly keys: readonly RouteTargetKey[];

  /** `maxAgeMs`: a cache older than this is not used (R65); `keys`: what the provider maps targets by (R67). */
  constructor(maxAgeMs: number, keys: readonly RouteTargetKey[] = ALL_TARGET_KEYS) {
    this.maxAgeMs = maxAgeMs;
    this.keys = keys;
  }

  /** R65: after every successful listRoutes, with the nodes the plan reads next. */
  fill(routes: readonly Route[], now: number, nodes: readonly Node[]): void {
    this.clear();
    this.entries = new Set();
    for (const route of routes) this.add({ route, listed: true, seq: this.seq++ });
    this.listedAt = now;
    this.targets = new Map(nodes.map((n) => [n.metadata?.name ?? '', targetFingerprint(n, this.keys)]));
  }

  /**
   * R67: the name of a node whose identity or addresses changed since the
   * cached view of its routes was taken, if any; the cache cannot stand in
   * for a list then.
   */
  changedTarget(nodes: Iterable<Node>): string | undefined {
    for (const n of nodes) {
      const name = n.metadata?.name ?? '';
      const seen = this.targets.get(name);
      if (seen !== undefined && seen !== targetFingerprint(n, this.keys)) return name;
    }
    return undefined;
  }

  invalidate(): void {
    this.clear();
  }

  private clear(): void {
    this.entries = undefined;
    this.byTarget.clear();
    this.byDestination.clear();
  }

  private add(e: Entry): void {
    this.entries!.add(e);
    addTo(this.byTarget, e.route.targetNode, e);
    addTo(this.byDestination, destinationKey(e.route.destinationCIDR), e);
  }

  /** Whether a cached reconcile may run now. */
  isValid(now: number): boolean {
    return this.entries !== undefined && now - this.listedAt < this.maxAgeMs;
  }

  /** The cached routes (a copy), or undefined when invalid. */
  snapshot(now: number): CachedRoute[] | undefined {
    return this.isValid(now) ? [...this.entries!] : undefined;
  }

  /** R103: the cached routes targeting `node` (by name), in cache order. */
  targeting(node: string): readonly CachedRoute[] {
    return this.byTarget.get(node) ?? [];
  }

  /** R103: the cached routes to `key` (a destinationKey), in cache order. */
  to(key: string): readonly CachedRoute[] {
    return this.byDestination.get(key) ?? [];
  }

  /** Puts routes taken from this cache back in cache order. */
  inCacheOrder(routes: Iterable<CachedRoute>): CachedRoute[] {
    return [...routes].sort((a, b) => (a as Entry).seq - (b as Entry).seq);
  }

  /** A confirmed delete: drops that very route (identity, as planned from a snapshot or a list). */
  deleted(route: Route): void {
    if (this.entries === undefined) return;
    const e = this.byTarget.get(route.targetNode)?.find((x) => x.route === route);
    if (e === undefined) return;
    this.entries.delete(e);
    removeFrom(this.byTarget, route.targetNode, e);
    removeFrom(this.byDestination, destinationKey(route.destinationCIDR), e);
  }

  /** A confirmed create for `node`; `listedAs` is the provider's own description of it, if it gave one. */
  created(requested: Route, listedAs: Route | undefined, node: Node): void {
    if (this.entries === undefined) return;
    this.targets.set(node.metadata?.name ?? '', targetFingerprint(node, this.keys));
    this.add(
      listedAs === undefined
        ? { route: { ...requested }, listed: false, seq: this.seq++ }
        : { route: listedAs, listed: true, seq: this.seq++ },
    );
  }
}
