// The daemon's listeners (SPEC §7.1, §7.5): the HTTPS secure port, and the
// opt-in plain-HTTP /metrics and probe endpoints. Explicit start/stop; stop
// also drops keep-alive connections (scrapers).
import type * as http from 'node:http';
import { nodeHttp } from '../platform/node-http.ts';
import https from 'node:https';
import type { AddressInfo } from 'node:net';
import type { Registry } from 'prom-client';
import type { BindAddress } from './bind-address.ts';
import type { Logger } from '../core/ports.ts';
import { probeBody, type Health } from './health.ts';

export interface HandlerResponse {
  readonly status: number;
  readonly body: string;
  readonly contentType?: string;
  readonly headers?: Readonly<Record<string, string>>;
}

export interface HandlerRequest {
  readonly method: string;
  readonly headers: http.IncomingHttpHeaders;
}

export type Handler = (url: URL, req: HandlerRequest) => Promise<HandlerResponse>;

/** PEM certificate chain and key: the endpoint serves HTTPS. */
export interface TlsPair {
  readonly cert: string;
  readonly key: string;
}

export class ServerStartError extends Error {
  override readonly name = 'ServerStartError';
}

export class HttpEndpoint {
  readonly label: string;
  private readonly bind: BindAddress;
  private readonly handler: Handler;
  private readonly logger: Logger;
  private readonly tls: TlsPair | undefined;
  private server: http.Server | undefined;

  constructor(label: string, bind: BindAddress, handler: Handler, logger: Logger, tls?: TlsPair) {
    this.label = label;
    this.bind = bind;
    this.handler = handler;
    this.logger = logger;
    this.tls = tls;
  }

  /** Listens; resolves with the bound address, or undefined when disabled (`0`). */
  async start(): Promise<AddressInfo | undefined> {
    if (this.bind === 'disabled' || this.server) return this.address();
    const { host, port } = this.bind;
    const listener: http.RequestListener = (req, res) => {
      const url = new URL(req.url ?? '/', 'http://localhost');
      if (req.method !== 'GET' && req.method !== 'HEAD') {
        res.writeHead(405, { 'content-type': 'text/plain', allow: 'GET, HEAD' }).end('method not allowed\n');
        return;
      }
      this.handler(url, { method: req.method, headers: req.headers }).then(
        (r) => {
          res.writeHead(r.status, {
            ...r.headers,
            'content-type': r.contentType ?? 'text/plain; charset=utf-8',
          });
          res.end(req.method === 'HEAD' ? undefined : r.body);
        },
        (err: unknown) => {
          this.logger.error(`${this.label} handler failed`, { path: url.pathname, err });
          res.writeHead(500, { 'content-type': 'text/plain' }).end('internal error\n');
        },
      );
    };
    const server = this.tls
      ? https.createServer({ cert: this.tls.cert, key: this.tls.key, minVersion: 'TLSv1.2' }, listener)
      : nodeHttp.createServer(listener);
    await new Promise<void>((resolve, reject) => {
      const onError = (err: Error): void => {
        reject(new ServerStartError(`${this.label}: cannot listen on ${host ?? ''}:${port}: ${err.message}`));
      };
      server.once('error', onError);
      server.listen({ host, port }, () => {
        server.off('error', onError);
        resolve();
      });
    });
    this.server = server;
    const addr = this.address();
    this.logger.info(`Serving ${this.label}`, { address: addr ? `${addr.address}:${addr.port}` : '' });
    return addr;
  }

  address(): AddressInfo | undefined {
    const a = this.server?.address();
    return a !== null && typeof a === 'object' ? a : undefined;
  }

  async stop(): Promise<void> {
    const server = this.server;
    if (!server) return;
    this.server = undefined;
    const closed = new Promise<void>((resolve) => server.close(() => resolve()));
    server.closeAllConnections();
    await closed;
  }
}

export function metricsHandler(registry: Registry): Handler {
  return async (url) => {
    if (url.pathname !== '/metrics') return { status: 404, body: '404 page not found\n' };
    return { status: 200, body: await registry.metrics(), contentType: registry.contentType };
  };
}

export function healthHandler(health: Health): Handler {
  return async (url) => {
    const verbose = url.searchParams.has('verbose');
    switch (url.pathname) {
      case '/readyz':
        return probeBody('readyz', health.readyz(), verbose);
      case '/healthz':
        return probeBody('healthz', health.livez(), verbose);
      case '/livez':
        return probeBody('livez', health.livez(), verbose);
      default:
        return { status: 404, body: '404 page not found\n' };
    }
  };
}
