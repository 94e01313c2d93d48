import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { VirtualClock } from '../core/clock.ts';
import { MemoryLogger } from '../core/ports.ts';
import {
  bearerToken,
  DelegatingAuthenticator,
  DelegatingAuthorizer,
  TtlCache,
  type ReviewTransport,
} from './delegated-auth.ts';
import type { Handler } from './http-server.ts';
import { pathAllowed, secureHandler } from './secure-handler.ts';

/** An apiserver double for the two review APIs: tokens map to users, users to allowed paths. */
function fakeApiserver(o: {
  tokens: Record<string, string>;
  allowed: Record<string, string[]>;
  down?: () => boolean;
}) {
  const calls: { path: string; body: Record<string, unknown> }[] = [];
  const transport: ReviewTransport = (path, body) => {
    const b = body as Record<string, unknown>;
    calls.push({ path, body: b });
    if (o.down?.() === true) return Promise.reject(new Error('connect ECONNREFUSED'));
    const spec = b['spec'] as Record<string, unknown>;
    if (path.endsWith('/tokenreviews')) {
      const user = o.tokens[spec['token'] as string];
      return Promise.resolve({
        status:
          user === undefined
            ? { authenticated: false, error: 'invalid bearer token' }
            : {
                authenticated: true,
                user: { username: user, uid: `uid-${user}`, groups: ['system:authenticated'] },
              },
      });
    }
    const attrs = spec['nonResourceAttributes'] as { path: string; verb: string };
    const ok = (o.allowed[spec['user'] as string] ?? []).includes(`${attrs.verb} ${attrs.path}`);
    return Promise.resolve({ status: { allowed: ok, ...(ok ? {} : { reason: 'no RBAC policy matched' }) } });
  };
  return { transport, calls };
}

describe('delegated authentication and authorization', () => {
  test('reviews are cached for the TTL, allowed and denied alike, and asked again after it', async () => {
    const clock = new VirtualClock();
    const api = fakeApiserver({ tokens: { good: 'scraper' }, allowed: { scraper: ['get /metrics'] } });
    const authn = new DelegatingAuthenticator({ transport: api.transport, clock, ttlMs: 10_000 });
    const authz = new DelegatingAuthorizer({ transport: api.transport, clock, ttlMs: 10_000 });
    const ok = await authn.authenticate('good');
    assert.ok(ok.authenticated);
    assert.equal(ok.user.username, 'scraper');
    assert.deepEqual(await authn.authenticate('bad'), {
      authenticated: false,
      reason: 'invalid bearer token',
    });
    await authn.authenticate('good');
    await authn.authenticate('bad');
    assert.equal(api.calls.length, 2, 'second lookups come from the cache');
    assert.equal((await authz.authorize(ok.user, '/metrics', 'get')).allowed, true);
    assert.equal((await authz.authorize(ok.user, '/debug', 'get')).allowed, false);
    await authz.authorize(ok.user, '/metrics', 'get');
    await authz.authorize(ok.user, '/debug', 'get');
    assert.equal(api.calls.length, 4);
    const sar = api.calls[2]!.body;
    assert.deepEqual(sar['spec'], {
      user: 'scraper',
      uid: 'uid-scraper',
      groups: ['system:authenticated'],
      extra: {},
      nonResourceAttributes: { path: '/metrics', verb: 'get' },
    });
    await clock.advance(10_000);
    await authn.authenticate('good');
    await authz.authorize(ok.user, '/metrics', 'get');
    assert.equal(api.calls.length, 6, 'expired entries are reviewed again');
  });

  test('a failed review is not cached', async () => {
    const clock = new VirtualClock();
    let down = true;
    const api = fakeApiserver({ tokens: { good: 'scraper' }, allowed: {}, down: () => down });
    const authn = new DelegatingAuthenticator({ transport: api.transport, clock });
    await assert.rejects(authn.authenticate('good'), { kind: 'delegation', message: /ECONNREFUSED/ });
    down = false;
    assert.ok((await authn.authenticate('good')).authenticated);
    assert.equal(api.calls.length, 2);
  });

  test('the token cache holds no token and is bounded', async () => {
    const clock = new VirtualClock();
    const cache = new TtlCache<number>(clock, 1000, 3);
    for (let i = 0; i < 5; i++) cache.set(`k${i}`, i);
    assert.equal(cache.size, 3);
    assert.equal(cache.get('k0'), undefined);
    assert.equal(cache.get('k4'), 4);
    const api = fakeApiserver({ tokens: { 'secret-token-value': 'u' }, allowed: {} });
    const authn = new DelegatingAuthenticator({ transport: api.transport, clock });
    await authn.authenticate('secret-token-value');
    const internals = JSON.stringify(
      Object.entries(authn).map(([, v]) => [
        ...((v as { entries?: Map<string, unknown> }).entries?.keys() ?? []),
      ]),
    );
    assert.doesNotMatch(internals, /secret-token-value/);
  });

  test('bearer tokens are read like RFC 6750', () => {
    assert.equal(bearerToken('Bearer abc.def'), 'abc.def');
    assert.equal(bearerToken('bearer   abc'), 'abc');
    assert.equal(bearerToken('Basic Zm9vOmJhcg=='), undefined);
    assert.equal(bearerToken('Bearer'), undefined);
    assert.equal(bearerToken(undefined), undefined);
  });

  test('always-allowed paths: exact, or a /* prefix', () => {
    const p = ['/healthz', '/readyz', '/debug/*'];
    assert.ok(pathAllowed(p, '/healthz'));
    assert.ok(pathAllowed(p, '/debug/pprof'));
    assert.equal(pathAllowed(p, '/healthz/extra'), false);
    assert.equal(pathAllowed(p, '/metrics'), false);
  });
});

