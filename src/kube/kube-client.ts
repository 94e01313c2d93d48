// A thin apiserver client on top of a @kubernetes/client-node KubeConfig:
// raw JSON requests through the client-side rate limiter, and a line-streamed
// watch that is exempt from it (like client-go). Raw requests rather than the
// generated API because the informer needs the undeserialised JSON (to strip it
// before it is retained), Retry-After headers and Status bodies on errors, and
// an AbortSignal on every call.
import * as http from 'node:http';
import * as https from 'node:https';
import * as k8s from '@kubernetes/client-node';
import { RealClock, type Clock } from '../core/clock.ts';
import { ApiStatusError } from '../core/ports.ts';
import { RequestRateLimiter } from './rate-limiter.ts';

/** An HTTP error status from the apiserver, with its Status reason and Retry-After. */
export class KubeApiError extends ApiStatusError {
  readonly reason: string | undefined;
  readonly retryAfterMs: number | undefined;
  constructor(statusCode: number, message: string, opts: { reason?: string; retryAfterMs?: number } = {}) {
    super(statusCode, message);
    this.reason = opts.reason;
    this.retryAfterMs = opts.retryAfterMs;
  }
}

/** The request never got an HTTP status: connection refused/reset, TLS, timeout. */
export class KubeRequestError extends Error {
  override readonly name = 'KubeRequestError';
}

export interface KubeResponse {
  readonly status: number;
  readonly headers: http.IncomingHttpHeaders;
  readonly body: string;
}

export interface KubeRequestOptions {
  readonly method?: string;
  /** Objects are sent as JSON. */
  readonly body?: string | object;
  readonly contentType?: string;
  readonly signal?: AbortSignal;
  /** Socket inactivity timeout (default: the client's requestTimeoutMs). */
  readonly timeoutMs?: number;
  /** Whether the request waits for the client-side limiter (default true). */
  readonly rateLimited?: boolean;
}

export interface KubeClientOptions {
  /** --kube-api-qps (default 20). */
  readonly qps?: number;
  /** --kube-api-burst (default 30). */
  readonly burst?: number;
  readonly clock?: Clock;
  readonly userAgent?: string;
  /** Inactivity timeout of non-watch requests (default 60 s). */
  readonly requestTimeoutMs?: number;
}

export const DEFAULT_QPS = 20;
export const DEFAULT_BURST = 30;

interface TlsMaterial {
  ca: unknown;
  cert: unknown;
  key: unknown;
}

export class KubeClient {
  readonly kubeConfig: k8s.KubeConfig;
  readonly limiter: RequestRateLimiter;
  readonly server: string;
  private readonly userAgent: string;
  private readonly requestTimeoutMs: number;
  private coreApi: k8s.CoreV1Api | undefined;
  private agent: https.Agent | undefined;
  private agentTls: TlsMaterial | undefined;

  constructor(kubeConfig: k8s.KubeConfig, opts: KubeClientOptions = {}) {
    const cluster = kubeConfig.getCurrentCluster();
    if (!cluster) throw new Error('kubeconfig has no current cluster');
    this.kubeConfig = kubeConfig;
    this.server = cluster.server.replace(/\/+$/, '');
    this.limiter = new RequestRateLimiter(
      opts.clock ?? new RealClock(),
      opts.qps ?? DEFAULT_QPS,
      opts.burst ?? DEFAULT_BURST,
    );
    this.userAgent = opts.userAgent ?? 'cloud-route-controller';
    this.requestTimeoutMs = opts.requestTimeoutMs ?? 60_000;
  }

  /** The generated CoreV1 client on the same KubeConfig (not rate-limited by this client). */
  get core(): k8s.CoreV1Api {
    this.coreApi ??= this.kubeConfig.makeApiClient(k8s.CoreV1Api);
    return this.coreApi;
  }

