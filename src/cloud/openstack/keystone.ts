// Keystone v3 tokens for the openstack plug-in, hand-written over src/platform/http-fetch.ts:
// there is no maintained OpenStack SDK for Node.js, and the plug-in needs one call of the
// identity API (POST /v3/auth/tokens: password or application-credential auth, project scope)
// and the network endpoint from the catalog that call returns. The token is renewed before it
// expires and at once when Neutron answers 401 (revoked, or the clock of one side is off).
import { isAbortError, PermanentError, throwIfAborted } from '../../core/errors.ts';
import type { FetchLike } from '../../platform/http-fetch.ts';
import type { EndpointInterface, OpenStackAuth, OpenStackConfig, ProjectRef, UserRef } from './config.ts';
import { httpError, transportError } from './errors.ts';

export interface Token {
  readonly id: string;
  /** Neutron's base URL, ending in /v2.0. */
  readonly networkUrl: string;
  readonly expiresAt: number;
  readonly issuedAt: number;
}

/** Renew when less than this share of the token's life is left, and at least 5 minutes before. */
const RENEW_SHARE = 0.25;
const RENEW_MARGIN_MS = 5 * 60_000;

function userBody(u: UserRef): Record<string, unknown> {
  if (u.id !== undefined) return { id: u.id };
  return {
    name: u.name,
    domain: u.domainId !== undefined ? { id: u.domainId } : { name: u.domainName },
  };
}

function projectBody(p: ProjectRef): Record<string, unknown> {
  if (p.id !== undefined) return { id: p.id };
  return {
    name: p.name,
    domain: p.domainId !== undefined ? { id: p.domainId } : { name: p.domainName },
  };
}

/** The body of POST /v3/auth/tokens for the configured method. */
export function authRequestBody(auth: OpenStackAuth): unknown {
  if (auth.method === 'application_credential') {
    const credential: Record<string, unknown> =
      auth.id !== undefined
        ? { id: auth.id, secret: auth.secret }
        : { name: auth.name, secret: auth.secret, user: userBody(auth.user ?? {}) };
    // An application credential carries its own project: a scope is refused.
    return {
      auth: { identity: { methods: ['application_credential'], application_credential: credential } },
    };
  }
  return {
    auth: {
      identity: {
        methods: ['password'],
        password: { user: { ...userBody(auth.user), password: auth.password } },
      },
      scope: { project: projectBody(auth.project) },
    },
  };
}

interface CatalogEndpoint {
  interface?: unknown;
  region?: unknown;
  region_id?: unknown;
  url?: unknown;
}

/** The network endpoint of the catalog for the interface and region, with /v2.0. */
export function networkEndpoint(
  catalog: unknown,
  iface: EndpointInterface,
  region: string | undefined,
): string | undefined {
  if (!Array.isArray(catalog)) return undefined;
  for (const service of catalog as { type?: unknown; endpoints?: unknown }[]) {
    if (service?.type !== 'network' || !Array.isArray(service.endpoints)) continue;
    for (const e of service.endpoints as CatalogEndpoint[]) {
      if (e.interface !== iface || typeof e.url !== 'string') continue;
      if (region !== undefined && e.region !== region && e.region_id !== region) continue;
      const base = e.url.replace(/\/+$/, '');
      return /\/v2\.0$/.test(base) ? base : `${base}/v2.0`;
    }
  }
  return undefined;
}

export interface KeystoneOptions {
  readonly config: Pick<OpenStackConfig, 'authUrl' | 'auth' | 'region' | 'endpointInterface'>;
  readonly fetch: FetchLike;
  readonly now?: () => number;
  readonly userAgent?: string;
}

export class Keystone {
  private readonly opts: KeystoneOptions;
  private readonly now: () => number;
  private current: Token | undefined;
  private pending: Promise<Token> | undefined;

  constructor(opts: KeystoneOptions) {
    this.opts = opts;
    this.now = opts.now ?? Date.now;
  }

  /** A valid token, issuing one if there is none or it is close to expiry; callers share one issue. */
  async token(signal: AbortSignal): Promise<Token> {
    throwIfAborted(signal);
    const t = this.current;
    if (t !== undefined && !this.dueForRenewal(t)) return t;
    for (;;) {
      this.pending ??= this.issue(signal).finally(() => {
        this.pending = undefined;
      });
      try {
        return await this.pending;
      } catch (err) {
        // A peer's abort (its own timeout) is not ours: issue again under our signal.
        if (isAbortError(err) && !signal.aborted) continue;
        // Keystone is down while renewing early: the old token still works until it expires.
        if (!isAbortError(err) && t !== undefined && t === this.current && this.now() < t.expiresAt) return t;
        throw err;
      }
    }
  }

  /** Drops `token` after a 401, so the next call issues a new one (unless a peer already did). */
  invalidate(token: Token): void {
    if (this.current === token) this.current = undefined;
  }

  private dueForRenewal(t: Token): boolean {
    const life = t.expiresAt - t.issuedAt;
    const margin = Math.min(RENEW_MARGIN_MS, life * RENEW_SHARE);
    return this.now() >= t.expiresAt - margin;
  }

  private async issue(signal: AbortSignal): Promise<Token> {
    const { config } = this.opts;
    const what = `POST ${config.authUrl}/auth/tokens (${config.auth.method})`;
    let res;
    try {
      res = await this.opts.fetch(`${config.authUrl}/auth/tokens`, {
        method: 'POST',
        headers: {
          'Content-Type': 'application/json',
          Accept: 'application/json',
          'User-Agent': this.opts.userAgent ?? 'cloud-route-controller (openstack)',
        },
        body: JSON.stringify(authRequestBody(config.auth)),
        signal,
      });
    } catch (err) {
      throw transportError(what, err, signal);
    }
    const text = await res.text();
    if (!res.ok) throw httpError(what, res.status, text);
    const id = res.headers.get('x-subject-token');
    let body: { token?: { expires_at?: unknown; issued_at?: unknown; catalog?: unknown } };
    try {
      body = JSON.parse(text) as typeof body;
    } catch {
      throw new PermanentError(`${what}: the answer is not JSON`);
    }
    if (id === null || id === '') throw new PermanentError(`${what}: the answer has no X-Subject-Token`);
    const networkUrl = networkEndpoint(body.token?.catalog, config.endpointInterface, config.region);
    if (networkUrl === undefined) {
      throw new PermanentError(
        `${what}: the catalog has no ${config.endpointInterface} network endpoint` +
          (config.region !== undefined ? ` in region ${config.region}` : '') +
          ' (check "region" and "os-endpoint-type", and that the project may use Neutron)',
      );
    }
    const now = this.now();
    const expires = typeof body.token?.expires_at === 'string' ? Date.parse(body.token.expires_at) : NaN;
    const issued = typeof body.token?.issued_at === 'string' ? Date.parse(body.token.issued_at) : NaN;
    // The lifetime by Keystone's own clock, counted from now on ours: a skew between the two
    // clocks must not make a fresh token look expired (or an old one fresh). Without an
    // expiry the token is used until Neutron refuses it (401 → a new one).
    const life = Number.isNaN(expires)
      ? Number.POSITIVE_INFINITY
      : Number.isNaN(issued)
        ? expires - now
        : expires - issued;
    const token: Token = { id, networkUrl, issuedAt: now, expiresAt: now + life };
    this.current = token;
    return token;
  }
}
