// Where the daemon's apiserver credentials come from (SPEC §7.1): --kubeconfig,
// else $KUBECONFIG, else the in-cluster service account; --master overrides
// the server URL of whichever was loaded.
import * as fs from 'node:fs';
import * as net from 'node:net';
import * as path from 'node:path';
import * as k8s from '@kubernetes/client-node';
import { KubeClient, type KubeClientOptions } from './kube-client.ts';

export class KubeConfigError extends Error {
  override readonly name = 'KubeConfigError';
}

export interface LoadKubeConfigOptions {
  /** --kubeconfig */
  readonly kubeconfig?: string;
  /** --master */
  readonly master?: string;
  /** Defaults to process.env (KUBECONFIG, KUBERNETES_SERVICE_HOST/PORT). */
  readonly env?: Readonly<Record<string, string | undefined>>;
  /** Service account directory for the in-cluster config (tests override it). */
  readonly serviceAccountDir?: string;
}

const SA_DIR = '/var/run/secrets/kubernetes.io/serviceaccount';

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

export interface CreateKubeClientOptions extends LoadKubeConfigOptions, KubeClientOptions {}

/** Loads the config and wraps it in a rate-limited client (default qps 20, burst 30). */
export function createKubeClient(opts: CreateKubeClientOptions = {}): KubeClient {
  return new KubeClient(loadKubeConfig(opts), opts);
}