  /** A request that resolves on 2xx and throws KubeApiError otherwise. */
  async request(path: string, opts: KubeRequestOptions = {}): Promise<KubeResponse> {
    if (opts.rateLimited ?? true) await this.limiter.wait(opts.signal);
    const body =
      opts.body === undefined
        ? undefined
        : typeof opts.body === 'string'
          ? opts.body
          : JSON.stringify(opts.body);
    const res = await this.send(path, opts.method ?? 'GET', body, opts);
    if (res.status < 200 || res.status > 299) throw apiErrorFrom(res.status, res.headers, res.body);
    return res;
  }

  async requestJson(path: string, opts: KubeRequestOptions = {}): Promise<unknown> {
    const res = await this.request(path, opts);
    return res.body === '' ? undefined : (JSON.parse(res.body) as unknown);
  }

  /**
   * Streams a watch: `onLine` gets every non-empty line. Resolves when the
   * server ends the response cleanly, rejects with KubeApiError on a non-200
   * status, KubeRequestError on a broken connection, or an AbortError.
   */
  async watch(path: string, signal: AbortSignal, onLine: (line: string) => void): Promise<void> {
    const options = await this.requestOptions('GET', undefined, signal);
    return new Promise((resolve, reject) => {
      const req = this.module().request(`${this.server}${path}`, options, (res) => {
        const status = res.statusCode ?? 0;
        if (status !== 200) {
          collect(res)
            .then((b) => reject(apiErrorFrom(status, res.headers, b)))
            .catch(reject);
          return;
        }
        res.setEncoding('utf8');
        let buf = '';
        res.on('data', (chunk: string) => {
          buf += chunk;
          for (let i = buf.indexOf('\n'); i >= 0; i = buf.indexOf('\n')) {
            const line = buf.slice(0, i);
            buf = buf.slice(i + 1);
            if (line.trim() !== '') onLine(line);
          }
        });
        res.on('end', () => {
          if (buf.trim() !== '') onLine(buf);
          resolve();
        });
        res.on('error', (err) => reject(transportError(err, signal)));
      });
      req.on('error', (err) => reject(transportError(err, signal)));
      req.end();
    });
  }

  /** Closes pooled connections (the process can then exit without waiting for idle sockets). */
  close(): void {
    this.agent?.destroy();
    this.agent = undefined;
  }

  private module(): typeof https | typeof http {
    return this.server.startsWith('http:') ? http : https;
  }

  private async send(
    path: string,
    method: string,
    body: string | undefined,
    opts: KubeRequestOptions,
  ): Promise<KubeResponse> {
    const options = await this.requestOptions(method, body, opts.signal, opts.contentType);
    const timeoutMs = opts.timeoutMs ?? this.requestTimeoutMs;
    return new Promise((resolve, reject) => {
      const req = this.module().request(`${this.server}${path}`, options, (res) => {
        collect(res)
          .then((b) => resolve({ status: res.statusCode ?? 0, headers: res.headers, body: b }))
          .catch((err: unknown) => reject(transportError(err, opts.signal)));
      });
      req.setTimeout(timeoutMs, () =>
        req.destroy(new KubeRequestError(`${method} ${path}: no response within ${timeoutMs} ms`)),
      );
      req.on('error', (err) => reject(transportError(err, opts.signal)));
      req.end(body);
    });
  }

  private async requestOptions(
    method: string,
    body: string | undefined,
    signal: AbortSignal | undefined,
    contentType = 'application/json',
  ): Promise<https.RequestOptions> {
    // Per request, so rotating bearer tokens (in-cluster, exec plug-ins) are picked up.
    const o: https.RequestOptions = {};
    await this.kubeConfig.applyToHTTPSOptions(o);
    const headers: http.OutgoingHttpHeaders = {
      ...(o.headers as http.OutgoingHttpHeaders | undefined),
      accept: 'application/json',
      'user-agent': this.userAgent,
    };
    if (body !== undefined) {
      headers['content-type'] = contentType;
      headers['content-length'] = Buffer.byteLength(body);
    }
    const proxied = this.kubeConfig.getCurrentCluster()?.proxyUrl !== undefined;
    return {
      ...o,
      method,
      headers,
      ...(signal ? { signal } : {}),
      // client-node's agent has no keep-alive; ours reuses connections, except through a proxy.
      agent: this.server.startsWith('http:') ? undefined : proxied ? o.agent : this.keepAliveAgent(o),
    };
  }

