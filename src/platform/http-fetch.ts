// The HTTP transport of the REST cloud clients (hcloud first): a fetch-shaped call over
// node:http/https. Node's global fetch is undici, whose first use adds ~10 MB
// of resident memory to the daemon (measured as shipped: the hcloud daemon at
// 96.8 MB against 84.6 MB for `memory` at 100 nodes); the client needs only a
// request with a body and a signal, the status, three headers and a text body.
import { nodeHttp } from './node-http.ts';
import * as https from 'node:https';

export interface FetchInit {
  readonly method?: string;
  readonly headers?: Readonly<Record<string, string>>;
  readonly body?: string | undefined;
  readonly signal?: AbortSignal;
}

/** What the client reads of a response (a WHATWG Response has all of it). */
export interface FetchResponse {
  readonly ok: boolean;
  readonly status: number;
  readonly statusText: string;
  readonly headers: { get(name: string): string | null };
  text(): Promise<string>;
}

export type FetchLike = (input: string, init: FetchInit) => Promise<FetchResponse>;

/** Socket inactivity after which a request fails (retryable for the client). */
export const DEFAULT_HTTP_TIMEOUT_MS = 60_000;

/** TLS settings of the https agent: a private CA, a client certificate, or no verification. */
export interface HttpFetchTls {
  readonly ca?: string;
  readonly cert?: string;
  readonly key?: string;
  readonly rejectUnauthorized?: boolean;
}

/**
 * A FetchLike on keep-alive agents. Transport errors reject like fetch's: an
 * Error "fetch failed" whose `cause` is the socket error (with its `code`).
 */
export function httpFetch(timeoutMs = DEFAULT_HTTP_TIMEOUT_MS, tls: HttpFetchTls = {}): FetchLike {
  // Idle keep-alive sockets are unref'd by the agent: they never hold the process open.
  const agents = {
    'http:': new nodeHttp.Agent({ keepAlive: true }),
    'https:': new https.Agent({ keepAlive: true, ...tls }),
  };
  return (input, init) =>
    new Promise((resolve, reject) => {
      const url = new URL(input);
      if (url.protocol !== 'http:' && url.protocol !== 'https:') {
        reject(new TypeError(`fetch failed: unsupported protocol ${url.protocol}`));
        return;
      }
      const fail = (err: Error): void => reject(new Error('fetch failed', { cause: err }));
      const headers: Record<string, string | number> = { ...init.headers };
      if (init.body !== undefined) headers['Content-Length'] = Buffer.byteLength(init.body);
      const mod = url.protocol === 'http:' ? nodeHttp : https;
      const req = mod.request(
        url,
        {
          method: init.method ?? 'GET',
          headers,
          agent: agents[url.protocol],
          timeout: timeoutMs,
          ...(init.signal ? { signal: init.signal } : {}),
        },
        (res) => {
          const chunks: Buffer[] = [];
          res.on('data', (c: Buffer) => chunks.push(c));
          res.on('error', fail);
          res.on('end', () => {
            const text = Buffer.concat(chunks).toString('utf8');
            const status = res.statusCode ?? 0;
            resolve({
              ok: status >= 200 && status < 300,
              status,
              statusText: res.statusMessage ?? '',
              headers: {
                get(name) {
                  const v = res.headers[name.toLowerCase()];
                  if (v === undefined) return null;
                  return Array.isArray(v) ? v.join(', ') : v;
                },
              },
              text: () => Promise.resolve(text),
            });
          });
        },
      );
      req.on('timeout', () => req.destroy(new Error(`no response activity for ${timeoutMs} ms`)));
      req.on('error', fail);
      req.end(init.body);
    });
}
