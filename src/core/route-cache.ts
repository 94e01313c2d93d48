// The route cache of watch mode (SPEC R65–R67): the last listed routes,
// written through with every create and delete the provider confirmed. A
// cached reconcile plans against it instead of calling listRoutes. Pure: the
// caller passes the time.
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

export class RouteCache {
  private entries: CachedRoute[] | undefined;
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
    this.entries = routes.map((route) => ({ route, listed: true }));
    this.listedAt = now;
    this.targets = new Map(nodes.map((n) => [n.metadata?.name ?? '', targetFingerprint(n, this.keys)]));
  }

  /**
   * R67: the name of a node whose identity or addresses changed since the
   * cached view of its routes was taken, if any; the cache cannot stand in
   * for a list then.
   */
  changedTarget(nodes: readonly Node[]): string | undefined {
    for (const n of nodes) {
      const name = n.metadata?.name ?? '';
      const seen = this.targets.get(name);
      if (seen !== undefined && seen !== targetFingerprint(n, this.keys)) return name;
    }
    return undefined;
  }

  invalidate(): void {
    this.entries = undefined;
  }

  /** Whether a cached reconcile may run now. */
  isValid(now: number): boolean {
    return this.entries !== undefined && now - this.listedAt < this.maxAgeMs;
  }

  /** The cached routes (a copy), or undefined when invalid. */
  snapshot(now: number): CachedRoute[] | undefined {
    return this.isValid(now) ? [...this.entries!] : undefined;
  }

  /** A confirmed delete: drops that very route (identity, as planned from a snapshot or a list). */
  deleted(route: Route): void {
    if (this.entries === undefined) return;
    const i = this.entries.findIndex((e) => e.route === route);
    if (i >= 0) this.entries.splice(i, 1);
  }

  /** A confirmed create for `node`; `listedAs` is the provider's own description of it, if it gave one. */
  created(requested: Route, listedAs: Route | undefined, node: Node): void {
    if (this.entries === undefined) return;
    this.targets.set(node.metadata?.name ?? '', targetFingerprint(node, this.keys));
    this.entries.push(
      listedAs === undefined ? { route: { ...requested }, listed: false } : { route: listedAs, listed: true },
    );
  }
}
