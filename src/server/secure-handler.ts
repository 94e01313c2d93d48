// What the secure port answers (SPEC R81-R83): the always-allowed paths (the
// probes) without credentials; everything else only for a bearer token that a
// TokenReview authenticates and a SubjectAccessReview on the non-resource path
// allows. Unlike k8s.io/apiserver, anonymous requests are refused with 401
// rather than authorized as system:anonymous, so a misbound RBAC rule for
// system:unauthenticated cannot open /metrics.
import type { Logger } from '../core/ports.ts';
import {
  bearerToken,
  DelegationError,
  type DelegatingAuthenticator,
  type DelegatingAuthorizer,
} from './delegated-auth.ts';
import type { Handler, HandlerResponse } from './http-server.ts';

export interface SecureHandlerOptions {
  /** Exact paths, or prefixes ending in `/*` (k8s.io/apiserver's path authorizer). */
  readonly alwaysAllowPaths: readonly string[];
  /** Serves the probe paths (404 for others). */
  readonly health: Handler;
  /** Serves /metrics (404 for others). */
  readonly metrics: Handler;
  readonly authenticator: DelegatingAuthenticator;
  readonly authorizer: DelegatingAuthorizer;
  readonly logger: Logger;
}

export function pathAllowed(patterns: readonly string[], path: string): boolean {
  return patterns.some((p) => (p.endsWith('/*') ? path.startsWith(p.slice(0, -1)) : p === path));
}

function text(status: number, body: string, headers?: Record<string, string>): HandlerResponse {
  return { status, body: `${body}\n`, ...(headers ? { headers } : {}) };
}

const HEALTH_PATHS = new Set(['/healthz', '/readyz', '/livez']);

export function secureHandler(o: SecureHandlerOptions): Handler {
  const route: Handler = (url, req) =>
    url.pathname === '/metrics'
      ? o.metrics(url, req)
      : HEALTH_PATHS.has(url.pathname)
        ? o.health(url, req)
        : Promise.resolve(text(404, '404 page not found'));
  return async (url, req) => {
    if (pathAllowed(o.alwaysAllowPaths, url.pathname)) return route(url, req);
    const auth = req.headers.authorization;
    const token = bearerToken(Array.isArray(auth) ? auth[0] : auth);
    const challenge = { 'www-authenticate': 'Bearer realm="cloud-route-controller"' };
    if (token === undefined) return text(401, 'Unauthorized', challenge);
    let user;
    try {
      const r = await o.authenticator.authenticate(token);
      if (!r.authenticated) {
        o.logger.v(2).info('Unable to authenticate the request', { path: url.pathname, reason: r.reason });
        return text(401, 'Unauthorized', challenge);
      }
      user = r.user;
    } catch (err) {
      if (!(err instanceof DelegationError)) throw err;
      o.logger.error('Unable to authenticate the request due to an error', { err: err.message });
      return text(401, 'Unauthorized', challenge);
    }
    const verb = req.method.toLowerCase();
    try {
      const d = await o.authorizer.authorize(user, url.pathname, verb);
      if (!d.allowed) {
        const why = d.reason === '' ? '' : `: ${d.reason}`;
        return text(403, `forbidden: User "${user.username}" cannot ${verb} path "${url.pathname}"${why}`);
      }
    } catch (err) {
      if (!(err instanceof DelegationError)) throw err;
      o.logger.error('Authorization error', { user: user.username, path: url.pathname, err: err.message });
      return text(500, 'Internal Server Error: authorization failed');
    }
    return route(url, req);
  };
}
