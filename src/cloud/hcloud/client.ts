// A small typed HTTP client for the parts of the public Hetzner Cloud API the
// route plug-in needs (https://docs.hetzner.cloud). It translates HTTP and API
// error codes into the typed errors of SPEC §2.3 and never retries or sleeps
// on throttling/conflict (R6); the only waits are between action polls.
import {
  AbortError,
  ConflictError,
  PermanentError,
  QuotaExceededError,
  RetryableError,
  ThrottledError,
  throwIfAborted,
} from '../../core/errors.ts';
import type { RouteError } from '../../core/errors.ts';
import {
  parseAction,
  parseNetwork,
  parseNetworkList,
  parseServer,
  parseServerList,
  ResponseShapeError,
} from './api.ts';
import type { ApiAction, ApiNetwork, ApiRoute, ApiServer, ApiServerPage } from './api.ts';
import { httpFetch, type FetchLike, type FetchResponse } from '../../platform/http-fetch.ts';

export type { FetchLike, FetchResponse } from '../../platform/http-fetch.ts';

export interface HcloudClientOptions {
  /** API base URL, e.g. https://api.hetzner.cloud/v1 (no trailing slash). */
  readonly endpoint: string;
  readonly token: string;
  readonly fetch?: FetchLike;
  /** First wait between action polls; doubles up to maxPollIntervalMs. */
  readonly pollIntervalMs?: number;
  readonly maxPollIntervalMs?: number;
  readonly now?: () => number;
  readonly userAgent?: string;
}

/** Largest page the API serves for list endpoints. */
const PER_PAGE = 50;
/** The API's documented default: 3600 requests per hour and project. */
const HOUR_MS = 3_600_000;
const MIN_RETRY_AFTER_MS = 1_000;

// HTTP statuses from the API's error-code table; codes win over statuses
// because e.g. 403 means quota (resource_limit_exceeded) or permissions.
const CONFLICT_CODES: ReadonlySet<string> = new Set(['locked', 'conflict']);
const QUOTA_CODES: ReadonlySet<string> = new Set(['resource_limit_exceeded']);
const PERMANENT_CODES: ReadonlySet<string> = new Set([
  'invalid_input',
  'json_error',
  'not_found',
  'forbidden',
  'unauthorized',
  'token_readonly',
  'unsupported_error',
  'uniqueness_error',
  'protected',
  'deprecated_api_endpoint',
  'resource_locked',
]);
const RETRYABLE_CODES: ReadonlySet<string> = new Set([
  'service_error',
  'server_error',
  'unknown_error',
  'timeout',
  'bad_gateway',
  'unavailable',
  'maintenance',
  'resource_unavailable',
  'robot_unavailable',
]);

interface RateLimitState {
  /** Wall time before which the API will answer 429, derived from RateLimit-* headers. */
  blockedUntil: number;
  limit: number | undefined;
}

interface RequestSpec {
  readonly method: 'GET' | 'POST';
  readonly path: string;
  /** Human description for error messages, e.g. `add route 10.0.0.0/24 via 10.1.0.2 to network 7`. */
  readonly op: string;
  readonly body?: unknown;
  readonly signal: AbortSignal;
  /** Return undefined instead of throwing on a not_found answer. */
  readonly notFoundOk?: boolean;
}

/** Abortable wait that rejects with the core AbortError (R4). */
function pause(ms: number, signal: AbortSignal): Promise<void> {
  return new Promise((resolve, reject) => {
    if (signal.aborted) {
      reject(new AbortError('The operation was aborted', { cause: signal.reason }));
      return;
    }
    const onAbort = (): void => {
      clearTimeout(timer);
      reject(new AbortError('The operation was aborted', { cause: signal.reason }));
    };
    const timer = setTimeout(() => {
      signal.removeEventListener('abort', onAbort);
      resolve();
    }, ms);
    signal.addEventListener('abort', onAbort, { once: true });
  });
}

function headerInt(res: FetchResponse, name: string): number | undefined {
  const v = res.headers.get(name);
  if (v === null || v.trim() === '') return undefined;
  const n = Number(v);
  return Number.isFinite(n) ? n : undefined;
}

/** Maps an API error code (or, lacking one, the HTTP status) to a typed error. */
export function classifyApiError(
  code: string,
  status: number,
  message: string,
  retryAfterMs: number | undefined,
): RouteError {
  if (code === 'rate_limit_exceeded' || status === 429) return new ThrottledError(message, { retryAfterMs });
  if (CONFLICT_CODES.has(code)) return new ConflictError(message);
  if (QUOTA_CODES.has(code)) return new QuotaExceededError(message);
  if (PERMANENT_CODES.has(code)) return new PermanentError(message);
  if (RETRYABLE_CODES.has(code) || status >= 500) return new RetryableError(message);
  if (status === 409 || status === 423) return new ConflictError(message);
  if (status >= 400 && status < 500 && status !== 408) return new PermanentError(message);
  return new RetryableError(message);
}

