// A thin apiserver client: raw JSON requests through the client-side rate
// limiter, streamed LIST bodies, and a line-streamed watch that is exempt from
// the limiter (like client-go). Raw requests rather than client-node's
// generated API because the informer needs the undeserialised JSON (to strip
// it before it is retained), Retry-After headers and Status bodies on errors,
// and an AbortSignal on every call; and because loading that API costs ~80 MB
// of RSS (see kubeconfig.ts), client-node is only loaded when a kubeconfig
// needs it or a caller asks for it.
import * as fs from 'node:fs/promises';
import type * as http from 'node:http';
import { nodeHttp } from '../platform/node-http.ts';
import * as https from 'node:https';
import type * as k8s from '@kubernetes/client-node';
import { RealClock, type Clock } from '../core/clock.ts';
import { EMPTY, SinkError, collect, drain, transportError } from './http-body.ts';
import { KubeRequestError, apiErrorFrom } from './kube-errors.ts';
import type { KubeConnection } from './kube-connection.ts';
import { RequestRateLimiter } from '../core/rate-limiter.ts';

export { KubeApiError, KubeRequestError, apiErrorFrom, parseRetryAfter } from './kube-errors.ts';

export interface KubeResponse {
  readonly status: number;
  readonly headers: http.IncomingHttpHeaders;
  readonly body: string;
}

export interface KubeRawResponse {
  readonly status: number;
  readonly headers: http.IncomingHttpHeaders;
  readonly bytes: Buffer;
}

export interface KubeRequestOptions {
  readonly method?: string;
  /** Objects are sent as JSON. */
  readonly body?: string | object;
  readonly contentType?: string;
  /** The Accept header (default JSON); error bodies are read in either encoding. */
  readonly accept?: string;
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

interface Settle {
  settle: ((r: KubeRawResponse | Error) => void) | undefined;
}

interface TlsMaterial {
  ca: unknown;
  cert: unknown;
  key: unknown;
}

/** How often a token file is re-read (client-go: once a minute). */
const TOKEN_FILE_TTL_MS = 60_000;

function isKubeConfig(c: KubeConnection | k8s.KubeConfig): c is k8s.KubeConfig {
  return typeof (c as { applyToHTTPSOptions?: unknown }).applyToHTTPSOptions === 'function';
}

export class KubeClient {
  readonly limiter: RequestRateLimiter;
  readonly server: string;
  private readonly conn: KubeConnection | undefined;
  private readonly clock: Clock;
  private readonly userAgent: string;
  private readonly requestTimeoutMs: number;
  private kc: Promise<k8s.KubeConfig> | undefined;
  private coreApi: Promise<k8s.CoreV1Api> | undefined;
  private agent: http.Agent | undefined;
  private streamAgent: http.Agent | undefined;
  private agentTls: TlsMaterial | undefined;
  private fileToken: { value: string; readAt: number } | undefined;

  /**
   * From a connection read by kubeconfig.ts (no client-node needed unless it
   * says so), or from a client-node KubeConfig (its auth and agents are used).
   */
  constructor(config: KubeConnection | k8s.KubeConfig, opts: KubeClientOptions = {}) {
    let server: string;
    if (isKubeConfig(config)) {
      const cluster = config.getCurrentCluster();
      if (!cluster) throw new Error('kubeconfig has no current cluster');
      server = cluster.server;
      this.kc = Promise.resolve(config);
    } else {
      server = config.server;
      this.conn = config;
    }
    this.server = server.replace(/\/+$/, '');
    this.clock = opts.clock ?? new RealClock();
    this.limiter = new RequestRateLimiter(this.clock, opts.qps ?? DEFAULT_QPS, opts.burst ?? DEFAULT_BURST);
    this.userAgent = opts.userAgent ?? 'cloud-route-controller';
    this.requestTimeoutMs = opts.requestTimeoutMs ?? 60_000;
  }

  /** The same credentials as a client-node KubeConfig (loads client-node). */
  clientNodeConfig(): Promise<k8s.KubeConfig> {
    this.kc ??= import('./client-node-config.ts').then((m) => m.clientNodeConfigFor(this.conn!));
    return this.kc;
  }

  /** client-node's generated CoreV1 client on the same credentials (not rate-limited by this client). */
  coreV1Api(): Promise<k8s.CoreV1Api> {
    this.coreApi ??= Promise.all([import('@kubernetes/client-node'), this.clientNodeConfig()]).then(
      ([m, kc]) => kc.makeApiClient(m.CoreV1Api),
    );
    return this.coreApi;
  }