  private keepAliveAgent(o: https.RequestOptions): https.Agent {
    const tls: TlsMaterial = { ca: o.ca, cert: o.cert, key: o.key };
    if (this.agent && this.agentTls && sameTls(this.agentTls, tls)) return this.agent;
    this.agent?.destroy();
    this.agent = new https.Agent({
      keepAlive: true,
      ca: o.ca,
      cert: o.cert,
      key: o.key,
      pfx: o.pfx,
      passphrase: o.passphrase,
      servername: o.servername,
      ...(o.rejectUnauthorized === undefined ? {} : { rejectUnauthorized: o.rejectUnauthorized }),
    });
    this.agentTls = tls;
    return this.agent;
  }
}

function sameTls(a: TlsMaterial, b: TlsMaterial): boolean {
  const eq = (x: unknown, y: unknown): boolean =>
    Buffer.isBuffer(x) && Buffer.isBuffer(y) ? x.equals(y) : x === y;
  return eq(a.ca, b.ca) && eq(a.cert, b.cert) && eq(a.key, b.key);
}

function collect(res: http.IncomingMessage): Promise<string> {
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    res.on('data', (c: Buffer) => chunks.push(c));
    res.on('end', () => resolve(Buffer.concat(chunks).toString('utf8')));
    res.on('error', reject);
  });
}

function transportError(err: unknown, signal: AbortSignal | undefined): Error {
  if (signal?.aborted || (err instanceof Error && err.name === 'AbortError')) {
    const e = new Error('The operation was aborted', { cause: err });
    e.name = 'AbortError';
    return e;
  }
  if (err instanceof KubeRequestError) return err;
  const msg = err instanceof Error ? err.message : String(err);
  return new KubeRequestError(msg, { cause: err });
}

/** Parses a Retry-After header: delta-seconds or an HTTP date. */
export function parseRetryAfter(value: string | undefined, now = Date.now()): number | undefined {
  if (value === undefined || value.trim() === '') return undefined;
  const s = Number(value);
  if (Number.isFinite(s)) return Math.max(0, s * 1000);
  const t = Date.parse(value);
  return Number.isNaN(t) ? undefined : Math.max(0, t - now);
}

/** Maps an error response (usually a metav1.Status) to a KubeApiError. */
export function apiErrorFrom(status: number, headers: http.IncomingHttpHeaders, body: string): KubeApiError {
  let message = `HTTP ${status} ${http.STATUS_CODES[status] ?? ''}`.trim();
  let reason: string | undefined;
  let retryAfterMs = parseRetryAfter(
    Array.isArray(headers['retry-after']) ? headers['retry-after'][0] : headers['retry-after'],
  );
  try {
    const s = JSON.parse(body) as unknown;
    if (typeof s === 'object' && s !== null) {
      const st = s as { message?: unknown; reason?: unknown; details?: { retryAfterSeconds?: unknown } };
      if (typeof st.message === 'string' && st.message !== '') message = st.message;
      if (typeof st.reason === 'string' && st.reason !== '') reason = st.reason;
      const ra = st.details?.retryAfterSeconds;
      if (retryAfterMs === undefined && typeof ra === 'number' && ra > 0) retryAfterMs = ra * 1000;
    }
  } catch {
    if (body.trim() !== '') message = `${message}: ${body.trim().slice(0, 200)}`;
  }
  return new KubeApiError(status, message, {
    ...(reason === undefined ? {} : { reason }),
    ...(retryAfterMs === undefined ? {} : { retryAfterMs }),
  });
}
