// HTTP(S) helpers and kubeconfigs for the control plane's clients.
import * as fs from 'node:fs';
import * as http from 'node:http';
import * as https from 'node:https';
import * as net from 'node:net';

export interface ApiResponse {
  status: number;
  body: string;
}

// ------------------------------------------------------------------------------------------------
// helpers

export async function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const srv = net.createServer();
    srv.unref();
    srv.once('error', reject);
    srv.listen(0, '127.0.0.1', () => {
      const addr = srv.address();
      const port = typeof addr === 'object' && addr !== null ? addr.port : 0;
      srv.close(() => (port > 0 ? resolve(port) : reject(new Error('no port'))));
    });
  });
}

export function tail(file: string, lines = 60): string {
  try {
    const text = fs.readFileSync(file, 'utf8');
    return text.split('\n').slice(-lines).join('\n');
  } catch {
    return `(no log at ${file})`;
  }
}

/** One request with the whole body read; the timeout names what timed out. */
function send(
  request: typeof http.request,
  url: URL | string,
  options: http.RequestOptions | https.RequestOptions,
  data: string | undefined,
  timeoutMs: number,
  what: string,
): Promise<ApiResponse> {
  return new Promise((resolve, reject) => {
    const req = request(url, { ...options, agent: false, timeout: timeoutMs }, (res) => {
      const chunks: Buffer[] = [];
      res.on('data', (c: Buffer) => chunks.push(c));
      res.on('end', () =>
        resolve({ status: res.statusCode ?? 0, body: Buffer.concat(chunks).toString('utf8') }),
      );
      res.on('error', reject);
    });
    req.on('timeout', () => req.destroy(new Error(`timeout after ${timeoutMs} ms: ${what}`)));
    req.on('error', reject);
    req.end(data);
  });
}

export function httpJson(
  url: string,
  method: string,
  body?: unknown,
  timeoutMs = 5000,
): Promise<ApiResponse> {
  const data = body === undefined ? undefined : JSON.stringify(body);
  const headers =
    data === undefined
      ? {}
      : { 'content-type': 'application/json', 'content-length': Buffer.byteLength(data) };
  return send(http.request, url, { method, headers }, data, timeoutMs, `${method} ${url}`);
}

export interface TlsIdentity {
  ca: string;
  cert: string;
  key: string;
}

export function httpsRequest(
  server: string,
  id: TlsIdentity,
  method: string,
  urlPath: string,
  body?: string,
  contentType = 'application/json',
  timeoutMs = 10_000,
): Promise<ApiResponse> {
  const headers = {
    accept: 'application/json',
    ...(body === undefined ? {} : { 'content-type': contentType, 'content-length': Buffer.byteLength(body) }),
  };
  return send(
    https.request,
    new URL(urlPath, server),
    { method, ca: id.ca, cert: id.cert, key: id.key, headers },
    body,
    timeoutMs,
    `${method} ${urlPath}`,
  );
}

// ------------------------------------------------------------------------------------------------
// kubeconfig

export interface KubeUser {
  name: string;
  crt: string;
  key: string;
}

export function b64File(p: string): string {
  return fs.readFileSync(p).toString('base64');
}

/** Writes a kubeconfig (JSON, which is valid YAML) with one context per user; the first is current. */
export function writeKubeconfig(
  file: string,
  server: string,
  caCrt: string,
  users: { context: string; user: KubeUser }[],
): void {
  const first = users[0];
  if (first === undefined) throw new Error('writeKubeconfig: no users');
  const cfg = {
    apiVersion: 'v1',
    kind: 'Config',
    clusters: [{ name: 'testenv', cluster: { server, 'certificate-authority-data': b64File(caCrt) } }],
    users: users.map(({ user }) => ({
      name: user.name,
      user: { 'client-certificate-data': b64File(user.crt), 'client-key-data': b64File(user.key) },
    })),
    contexts: users.map(({ context, user }) => ({
      name: context,
      context: { cluster: 'testenv', user: user.name },
    })),
    'current-context': first.context,
  };
  fs.writeFileSync(file, JSON.stringify(cfg, null, 2) + '\n', { mode: 0o600 });
}

export function b64Field(obj: unknown, key: string): string | undefined {
  if (typeof obj !== 'object' || obj === null) return undefined;
  const v = (obj as Record<string, unknown>)[key];
  return typeof v === 'string' ? v : undefined;
}

/** Reads server, CA and client cert/key of the current context of a kubeconfig written here. */
export function kubeconfigIdentity(file: string): { server: string } & TlsIdentity {
  const cfg = JSON.parse(fs.readFileSync(file, 'utf8')) as {
    'current-context'?: string;
    contexts?: { name: string; context: { cluster: string; user: string } }[];
    clusters?: { name: string; cluster: unknown }[];
    users?: { name: string; user: unknown }[];
  };
  const ctx = cfg.contexts?.find((c) => c.name === cfg['current-context']);
  const cluster = cfg.clusters?.find((c) => c.name === ctx?.context.cluster)?.cluster;
  const user = cfg.users?.find((u) => u.name === ctx?.context.user)?.user;
  const server = b64Field(cluster, 'server');
  const ca = b64Field(cluster, 'certificate-authority-data');
  const cert = b64Field(user, 'client-certificate-data');
  const key = b64Field(user, 'client-key-data');
  if (server === undefined || ca === undefined || cert === undefined || key === undefined) {
    throw new Error(`kubeconfig ${file}: current context lacks server/CA/client cert`);
  }
  const dec = (s: string): string => Buffer.from(s, 'base64').toString('utf8');
  return { server, ca: dec(ca), cert: dec(cert), key: dec(key) };
}

/**
 * Plain HTTPS request to the apiserver as the current user of `kubeconfig` (one written by this
 * module). `body` objects are sent as JSON; pass a string plus `contentType` for patches.
 */
export function apiRequest(
  kubeconfig: string,
  method: string,
  urlPath: string,
  body?: unknown,
  contentType = 'application/json',
): Promise<ApiResponse> {
  const id = kubeconfigIdentity(kubeconfig);
  const data = body === undefined ? undefined : typeof body === 'string' ? body : JSON.stringify(body);
  return httpsRequest(id.server, id, method, urlPath, data, contentType);
}