  /** A request that resolves on 2xx and throws KubeApiError otherwise. */
  async request(path: string, opts: KubeRequestOptions = {}): Promise<KubeResponse> {
    const res = await this.requestBytes(path, opts);
    return { status: res.status, headers: res.headers, body: res.bytes.toString('utf8') };
  }

  /**
   * Like `request`, with the body as bytes: a large LIST page then stays
   * outside the V8 heap (see list-scanner.ts).
   */
  async requestBytes(path: string, opts: KubeRequestOptions = {}): Promise<KubeRawResponse> {
    return this.exchange(path, opts, undefined);
  }

  /**
   * Like `request`, but a 2xx body goes to `onChunk` as it arrives and is never
   * held whole (see list-scanner.ts), with the response's headers (its
   * Content-Type decides the decoder); an exception from `onChunk` aborts the
   * request and rejects with it. The returned `bytes` are empty.
   */
  async requestStream(
    path: string,
    opts: KubeRequestOptions,
    onChunk: (chunk: Buffer, headers: http.IncomingHttpHeaders) => void,
  ): Promise<KubeRawResponse> {
    return this.exchange(path, opts, onChunk);
  }

  private async exchange(
    path: string,
    opts: KubeRequestOptions,
    sink: ((chunk: Buffer, headers: http.IncomingHttpHeaders) => void) | undefined,
  ): Promise<KubeRawResponse> {
    if (opts.rateLimited ?? true) await this.limiter.wait(opts.signal);
    const body =
      opts.body === undefined
        ? undefined
        : typeof opts.body === 'string'
          ? opts.body
          : JSON.stringify(opts.body);
    const options = await this.requestOptions(
      opts.method ?? 'GET',
      body,
      opts.signal,
      opts.contentType,
      false,
      opts.accept,
    );
    const res = await new Promise<KubeRawResponse>((resolve, reject) => {
      const box: Settle = { settle: (r) => (r instanceof Error ? reject(r) : resolve(r)) };
      this.issue(path, opts.method ?? 'GET', body, options, opts, box, sink);
    });
    if (res.status < 200 || res.status > 299) {
      throw apiErrorFrom(res.status, res.headers, res.bytes);
    }
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
    const options = await this.requestOptions('GET', undefined, signal, undefined, true);
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
    this.streamAgent?.destroy();
    this.agent = this.streamAgent = undefined;
  }

  /**
   * Drops the idle pooled connections. After a watch was found half-open, the
   * idle sockets opened before it are suspect too (a silent partition or a
   * dropped NAT entry takes them all); requests in flight are left alone.
   */
  resetIdleConnections(): void {
    for (const list of Object.values(this.agent?.freeSockets ?? {})) {
      for (const socket of list ?? []) socket.destroy();
    }
  }

  private module(): typeof https | typeof http {
    return this.server.startsWith('http:') ? nodeHttp : https;
  }

  /**
   * The request's listeners reach the caller's promise only through `box`, which
   * is emptied once it settles: a keep-alive socket keeps its last request and
   * response (and their listeners' scopes) reachable, which would otherwise pin
   * the last body, e.g. a multi-MB LIST page, until the socket is reused.
   */
  private issue(
    path: string,
    method: string,
    body: string | undefined,
    options: https.RequestOptions,
    opts: KubeRequestOptions,
    box: Settle,
    sink: ((chunk: Buffer, headers: http.IncomingHttpHeaders) => void) | undefined,
  ): void {
    const timeoutMs = opts.timeoutMs ?? this.requestTimeoutMs;
    const settle = (r: KubeRawResponse | Error): void => {
      const f = box.settle;
      box.settle = undefined;
      f?.(r);
    };
    const req = this.module().request(`${this.server}${path}`, options, (res) => {
      const status = res.statusCode ?? 0;
      if (sink !== undefined && status >= 200 && status <= 299) {
        drain(res, (chunk) => sink(chunk, res.headers)).then(
          () => settle({ status, headers: res.headers, bytes: EMPTY }),
          (err: unknown) =>
            settle(err instanceof SinkError ? (err.cause as Error) : transportError(err, opts.signal)),
        );
        return;
      }
      collect(res).then(
        (b) => settle({ status, headers: res.headers, bytes: b }),
        (err: unknown) => settle(transportError(err, opts.signal)),
      );
    });
    req.setTimeout(timeoutMs, () =>
      req.destroy(new KubeRequestError(`${method} ${path}: no response within ${timeoutMs} ms`)),
    );
    req.on('error', (err) => settle(transportError(err, opts.signal)));
    req.end(body);
  }

