// R115, R118: the room of the project that holds the cluster's routes. Compute Engine counts
// every route of the project (every network's, whoever made it) against the project's ROUTES
// quota, which projects.get reports with its usage. That read is made at most once per
// QUOTA_REFRESH_MS, not per reconcile; in between, the usage it read moves with the cluster's
// own routes as each listRoutes counts them (others' changes show at the next refresh).
import { errorKind } from '../../core/errors.ts';
import type { RouteTableRoom } from '../../core/types.ts';
import type { ComputeApi } from './client.ts';
import { toRouteError } from './errors.ts';

/** How long a read of the ROUTES quota is used before projects.get is asked again. */
export const QUOTA_REFRESH_MS = 10 * 60_000;

/** How many of the cluster's routes listRoutes returned, kept in the reconcile's scratch. */
export class ListedClusterRoutes {
  static readonly key = 'gce/listed-cluster-routes';
  readonly count: number;
  constructor(count: number) {
    this.count = count;
  }
}

interface QuotaRead {
  readonly limit: number;
  readonly usage: number;
  /** The cluster's routes the list counted when the quota was read. */
  readonly clusterAt: number;
  readonly at: number;
}

export class ProjectRoutesQuota {
  private readonly api: ComputeApi;
  private readonly project: string;
  private readonly now: () => number;
  private last: QuotaRead | undefined;
  /** When projects.get last failed with no earlier read to fall back on. */
  private failedAt: number | undefined;

  constructor(api: ComputeApi, project: string, now: () => number = Date.now) {
    this.api = api;
    this.project = project;
    this.now = now;
  }

  /** The room with `cluster` routes of the cluster listed now; undefined without a ROUTES quota. */
  async room(cluster: number, signal: AbortSignal): Promise<RouteTableRoom | undefined> {
    const read = await this.read(cluster, signal);
    if (read === undefined) return undefined;
    return {
      container: `project ${this.project} (ROUTES quota)`,
      limit: read.limit,
      used: Math.max(0, read.usage + cluster - read.clusterAt),
      raise:
        `request a higher Compute Engine ROUTES quota for project ${this.project} on the Google Cloud ` +
        "console's Quotas page, or remove routes the project no longer needs",
    };
  }

  private async read(cluster: number, signal: AbortSignal): Promise<QuotaRead | undefined> {
    const now = this.now();
    if (this.last !== undefined && now - this.last.at < QUOTA_REFRESH_MS) return this.last;
    if (this.api.getProject === undefined) return undefined;
    // Not asked again before the refresh: a missing compute.projects.get would fail every list.
    if (this.failedAt !== undefined && now - this.failedAt < QUOTA_REFRESH_MS) return undefined;
    let project;
    try {
      project = await this.api.getProject(this.project, signal);
    } catch (err) {
      const e = toRouteError(err, `get project ${this.project} (its ROUTES quota)`, signal);
      // Keep the last read on a passing failure; the next list asks again.
      if (this.last !== undefined && errorKind(e) !== 'permanent') return this.last;
      if (!signal.aborted) this.failedAt = now;
      throw e;
    }
    const q = project.quotas?.find((x) => x.metric === 'ROUTES');
    if (typeof q?.limit !== 'number' || typeof q.usage !== 'number') return undefined;
    this.last = { limit: q.limit, usage: q.usage, clusterAt: cluster, at: now };
    return this.last;
  }
}