export class HcloudClient {
  private readonly endpoint: string;
  private readonly token: string;
  private readonly fetchImpl: FetchLike;
  private readonly pollIntervalMs: number;
  private readonly maxPollIntervalMs: number;
  private readonly now: () => number;
  private readonly userAgent: string;
  private readonly rate: RateLimitState = { blockedUntil: 0, limit: undefined };

  constructor(opts: HcloudClientOptions) {
    this.endpoint = opts.endpoint.replace(/\/+$/, '');
    this.token = opts.token;
    this.fetchImpl = opts.fetch ?? httpFetch();
    this.pollIntervalMs = opts.pollIntervalMs ?? 500;
    this.maxPollIntervalMs = Math.max(this.pollIntervalMs, opts.maxPollIntervalMs ?? 2_000);
    this.now = opts.now ?? Date.now;
    this.userAgent = opts.userAgent ?? 'cloud-route-controller (hcloud)';
  }

  async getNetwork(id: number, signal: AbortSignal): Promise<ApiNetwork> {
    const body = await this.request({
      method: 'GET',
      path: `/networks/${id}`,
      op: `get network ${id}`,
      signal,
    });
    return this.shape(() => parseNetwork(body), `get network ${id}`);
  }

  /** Exact-name lookup; undefined if the project has no such network. */
  async findNetworkByName(name: string, signal: AbortSignal): Promise<ApiNetwork | undefined> {
    const op = `find network named "${name}"`;
    const body = await this.request({
      method: 'GET',
      path: `/networks?name=${encodeURIComponent(name)}`,
      op,
      signal,
    });
    return this.shape(() => parseNetworkList(body), op).find((n) => n.name === name);
  }

  /** undefined if the server does not exist. */
  async getServer(id: number, signal: AbortSignal): Promise<ApiServer | undefined> {
    const op = `get server ${id}`;
    const body = await this.request({ method: 'GET', path: `/servers/${id}`, op, signal, notFoundOk: true });
    return body === undefined ? undefined : this.shape(() => parseServer(body), op);
  }

  /** All servers of the project, every page (R1). */
  async listServers(signal: AbortSignal): Promise<ApiServer[]> {
    const out: ApiServer[] = [];
    let page: number | null = 1;
    // The cap only guards against a server that never stops paginating.
    for (let i = 0; page !== null && i < 10_000; i++) {
      const op: string = `list servers (page ${page})`;
      const body = await this.request({
        method: 'GET',
        path: `/servers?page=${page}&per_page=${PER_PAGE}`,
        op,
        signal,
      });
      const list: ApiServerPage = this.shape(() => parseServerList(body), op);
      out.push(...list.servers);
      page = list.nextPage !== null && list.nextPage > page ? list.nextPage : null;
    }
    return out;
  }

  async addRoute(networkId: number, route: ApiRoute, signal: AbortSignal): Promise<ApiAction> {
    const op = `add route ${route.destination} via ${route.gateway} to network ${networkId}`;
    const body = await this.request({
      method: 'POST',
      path: `/networks/${networkId}/actions/add_route`,
      op,
      body: route,
      signal,
    });
    return this.shape(() => parseAction(body), op);
  }

  /** undefined if the API no longer knows the route. */
  async deleteRoute(networkId: number, route: ApiRoute, signal: AbortSignal): Promise<ApiAction | undefined> {
    const op = `delete route ${route.destination} via ${route.gateway} from network ${networkId}`;
    const body = await this.request({
      method: 'POST',
      path: `/networks/${networkId}/actions/delete_route`,
      op,
      body: route,
      signal,
      notFoundOk: true,
    });
    return body === undefined ? undefined : this.shape(() => parseAction(body), op);
  }

  /** Polls GET /actions/{id} until success or error; waits are short and abortable. */
  async waitForAction(action: ApiAction, op: string, signal: AbortSignal): Promise<void> {
    let current = action;
    let delay = this.pollIntervalMs;
    while (current.status === 'running') {
      await pause(delay, signal);
      delay = Math.min(delay * 2, this.maxPollIntervalMs);
      const body = await this.request({
        method: 'GET',
        path: `/actions/${current.id}`,
        op: `${op} (poll action ${current.id})`,
        signal,
      });
      current = this.shape(() => parseAction(body), op);
    }
    if (current.status !== 'success') {
      const code = current.error?.code ?? 'unknown_error';
      const msg = current.error?.message ?? `action ended with status "${current.status}"`;
      throw classifyApiError(
        code,
        0,
        this.redact(`hcloud: ${op}: action ${current.id} failed: ${msg} (${code})`),
        undefined,
      );
    }
  }

  private shape<T>(fn: () => T, op: string): T {
    try {
      return fn();
    } catch (err) {
      if (err instanceof ResponseShapeError) {
        throw new RetryableError(this.redact(`hcloud: ${op}: unexpected API response: ${err.message}`));
      }
      throw err;
    }
  }