  private async requestOptions(
    method: string,
    body: string | undefined,
    signal: AbortSignal | undefined,
    contentType = 'application/json',
    stream = false,
    accept = 'application/json',
  ): Promise<https.RequestOptions> {
    const headers: http.OutgoingHttpHeaders = { accept, 'user-agent': this.userAgent };
    if (body !== undefined) {
      headers['content-type'] = contentType;
      headers['content-length'] = Buffer.byteLength(body);
    }
    const base = { method, headers, ...(signal ? { signal } : {}) };
    // The common case: credentials read without client-node.
    if (this.conn !== undefined && this.conn.clientNode === undefined) {
      Object.assign(headers, await this.authHeaders(this.conn));
      const c = this.conn;
      const tls: https.RequestOptions = {
        ...(c.ca ? { ca: c.ca } : {}),
        ...(c.cert ? { cert: c.cert } : {}),
        ...(c.key ? { key: c.key } : {}),
        ...(c.tlsServerName ? { servername: c.tlsServerName } : {}),
        ...(c.insecureSkipTLSVerify ? { rejectUnauthorized: false } : {}),
      };
      return { ...base, agent: this.agentFor(tls, stream) };
    }
    // A client-node KubeConfig was given, or the kubeconfig needs one (exec, auth-provider,
    // proxy): applied per request, so rotating credentials are picked up.
    const kc = await this.clientNodeConfig();
    const o: https.RequestOptions = {};
    await kc.applyToHTTPSOptions(o);
    const proxied = kc.getCurrentCluster()?.proxyUrl !== undefined;
    return {
      ...o,
      ...base,
      headers: { ...(o.headers as http.OutgoingHttpHeaders | undefined), ...headers },
      // client-node's agent has no keep-alive; ours reuses connections, except through a proxy.
      agent: proxied ? o.agent : this.agentFor(o, stream),
    };
  }

  private async authHeaders(c: KubeConnection): Promise<Record<string, string>> {
    let token = c.token;
    if (c.tokenFile !== undefined) {
      const now = this.clock.now();
      if (this.fileToken === undefined || now - this.fileToken.readAt >= TOKEN_FILE_TTL_MS) {
        try {
          const value = (await fs.readFile(c.tokenFile, 'utf8')).trim();
          this.fileToken = { value, readAt: now };
        } catch (err) {
          // Keep the last good token, as client-go does; without one the request cannot be made.
          if (this.fileToken === undefined && token === undefined) {
            throw new KubeRequestError(`cannot read token file ${c.tokenFile}: ${(err as Error).message}`);
          }
        }
      }
      token = this.fileToken?.value ?? token;
    }
    if (token !== undefined) return { authorization: `Bearer ${token}` };
    if (c.username !== undefined) {
      const basic = Buffer.from(`${c.username}:${c.password ?? ''}`).toString('base64');
      return { authorization: `Basic ${basic}` };
    }
    return {};
  }

  /**
   * Requests share a keep-alive pool; watches each get a fresh connection
   * (`stream`): a pooled idle socket may be silently dead, and a watch sent
   * over it would hang until the watchdog (R57), then maybe take the next one.
   */
  private agentFor(o: https.RequestOptions, stream: boolean): http.Agent {
    const slot = stream ? 'streamAgent' : 'agent';
    const tls: TlsMaterial = { ca: o.ca, cert: o.cert, key: o.key };
    const cached = this[slot];
    if (cached && this.agentTls && sameTls(this.agentTls, tls)) return cached;
    if (this.agentTls && !sameTls(this.agentTls, tls)) {
      this.agent?.destroy();
      this.streamAgent?.destroy();
      this.agent = this.streamAgent = undefined;
    }
    const agent = this.server.startsWith('http:')
      ? new nodeHttp.Agent({ keepAlive: !stream })
      : new https.Agent({
          keepAlive: !stream,
          ca: o.ca,
          cert: o.cert,
          key: o.key,
          pfx: o.pfx,
          passphrase: o.passphrase,
          servername: o.servername,
          ...(o.rejectUnauthorized === undefined ? {} : { rejectUnauthorized: o.rejectUnauthorized }),
        });
    this[slot] = agent;
    this.agentTls = tls;
    return agent;
  }
}

function sameTls(a: TlsMaterial, b: TlsMaterial): boolean {
  const eq = (x: unknown, y: unknown): boolean =>
    Buffer.isBuffer(x) && Buffer.isBuffer(y) ? x.equals(y) : x === y;
  return eq(a.ca, b.ca) && eq(a.cert, b.cert) && eq(a.key, b.key);
}
