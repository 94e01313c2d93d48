// The Compute Engine v1 REST calls the route plug-in makes, over the project's
// own HTTP transport (src/platform/http-fetch.ts) with a bearer token from
// auth.ts. Google's official client (@google-cloud/compute, with its gRPC and
// protobuf stack) installs 144 MB of node_modules, measured in an empty project;
// google-auth-library adds 12 MB and is all this needs besides five REST calls.
// Writes return a global operation; `waitOperation` uses globalOperations.wait,
// which blocks server-side until DONE (or about two minutes), so a write costs
// one operation read instead of a poll per second (operation reads have their
// own quota of 1 500 per minute, the size of the write quota).
import { AbortError, throwIfAborted } from '../../core/errors.ts';
import { httpFetch } from '../../platform/http-fetch.ts';
import type { FetchLike } from '../../platform/http-fetch.ts';
import { apiErrorFromResponse, GceApiError } from './errors.ts';

/** A route as the API returns it (the fields this plug-in reads or writes). */
export interface GceRoute {
  name: string;
  destRange: string;
  network?: string;
  nextHopInstance?: string;
  nextHopIp?: string;
  nextHopGateway?: string;
  priority?: number;
  description?: string;
  selfLink?: string;
  warnings?: { code?: string; message?: string }[];
}

export interface GceOperation {
  name: string;
  status: 'PENDING' | 'RUNNING' | 'DONE';
  targetLink?: string;
  httpErrorStatusCode?: number;
  error?: { errors?: { code?: string; message?: string }[] };
}

export interface GceInstance {
  name: string;
  selfLink: string;
  zone?: string;
}

/** projects.get: the project's quotas (R118 reads `ROUTES`). */
export interface GceProject {
  name?: string;
  quotas?: { metric?: string; limit?: number; usage?: number }[];
}

/** Where an access token comes from (auth.ts); called before every request, it caches. */
export type TokenSource = (signal: AbortSignal) => Promise<string>;

export interface ComputeClientOptions {
  /** Compute Engine v1 base URL ending in `/`. */
  readonly apiEndpoint: string;
  readonly token: TokenSource;
  readonly fetch?: FetchLike;
  readonly userAgent?: string;
}

/** The most routes.list serves per page. */
export const MAX_RESULTS = 500;

/** The calls the plug-in needs; routes.ts depends on this, tests may fake it. */
export interface ComputeApi {
  listRoutes(project: string, filter: string, signal: AbortSignal): Promise<GceRoute[]>;
  getRoute(project: string, name: string, signal: AbortSignal): Promise<GceRoute>;
  insertRoute(project: string, route: GceRoute, signal: AbortSignal): Promise<GceOperation>;
  deleteRoute(project: string, name: string, signal: AbortSignal): Promise<GceOperation>;
  getInstance(project: string, zone: string, name: string, signal: AbortSignal): Promise<GceInstance>;
  /** The names of a region's zones (zones.list, all pages). */
  listZones(project: string, region: string, signal: AbortSignal): Promise<string[]>;
  /** Resolves once the operation is DONE (its error, if any, is the caller's to read). */
  waitOperation(project: string, op: GceOperation, signal: AbortSignal): Promise<GceOperation>;
  /** projects.get, for the ROUTES quota (R118); optional so test doubles may leave it out. */
  getProject?(project: string, signal: AbortSignal): Promise<GceProject>;
}

export class ComputeClient implements ComputeApi {
  private readonly base: string;
  private readonly token: TokenSource;
  private readonly fetchImpl: FetchLike;
  private readonly userAgent: string;

  constructor(opts: ComputeClientOptions) {
    this.base = opts.apiEndpoint.endsWith('/') ? opts.apiEndpoint : `${opts.apiEndpoint}/`;
    this.token = opts.token;
    this.fetchImpl = opts.fetch ?? httpFetch();
    this.userAgent = opts.userAgent ?? 'cloud-route-controller';
  }

