// The same selection as kubeconfig.ts (--kubeconfig, else $KUBECONFIG, else
// in-cluster; --master overrides the server), loaded as a
// @kubernetes/client-node KubeConfig. Kept apart because importing
// client-node costs ~80 MB of RSS (its generated API): the daemon only loads
// this module for credentials it cannot handle itself (exec and auth-provider
// plug-ins, proxies) or when asked for the generated CoreV1Api.
import * as fs from 'node:fs';
import * as net from 'node:net';
import * as path from 'node:path';
import * as k8s from '@kubernetes/client-node';
import {
  KubeConfigError,
  SA_DIR,
  type KubeConnection,
  type LoadKubeConfigOptions,
} from './kube-connection.ts';

function loadFile(kc: k8s.KubeConfig, file: string, origin: string): void {
  try {
    fs.accessSync(file, fs.constants.R_OK);
  } catch (err) {
    throw new KubeConfigError(`cannot read kubeconfig ${file} (${origin}): ${(err as Error).message}`, {
      cause: err,
    });
  }
  try {
    kc.loadFromFile(file);
  } catch (err) {
    throw new KubeConfigError(`invalid kubeconfig ${file} (${origin}): ${(err as Error).message}`, {
      cause: err,
    });
  }
}

export function loadKubeConfig(opts: LoadKubeConfigOptions = {}): k8s.KubeConfig {
  const env = opts.env ?? process.env;
  const kc = new k8s.KubeConfig();
  const envPaths = (env['KUBECONFIG'] ?? '').split(path.delimiter).filter((p) => p !== '');
  if (opts.kubeconfig !== undefined && opts.kubeconfig !== '') {
    loadFile(kc, opts.kubeconfig, '--kubeconfig');
  } else if (envPaths.length > 0) {
    // Like kubectl: every listed file is merged, the first one's current context wins.
    const [first, ...rest] = envPaths as [string, ...string[]];
    loadFile(kc, first, 'KUBECONFIG');
    for (const p of rest) {
      if (!fs.existsSync(p)) continue;
      const other = new k8s.KubeConfig();
      loadFile(other, p, 'KUBECONFIG');
      // kubectl's merge: the first file defining a name wins.
      for (const c of other.clusters) if (!kc.getCluster(c.name)) kc.addCluster(c);
      for (const u of other.users) if (!kc.getUser(u.name)) kc.addUser(u);
      for (const x of other.contexts) if (!kc.getContextObject(x.name)) kc.addContext(x);
      if (kc.currentContext === undefined || kc.currentContext === '')
        kc.currentContext = other.currentContext;
    }
  } else {
    const host = env['KUBERNETES_SERVICE_HOST'];
    const saDir = opts.serviceAccountDir ?? SA_DIR;
    if (host === undefined || host === '' || !fs.existsSync(path.join(saDir, 'token'))) {
      if (opts.master === undefined || opts.master === '') {
        throw new KubeConfigError(
          'no kubeconfig: pass --kubeconfig or --master, set KUBECONFIG, or run in a cluster ' +
            `(KUBERNETES_SERVICE_HOST and ${saDir}/token)`,
        );
      }
      // --master alone: an unauthenticated client (e.g. a local insecure proxy).
      kc.loadFromClusterAndUser(
        // client-node refuses plain http unless TLS verification is marked off.
        { name: 'master', server: opts.master, skipTLSVerify: opts.master.startsWith('http:') },
        { name: 'anonymous' },
      );
      return kc;
    }
    loadInCluster(kc, host, env['KUBERNETES_SERVICE_PORT'] ?? '443', saDir);
  }
  const cluster = kc.getCurrentCluster();
  if (!cluster) throw new KubeConfigError('kubeconfig has no current context/cluster');
  if (opts.master !== undefined && opts.master !== '') {
    kc.clusters = kc.clusters.map((c) => (c.name === cluster.name ? { ...c, server: opts.master! } : c));
  }
  return kc;
}

/** client-node's loadFromCluster, but reading the given env and directory. */
function loadInCluster(kc: k8s.KubeConfig, host: string, port: string, saDir: string): void {
  const scheme = port === '80' || port === '8080' || port === '8001' ? 'http' : 'https';
  const h = net.isIPv6(host) ? `[${host}]` : host;
  kc.loadFromOptions({
    clusters: [
      {
        name: 'inCluster',
        caFile: path.join(saDir, 'ca.crt'),
        server: `${scheme}://${h}:${port}`,
        skipTLSVerify: false,
      },
    ],
    users: [
      {
        name: 'inClusterUser',
        authProvider: { name: 'tokenFile', config: { tokenFile: path.join(saDir, 'token') } },
      },
    ],
    contexts: [{ name: 'inClusterContext', cluster: 'inCluster', user: 'inClusterUser' }],
    currentContext: 'inClusterContext',
  });
}

/** A client-node KubeConfig equivalent to a connection read by kubeconfig.ts. */
export function clientNodeConfigFor(c: KubeConnection): k8s.KubeConfig {
  if (c.clientNode) return loadKubeConfig(c.clientNode);
  const kc = new k8s.KubeConfig();
  kc.loadFromOptions({
    clusters: [
      {
        name: 'cluster',
        server: c.server,
        caData: c.ca?.toString('base64'),
        skipTLSVerify: c.insecureSkipTLSVerify || c.server.startsWith('http:'),
        tlsServerName: c.tlsServerName,
      },
    ],
    users: [
      {
        name: 'user',
        certData: c.cert?.toString('base64'),
        keyData: c.key?.toString('base64'),
        token: c.token,
        username: c.username,
        password: c.password,
        ...(c.tokenFile ? { authProvider: { name: 'tokenFile', config: { tokenFile: c.tokenFile } } } : {}),
      },
    ],
    contexts: [{ name: 'context', cluster: 'cluster', user: 'user' }],
    currentContext: 'context',
  });
  return kc;
}
