// Where the daemon's apiserver credentials come from (SPEC §7.1): --kubeconfig,
// else $KUBECONFIG (files merged, first wins), else the in-cluster service
// account; --master overrides the server URL of whichever was loaded.
//
// Read here without @kubernetes/client-node for the common cases (client
// certificates, bearer tokens and token files, basic auth, CA, insecure,
// tls-server-name): importing client-node costs ~80 MB of RSS, more than the
// whole node cache of a 5 000-node cluster. Exec and auth-provider plug-ins
// and proxies are delegated to client-node, loaded on first use.
import * as fs from 'node:fs';
import * as net from 'node:net';
import * as path from 'node:path';
import { parseYaml } from '../yaml/lazy.ts';
import { KubeClient, type KubeClientOptions } from './kube-client.ts';
import {
  KubeConfigError,
  SA_DIR,
  type KubeConnection,
  type LoadKubeConfigOptions,
} from './kube-connection.ts';

export { KubeConfigError, SA_DIR, type KubeConnection, type LoadKubeConfigOptions };

type Obj = Record<string, unknown>;

function obj(v: unknown): Obj {
  return typeof v === 'object' && v !== null && !Array.isArray(v) ? (v as Obj) : {};
}

function str(v: unknown): string | undefined {
  return typeof v === 'string' && v !== '' ? v : undefined;
}

interface Named {
  name: string;
  value: Obj;
  dir: string;
}

interface ParsedFile {
  clusters: Named[];
  users: Named[];
  contexts: Named[];
  current: string | undefined;
}

function readConfigFile(file: string, origin: string): ParsedFile {
  let text: string;
  try {
    text = fs.readFileSync(file, 'utf8');
  } catch (err) {
    throw new KubeConfigError(`cannot read kubeconfig ${file} (${origin}): ${(err as Error).message}`, {
      cause: err,
    });
  }
  let doc: Obj;
  try {
    doc = obj(parseYaml(text) as unknown);
  } catch (err) {
    throw new KubeConfigError(`invalid kubeconfig ${file} (${origin}): ${(err as Error).message}`, {
      cause: err,
    });
  }
  const dir = path.dirname(path.resolve(file));
  const named = (key: string, inner: string): Named[] =>
    (Array.isArray(doc[key]) ? (doc[key] as unknown[]) : [])
      .map((e) => ({ name: str(obj(e)['name']) ?? '', value: obj(obj(e)[inner]), dir }))
      .filter((e) => e.name !== '');
  return {
    clusters: named('clusters', 'cluster'),
    users: named('users', 'user'),
    contexts: named('contexts', 'context'),
    current: str(doc['current-context']),
  };
}

/** A path from a kubeconfig, relative to the file that named it. */
function fileIn(dir: string, p: string | undefined): string | undefined {
  return p === undefined ? undefined : path.resolve(dir, p);
}

function readBytes(
  file: string | undefined,
  data: string | undefined,
  what: string,
  origin: string,
): Buffer | undefined {
  if (file !== undefined) {
    try {
      return fs.readFileSync(file);
    } catch (err) {
      throw new KubeConfigError(`cannot read ${what} ${file} (${origin}): ${(err as Error).message}`, {
        cause: err,
      });
    }
  }
  return data === undefined ? undefined : Buffer.from(data, 'base64');
}