  private async call<T>(method: string, path: string, signal: AbortSignal, body?: unknown): Promise<T> {
    throwIfAborted(signal);
    const token = await this.token(signal);
    throwIfAborted(signal);
    const headers: Record<string, string> = {
      authorization: `Bearer ${token}`,
      accept: 'application/json',
      'user-agent': this.userAgent,
    };
    if (body !== undefined) headers['content-type'] = 'application/json';
    let res;
    try {
      res = await this.fetchImpl(`${this.base}${path}`, {
        method,
        headers,
        body: body === undefined ? undefined : JSON.stringify(body),
        signal,
      });
    } catch (err) {
      if (signal.aborted) throw new AbortError('The operation was aborted', { cause: signal.reason });
      throw err;
    }
    const text = await res.text();
    if (!res.ok) throw apiErrorFromResponse(res.status, text, res.headers.get('retry-after'));
    try {
      return JSON.parse(text) as T;
    } catch {
      throw new GceApiError(`unreadable answer: ${text.slice(0, 100)}`, 502, 'parseError');
    }
  }

  /** Every page of a list call, following nextPageToken. */
  private async listAll<T>(path: string, filter: string, signal: AbortSignal): Promise<T[]> {
    const out: T[] = [];
    let pageToken: string | undefined;
    do {
      const q = new URLSearchParams({ filter, maxResults: String(MAX_RESULTS) });
      if (pageToken !== undefined) q.set('pageToken', pageToken);
      const page = await this.call<{ items?: T[]; nextPageToken?: string }>(
        'GET',
        `${path}?${q.toString()}`,
        signal,
      );
      out.push(...(page.items ?? []));
      pageToken = page.nextPageToken === '' ? undefined : page.nextPageToken;
    } while (pageToken !== undefined);
    return out;
  }

  listRoutes(project: string, filter: string, signal: AbortSignal): Promise<GceRoute[]> {
    return this.listAll<GceRoute>(`projects/${enc(project)}/global/routes`, filter, signal);
  }

  /** Upstream's ListZonesInRegion: a regular expression on the zone's region URL. */
  async listZones(project: string, region: string, signal: AbortSignal): Promise<string[]> {
    const zones = await this.listAll<{ name?: unknown }>(
      `projects/${enc(project)}/zones`,
      `region eq .*/regions/${region}`,
      signal,
    );
    return zones.map((z) => z.name).filter((n): n is string => typeof n === 'string');
  }

  getRoute(project: string, name: string, signal: AbortSignal): Promise<GceRoute> {
    return this.call('GET', `projects/${enc(project)}/global/routes/${enc(name)}`, signal);
  }

  insertRoute(project: string, route: GceRoute, signal: AbortSignal): Promise<GceOperation> {
    return this.call('POST', `projects/${enc(project)}/global/routes`, signal, route);
  }

  deleteRoute(project: string, name: string, signal: AbortSignal): Promise<GceOperation> {
    return this.call('DELETE', `projects/${enc(project)}/global/routes/${enc(name)}`, signal);
  }

  getInstance(project: string, zone: string, name: string, signal: AbortSignal): Promise<GceInstance> {
    return this.call('GET', `projects/${enc(project)}/zones/${enc(zone)}/instances/${enc(name)}`, signal);
  }

  getProject(project: string, signal: AbortSignal): Promise<GceProject> {
    return this.call('GET', `projects/${enc(project)}`, signal);
  }

  async waitOperation(project: string, op: GceOperation, signal: AbortSignal): Promise<GceOperation> {
    let current = op;
    // Each wait returns at DONE or near the API's two-minute deadline; the
    // controller's cloudCallTimeout aborts the signal to end the loop.
    while (current.status !== 'DONE') {
      current = await this.call<GceOperation>(
        'POST',
        `projects/${enc(project)}/global/operations/${enc(current.name)}/wait`,
        signal,
      );
    }
    return current;
  }
}

function enc(s: string): string {
  return encodeURIComponent(s);
}
