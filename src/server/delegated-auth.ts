// Delegated authentication and authorization of the secure port (SPEC R81,
// R82), as k8s.io/apiserver's DelegatingAuthenticationOptions and
// DelegatingAuthorizationOptions do it: a bearer token is checked with a
// TokenReview, the user it names with a SubjectAccessReview for the
// non-resource path and verb. Both answers are cached for 10 s, allowed and
// denied alike (upstream's CacheTTL, AllowCacheTTL and DenyCacheTTL); a failed
// review is not cached. Hand-written because it is two POSTs and a TTL map;
// the apiserver library is Go only.
import { createHash } from 'node:crypto';
import type { Clock } from '../core/clock.ts';

/** POSTs `body` to an apiserver path and resolves with the decoded response object. */
export type ReviewTransport = (path: string, body: object, signal: AbortSignal) => Promise<unknown>;

export interface UserInfo {
  readonly username: string;
  readonly uid?: string;
  readonly groups: readonly string[];
  readonly extra?: Readonly<Record<string, readonly string[]>>;
}

export type AuthenticationResult =
  | { readonly authenticated: true; readonly user: UserInfo }
  | { readonly authenticated: false; readonly reason: string };

export interface AuthorizationDecision {
  readonly allowed: boolean;
  readonly reason: string;
}

/** A review could not be made (apiserver unreachable, an error status, a malformed answer). */
export class DelegationError extends Error {
  readonly kind = 'delegation' as const;
  override readonly name = 'DelegationError';
}

/** upstream: 10 s for tokens (CacheTTL) and for both authorization outcomes. */
export const DEFAULT_CACHE_TTL_MS = 10_000;
/** Bounds memory when many distinct tokens are presented. */
export const DEFAULT_CACHE_ENTRIES = 1024;
const REVIEW_TIMEOUT_MS = 10_000;

/** A size-bounded map whose entries expire `ttlMs` after they were set. */
export class TtlCache<V> {
  private readonly entries = new Map<string, { value: V; expires: number }>();
  private readonly clock: Clock;
  private readonly ttlMs: number;
  private readonly maxEntries: number;

  constructor(clock: Clock, ttlMs: number, maxEntries: number) {
    this.clock = clock;
    this.ttlMs = ttlMs;
    this.maxEntries = maxEntries;
  }

  get(key: string): V | undefined {
    const e = this.entries.get(key);
    if (e === undefined) return undefined;
    if (e.expires <= this.clock.now()) {
      this.entries.delete(key);
      return undefined;
    }
    return e.value;
  }

  set(key: string, value: V): void {
    this.entries.delete(key);
    if (this.entries.size >= this.maxEntries) {
      // Map iteration is insertion order: the oldest entry goes first.
      const oldest = this.entries.keys().next();
      if (oldest.done !== true) this.entries.delete(oldest.value);
    }
    this.entries.set(key, { value, expires: this.clock.now() + this.ttlMs });
  }

  get size(): number {
    return this.entries.size;
  }
}

export interface DelegationOptions {
  readonly transport: ReviewTransport;
  readonly clock: Clock;
  readonly ttlMs?: number;
  readonly maxEntries?: number;
}

function isRecord(v: unknown): v is Record<string, unknown> {
  return typeof v === 'object' && v !== null && !Array.isArray(v);
}

function strings(v: unknown): string[] {
  return Array.isArray(v) ? v.filter((x): x is string => typeof x === 'string') : [];
}

async function review(o: DelegationOptions, path: string, body: object): Promise<Record<string, unknown>> {
  let res: unknown;
  try {
    res = await o.transport(path, body, AbortSignal.timeout(REVIEW_TIMEOUT_MS));
  } catch (err) {
    throw new DelegationError(`${path}: ${err instanceof Error ? err.message : String(err)}`, { cause: err });
  }
  const status = isRecord(res) ? res['status'] : undefined;
  if (!isRecord(status)) throw new DelegationError(`${path}: the answer has no status`);
  return status;
}

export class DelegatingAuthenticator {
  private readonly o: DelegationOptions;
  private readonly cache: TtlCache<AuthenticationResult>;

  constructor(o: DelegationOptions) {
    this.o = o;
    this.cache = new TtlCache(
      o.clock,
      o.ttlMs ?? DEFAULT_CACHE_TTL_MS,
      o.maxEntries ?? DEFAULT_CACHE_ENTRIES,
    );
  }

  /** Throws DelegationError when the TokenReview cannot be made. */
  async authenticate(token: string): Promise<AuthenticationResult> {
    // Keyed by a hash so that the cache holds no bearer token.
    const key = createHash('sha256').update(token).digest('hex');
    const cached = this.cache.get(key);
    if (cached !== undefined) return cached;
    const status = await review(this.o, '/apis/authentication.k8s.io/v1/tokenreviews', {
      apiVersion: 'authentication.k8s.io/v1',
      kind: 'TokenReview',
      spec: { token },
    });
    let result: AuthenticationResult;
    const user = status['user'];
    if (status['authenticated'] === true && isRecord(user) && typeof user['username'] === 'string') {
      const extra: Record<string, string[]> = {};
      if (isRecord(user['extra'])) for (const [k, v] of Object.entries(user['extra'])) extra[k] = strings(v);
      result = {
        authenticated: true,
        user: {
          username: user['username'],
          ...(typeof user['uid'] === 'string' ? { uid: user['uid'] } : {}),
          groups: strings(user['groups']),
          extra,
        },
      };
    } else {
      const reason = typeof status['error'] === 'string' ? status['error'] : 'token not authenticated';
      result = { authenticated: false, reason };
    }
    this.cache.set(key, result);
    return result;
  }
}

export class DelegatingAuthorizer {
  private readonly o: DelegationOptions;
  private readonly cache: TtlCache<AuthorizationDecision>;

  constructor(o: DelegationOptions) {
    this.o = o;
    this.cache = new TtlCache(
      o.clock,
      o.ttlMs ?? DEFAULT_CACHE_TTL_MS,
      o.maxEntries ?? DEFAULT_CACHE_ENTRIES,
    );
  }

  /** Throws DelegationError when the SubjectAccessReview cannot be made. */
  async authorize(user: UserInfo, path: string, verb: string): Promise<AuthorizationDecision> {
    const key = JSON.stringify([user.username, user.uid ?? '', user.groups, user.extra ?? {}, path, verb]);
    const cached = this.cache.get(key);
    if (cached !== undefined) return cached;
    const status = await review(this.o, '/apis/authorization.k8s.io/v1/subjectaccessreviews', {
      apiVersion: 'authorization.k8s.io/v1',
      kind: 'SubjectAccessReview',
      spec: {
        user: user.username,
        ...(user.uid !== undefined ? { uid: user.uid } : {}),
        groups: user.groups,
        extra: user.extra ?? {},
        nonResourceAttributes: { path, verb },
      },
    });
    const decision: AuthorizationDecision = {
      allowed: status['allowed'] === true && status['denied'] !== true,
      reason: typeof status['reason'] === 'string' ? status['reason'] : '',
    };
    this.cache.set(key, decision);
    return decision;
  }
}

/** The bearer token of an Authorization header, or undefined (RFC 6750: the scheme is case-insensitive). */
export function bearerToken(header: string | undefined): string | undefined {
  const m = /^bearer\s+(\S+)\s*$/i.exec(header ?? '');
  return m?.[1];
}