  /** Belt and braces: nothing the API or the runtime echoes may carry the token. */
  private redact(message: string): string {
    return this.token === '' ? message : message.split(this.token).join('[redacted]');
  }

  private abortError(signal: AbortSignal): AbortError {
    return new AbortError('The operation was aborted', { cause: signal.reason });
  }

  /**
   * Records RateLimit-* headers. Once Remaining hits 0 the next request would
   * get 429 anyway, so calls fail fast locally until one request is refilled;
   * returns that wait.
   */
  private noteRateLimit(res: FetchResponse, at: number): number | undefined {
    const limit = headerInt(res, 'RateLimit-Limit');
    const remaining = headerInt(res, 'RateLimit-Remaining');
    const reset = headerInt(res, 'RateLimit-Reset');
    if (limit !== undefined && limit > 0) this.rate.limit = limit;
    if (remaining === undefined || remaining > 0) return undefined;
    // The API refills one request at a time (limit per hour) and
    // RateLimit-Reset is when the bucket is full again, so with an empty
    // bucket the next request is possible after (reset - now) / limit.
    const lim = this.rate.limit;
    const untilFullMs = reset !== undefined ? reset * 1000 - at : 0;
    let waitMs = MIN_RETRY_AFTER_MS;
    if (lim !== undefined) waitMs = untilFullMs > 0 ? untilFullMs / lim : HOUR_MS / lim;
    waitMs = Math.max(MIN_RETRY_AFTER_MS, Math.ceil(waitMs));
    this.rate.blockedUntil = Math.max(this.rate.blockedUntil, at + waitMs);
    return waitMs;
  }

  private async request(spec: RequestSpec): Promise<unknown> {
    const { signal, op } = spec;
    throwIfAborted(signal);
    const now = this.now();
    if (now < this.rate.blockedUntil) {
      const retryAfterMs = this.rate.blockedUntil - now;
      throw new ThrottledError(
        `hcloud: ${op}: API rate limit exhausted (RateLimit-Remaining: 0 of ${this.rate.limit ?? '?'} per hour); ` +
          `not sent, next request possible in ${Math.ceil(retryAfterMs / 1000)}s`,
        { retryAfterMs },
      );
    }
    const headers: Record<string, string> = {
      Authorization: `Bearer ${this.token}`,
      Accept: 'application/json',
      'User-Agent': this.userAgent,
    };
    if (spec.body !== undefined) headers['Content-Type'] = 'application/json';
    let res: FetchResponse;
    let text: string;
    try {
      res = await this.fetchImpl(`${this.endpoint}${spec.path}`, {
        method: spec.method,
        headers,
        body: spec.body === undefined ? undefined : JSON.stringify(spec.body),
        signal,
      });
      text = await res.text();
    } catch (err) {
      if (signal.aborted) throw this.abortError(signal);
      const e = err as Error & { cause?: { code?: unknown; message?: unknown } };
      const detail = typeof e.cause?.code === 'string' ? ` (${e.cause.code})` : '';
      throw new RetryableError(this.redact(`hcloud: ${op}: request failed: ${e.message}${detail}`));
    }
    const at = this.now();
    const retryAfterMs = this.noteRateLimit(res, at);
    let body: unknown = undefined;
    if (text !== '') {
      try {
        body = JSON.parse(text);
      } catch {
        if (res.ok)
          throw new RetryableError(`hcloud: ${op}: API answered HTTP ${res.status} with non-JSON body`);
      }
    }
    if (res.ok) return body;

    const errObj = (body as { error?: { code?: unknown; message?: unknown } } | undefined)?.error;
    const code = typeof errObj?.code === 'string' ? errObj.code : '';
    if (spec.notFoundOk && (code === 'not_found' || (code === '' && res.status === 404))) return undefined;
    const apiMsg =
      typeof errObj?.message === 'string' && errObj.message !== '' ? errObj.message : res.statusText;
    const label = code !== '' ? `${code}, HTTP ${res.status}` : `HTTP ${res.status}`;
    let message = `hcloud: ${op}: ${apiMsg} (${label})`;
    if (code === 'token_readonly') message += '; HCLOUD_TOKEN must be a read/write token';
    const throttled = code === 'rate_limit_exceeded' || res.status === 429;
    let throttleMs: number | undefined;
    if (throttled) {
      const retryAfter = headerInt(res, 'Retry-After');
      throttleMs =
        retryAfter !== undefined && retryAfter > 0 ? retryAfter * 1000 : (retryAfterMs ?? MIN_RETRY_AFTER_MS);
      this.rate.blockedUntil = Math.max(this.rate.blockedUntil, at + throttleMs);
    }
    throw classifyApiError(code, res.status, this.redact(message), throttleMs);
  }
}
