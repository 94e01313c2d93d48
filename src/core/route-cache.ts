// The route cache of watch mode (SPEC R65–R67): the last listed routes,
// written through with every create and delete the provider confirmed. A
// cached reconcile plans against it instead of calling listRoutes. Pure: the
// caller passes the time.
import type { Route } from './types.ts';

/** Why the cache was dropped; the label of route_controller_route_cache_invalidations_total. */
export type CacheInvalidation =
  'start' | 'call_failed' | 'unlisted_delete' | 'periodic' | 'retry' | 'expired' | 'disabled';

export interface CachedRoute {
  readonly route: Route;
  /**
   * False for a route the controller created whose provider did not return it
   * as listRoutes would (R66): deleting it needs a listed copy first (R3).
   */
  readonly listed: boolean;
}

export class RouteCache {
  private entries: CachedRoute[] | undefined;
  private listedAt = 0;
  private readonly maxAgeMs: number;

  /** `maxAgeMs`: a cache older than this is not used (R65). */
  constructor(maxAgeMs: number) {
    this.maxAgeMs = maxAgeMs;
  }

  /** R65: after every successful listRoutes. */
  fill(routes: readonly Route[], now: number): void {
    this.entries = routes.map((route) => ({ route, listed: true }));
    this.listedAt = now;
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

  /** A confirmed create; `listedAs` is the provider's own description of it, if it gave one. */
  created(requested: Route, listedAs: Route | undefined): void {
    if (this.entries === undefined) return;
    this.entries.push(
      listedAs === undefined ? { route: { ...requested }, listed: false } : { route: listedAs, listed: true },
    );
  }
}
