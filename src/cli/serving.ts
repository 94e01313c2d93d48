// Builds the secure port (SPEC §7.5) from the flags: its certificate, and the
// apiserver clients its TokenReviews and SubjectAccessReviews go through.
import type { Clock } from '../core/clock.ts';
import { createKubeClient, type KubeClient } from '../kube/index.ts';
import type { Logger } from '../core/ports.ts';
import {
  DelegatingAuthenticator,
  DelegatingAuthorizer,
  type ReviewTransport,
} from '../server/delegated-auth.ts';
import { HttpEndpoint, type Handler } from '../server/http-server.ts';
import { secureHandler } from '../server/secure-handler.ts';
import { loadServingCert, selfSignedServingCert } from '../server/serving-cert.ts';
import type { DaemonFlags } from './flags.ts';
import type { CliIO } from './io.ts';
import { VERSION } from './version.ts';

export interface SecureServing {
  readonly endpoint: HttpEndpoint;
  /** Closes the review clients this created (not the shared one). */
  close(): void;
}

export class SecureServingError extends Error {
  readonly kind = 'secure-serving' as const;
  override readonly name = 'SecureServingError';
}

function transportOf(client: KubeClient): ReviewTransport {
  // Reviews skip the client-side limiter: a scrape must not wait behind node patches,
  // and the caches bound how many there are.
  return (path, body, signal) =>
    client.requestJson(path, { method: 'POST', body, signal, rateLimited: false });
}

/** undefined when --secure-port=0. Throws SecureServingError for unusable flags or files. */
export async function secureServing(o: {
  readonly flags: DaemonFlags;
  readonly io: CliIO;
  /** The daemon's own client, when it has one; reused when no separate kubeconfig is given. */
  readonly kube: KubeClient | undefined;
  readonly clock: Clock;
  readonly logger: Logger;
  readonly health: Handler;
  readonly metrics: Handler;
}): Promise<SecureServing | undefined> {
  const s = o.flags.serving;
  if (s.securePort === 0) return undefined;
  const owned: KubeClient[] = [];
  const clientFor = (kubeconfig: string, what: string): KubeClient => {
    if (kubeconfig === '' && o.kube) return o.kube;
    try {
      const c = createKubeClient({
        kubeconfig: kubeconfig === '' ? o.flags.kubeconfig : kubeconfig,
        master: kubeconfig === '' ? o.flags.master : '',
        env: o.io.env,
        userAgent: `cloud-route-controller/${VERSION}`,
      });
      owned.push(c);
      return c;
    } catch (err) {
      for (const c of owned) c.close();
      throw new SecureServingError(
        `--secure-port needs apiserver credentials for ${what} (--${what}-kubeconfig, --kubeconfig, KUBECONFIG or in-cluster), or --secure-port=0: ${(err as Error).message}`,
      );
    }
  };
  const authnClient = clientFor(s.authenticationKubeconfig, 'authentication');
  const authzClient = clientFor(s.authorizationKubeconfig, 'authorization');
  let cert;
  try {
    cert =
      s.tlsCertFile !== ''
        ? await loadServingCert(s.tlsCertFile, s.tlsPrivateKeyFile, o.io.readFile)
        : await selfSignedServingCert([s.bindAddress]);
  } catch (err) {
    for (const c of owned) c.close();
    throw new SecureServingError((err as Error).message);
  }
  o.logger.info(
    cert.selfSigned ? 'Generated self-signed serving certificate' : 'Loaded serving certificate',
    {
      sha256: cert.fingerprint256,
    },
  );
  const handler = secureHandler({
    alwaysAllowPaths: s.alwaysAllowPaths,
    health: o.health,
    metrics: o.metrics,
    authenticator: new DelegatingAuthenticator({ transport: transportOf(authnClient), clock: o.clock }),
    authorizer: new DelegatingAuthorizer({ transport: transportOf(authzClient), clock: o.clock }),
    logger: o.logger,
  });
  const endpoint = new HttpEndpoint(
    'securely',
    { host: s.bindAddress, port: s.securePort },
    handler,
    o.logger,
    { cert: cert.cert, key: cert.key },
  );
  return { endpoint, close: () => owned.forEach((c) => c.close()) };
}
