// What a client needs to reach and authenticate to the apiserver, and the errors of finding it:
// shared by the kubeconfig loader, the HTTP client and the @kubernetes/client-node bridge, so
// that none of them imports another for its types.
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

export const SA_DIR = '/var/run/secrets/kubernetes.io/serviceaccount';

/** What a client needs to reach and authenticate to the apiserver. */
export interface KubeConnection {
  readonly server: string;
  readonly ca?: Buffer;
  readonly cert?: Buffer;
  readonly key?: Buffer;
  readonly insecureSkipTLSVerify: boolean;
  readonly tlsServerName?: string;
  readonly token?: string;
  /** Re-read periodically (rotated service-account tokens); wins over `token`, as in client-go. */
  readonly tokenFile?: string;
  readonly username?: string;
  readonly password?: string;
  /** Where it came from, for messages. */
  readonly origin: string;
  /** Set when only @kubernetes/client-node can serve these credentials: load it from these options. */
  readonly clientNode?: LoadKubeConfigOptions;
}