function fromFiles(files: string[], origin: string, opts: LoadKubeConfigOptions): KubeConnection {
  const clusters = new Map<string, Named>();
  const users = new Map<string, Named>();
  const contexts = new Map<string, Named>();
  let current: string | undefined;
  for (const [i, f] of files.entries()) {
    // Like kubectl: later files in KUBECONFIG may be missing; the first defining a name wins.
    if (i > 0 && !fs.existsSync(f)) continue;
    const p = readConfigFile(f, origin);
    for (const c of p.clusters) if (!clusters.has(c.name)) clusters.set(c.name, c);
    for (const u of p.users) if (!users.has(u.name)) users.set(u.name, u);
    for (const c of p.contexts) if (!contexts.has(c.name)) contexts.set(c.name, c);
    current ??= p.current;
  }
  const where = files.join(path.delimiter);
  const ctx = current === undefined ? undefined : contexts.get(current);
  if (ctx === undefined) throw new KubeConfigError(`kubeconfig ${where} (${origin}): no current context`);
  const cluster = clusters.get(str(ctx.value['cluster']) ?? '');
  if (cluster === undefined) {
    throw new KubeConfigError(`kubeconfig ${where} (${origin}): context ${current} names no known cluster`);
  }
  const user = users.get(str(ctx.value['user']) ?? '') ?? { name: '', value: {}, dir: cluster.dir };
  const c = cluster.value;
  const u = user.value;
  const server = str(opts.master) ?? str(c['server']);
  if (server === undefined)
    throw new KubeConfigError(`kubeconfig ${where} (${origin}): cluster has no server`);
  const delegated =
    u['exec'] !== undefined ||
    u['auth-provider'] !== undefined ||
    u['as'] !== undefined ||
    str(c['proxy-url']) !== undefined;
  const src = `${origin} ${where}`;
  return {
    server,
    ca: readBytes(
      fileIn(cluster.dir, str(c['certificate-authority'])),
      str(c['certificate-authority-data']),
      'CA',
      src,
    ),
    cert: readBytes(
      fileIn(user.dir, str(u['client-certificate'])),
      str(u['client-certificate-data']),
      'client certificate',
      src,
    ),
    key: readBytes(fileIn(user.dir, str(u['client-key'])), str(u['client-key-data']), 'client key', src),
    insecureSkipTLSVerify: c['insecure-skip-tls-verify'] === true,
    tlsServerName: str(c['tls-server-name']),
    token: str(u['token']),
    tokenFile: fileIn(user.dir, str(u['tokenFile'])),
    username: str(u['username']),
    password: str(u['password']),
    origin: src,
    ...(delegated ? { clientNode: opts } : {}),
  };
}

/** Reads --kubeconfig / $KUBECONFIG / the in-cluster config (see the file comment). */
export function loadKubeConnection(opts: LoadKubeConfigOptions = {}): KubeConnection {
  const env = opts.env ?? process.env;
  const envPaths = (env['KUBECONFIG'] ?? '').split(path.delimiter).filter((p) => p !== '');
  if (opts.kubeconfig !== undefined && opts.kubeconfig !== '')
    return fromFiles([opts.kubeconfig], '--kubeconfig', opts);
  if (envPaths.length > 0) return fromFiles(envPaths, 'KUBECONFIG', opts);
  const host = env['KUBERNETES_SERVICE_HOST'];
  const saDir = opts.serviceAccountDir ?? SA_DIR;
  const tokenFile = path.join(saDir, 'token');
  if (host !== undefined && host !== '' && fs.existsSync(tokenFile)) {
    const port = env['KUBERNETES_SERVICE_PORT'] ?? '443';
    const scheme = port === '80' || port === '8080' || port === '8001' ? 'http' : 'https';
    const h = net.isIPv6(host) ? `[${host}]` : host;
    const caFile = path.join(saDir, 'ca.crt');
    return {
      server: str(opts.master) ?? `${scheme}://${h}:${port}`,
      ca: fs.existsSync(caFile) ? readBytes(caFile, undefined, 'CA', 'in-cluster') : undefined,
      insecureSkipTLSVerify: false,
      tokenFile,
      origin: 'in-cluster',
    };
  }
  if (opts.master !== undefined && opts.master !== '') {
    // --master alone: no credentials (e.g. a local authenticating proxy).
    return { server: opts.master, insecureSkipTLSVerify: false, origin: '--master' };
  }
  throw new KubeConfigError(
    'no kubeconfig: pass --kubeconfig or --master, set KUBECONFIG, or run in a cluster ' +
      `(KUBERNETES_SERVICE_HOST and ${tokenFile})`,
  );
}

export interface CreateKubeClientOptions extends LoadKubeConfigOptions, KubeClientOptions {}

/** Loads the connection and wraps it in a rate-limited client (default qps 20, burst 30). */
export function createKubeClient(opts: CreateKubeClientOptions = {}): KubeClient {
  return new KubeClient(loadKubeConnection(opts), opts);
}