describe('secure handler', () => {
  const serve: Handler = (url) => Promise.resolve({ status: 200, body: `served ${url.pathname}` });
  function setup(down = false) {
    const clock = new VirtualClock();
    const api = fakeApiserver({
      tokens: { scrape: 'system:serviceaccount:monitoring:prometheus', norbac: 'nobody' },
      allowed: { 'system:serviceaccount:monitoring:prometheus': ['get /metrics'] },
      down: () => down,
    });
    const handler = secureHandler({
      alwaysAllowPaths: ['/healthz', '/readyz', '/livez'],
      health: serve,
      metrics: serve,
      authenticator: new DelegatingAuthenticator({ transport: api.transport, clock }),
      authorizer: new DelegatingAuthorizer({ transport: api.transport, clock }),
      logger: new MemoryLogger(),
    });
    const call = (path: string, authorization?: string) =>
      handler(new URL(path, 'https://localhost'), {
        method: 'GET',
        headers: authorization === undefined ? {} : { authorization },
      });
    return { api, call };
  }

  test('probes are open; /metrics needs an authenticated and authorized token', async () => {
    const { api, call } = setup();
    for (const p of ['/healthz', '/readyz', '/livez']) assert.equal((await call(p)).status, 200, p);
    assert.equal(api.calls.length, 0, 'always-allowed paths make no review');
    const anon = await call('/metrics');
    assert.equal(anon.status, 401);
    assert.match(anon.headers?.['www-authenticate'] ?? '', /^Bearer /);
    assert.equal((await call('/metrics', 'Bearer wrong')).status, 401);
    const denied = await call('/metrics', 'Bearer norbac');
    assert.equal(denied.status, 403);
    assert.match(denied.body, /^forbidden: User "nobody" cannot get path "\/metrics"/);
    const ok = await call('/metrics', 'Bearer scrape');
    assert.deepEqual([ok.status, ok.body], [200, 'served /metrics']);
    assert.equal((await call('/other', 'Bearer scrape')).status, 403, 'authorization is per path');
  });

  test('an unreachable apiserver: 401 for authentication, and the body names no token', async () => {
    const { call } = setup(true);
    const r = await call('/metrics', 'Bearer scrape');
    assert.equal(r.status, 401);
    assert.doesNotMatch(r.body, /scrape/);
  });
});
