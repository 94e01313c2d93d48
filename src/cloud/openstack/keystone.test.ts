import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import type { FetchInit, FetchLike, FetchResponse } from '../../platform/http-fetch.ts';
import { Keystone, authRequestBody, networkEndpoint } from './keystone.ts';
import { NeutronClient } from './neutron.ts';
import type { OpenStackConfig } from './config.ts';

function response(status: number, body: unknown, headers: Record<string, string> = {}): FetchResponse {
  const text = typeof body === 'string' ? body : JSON.stringify(body);
  return {
    ok: status >= 200 && status < 300,
    status,
    statusText: '',
    headers: { get: (n) => headers[n.toLowerCase()] ?? null },
    text: () => Promise.resolve(text),
  };
}

const CATALOG = [
  { type: 'compute', endpoints: [{ interface: 'public', region: 'R1', url: 'http://nova' }] },
  {
    type: 'network',
    endpoints: [
      { interface: 'public', region: 'R1', url: 'https://neutron.r1:9696/' },
      { interface: 'internal', region: 'R1', url: 'http://neutron.internal:9696/v2.0' },
      { interface: 'public', region: 'R2', url: 'https://neutron.r2:9696' },
    ],
  },
];

const CONFIG: Pick<OpenStackConfig, 'authUrl' | 'auth' | 'region' | 'endpointInterface'> = {
  authUrl: 'https://ks/v3',
  auth: { method: 'application_credential', id: 'ac', secret: 's' },
  region: 'R2',
  endpointInterface: 'public',
};

/** Keystone answering tokens of `lifeMs` by its own clock, which runs `skewMs` ahead of ours. */
function keystoneFetch(
  lifeMs: number,
  skewMs = 0,
): { fetch: FetchLike; posts: FetchInit[]; now: { t: number } } {
  const posts: FetchInit[] = [];
  const now = { t: 1_000_000 };
  let n = 0;
  const fetch: FetchLike = (url, init) => {
    assert.equal(url, 'https://ks/v3/auth/tokens');
    posts.push(init);
    const issued = now.t + skewMs;
    return Promise.resolve(
      response(
        201,
        {
          token: {
            issued_at: new Date(issued).toISOString(),
            expires_at: new Date(issued + lifeMs).toISOString(),
            catalog: CATALOG,
          },
        },
        { 'x-subject-token': `tok-${++n}` },
      ),
    );
  };
  return { fetch, posts, now };
}

const signal = new AbortController().signal;

describe('Keystone', () => {
  test('request bodies: password with user domain and project scope; application credential without scope', () => {
    assert.deepEqual(
      authRequestBody({
        method: 'password',
        user: { name: 'u', domainName: 'Default' },
        password: 'p',
        project: { name: 'k8s', domainId: 'default' },
      }),
      {
        auth: {
          identity: {
            methods: ['password'],
            password: { user: { name: 'u', domain: { name: 'Default' }, password: 'p' } },
          },
          scope: { project: { name: 'k8s', domain: { id: 'default' } } },
        },
      },
    );
    assert.deepEqual(
      authRequestBody({ method: 'application_credential', name: 'cred', secret: 's', user: { id: 'u1' } }),
      {
        auth: {
          identity: {
            methods: ['application_credential'],
            application_credential: { name: 'cred', secret: 's', user: { id: 'u1' } },
          },
        },
      },
    );
  });

  test('the network endpoint of the interface and region, with /v2.0', () => {
    assert.equal(networkEndpoint(CATALOG, 'public', 'R1'), 'https://neutron.r1:9696/v2.0');
    assert.equal(networkEndpoint(CATALOG, 'internal', undefined), 'http://neutron.internal:9696/v2.0');
    assert.equal(networkEndpoint(CATALOG, 'public', 'R2'), 'https://neutron.r2:9696/v2.0');
    assert.equal(networkEndpoint(CATALOG, 'admin', undefined), undefined);
  });

  test('one token for concurrent callers; renewed in the last quarter of its life, by its own lifetime despite clock skew', async () => {
    const k = keystoneFetch(3_600_000, 7_200_000); // Keystone's clock two hours ahead
    const ks = new Keystone({ config: CONFIG, fetch: k.fetch, now: () => k.now.t });
    const [a, b] = await Promise.all([ks.token(signal), ks.token(signal)]);
    assert.equal(a.id, 'tok-1');
    assert.equal(b.id, 'tok-1');
    assert.equal(a.networkUrl, 'https://neutron.r2:9696/v2.0');
    k.now.t += 3_600_000 - 5 * 60_000 - 1; // just before the renewal margin (min(5 min, life/4))
    assert.equal((await ks.token(signal)).id, 'tok-1');
    k.now.t += 2;
    assert.equal((await ks.token(signal)).id, 'tok-2');
    assert.equal(k.posts.length, 2);
  });

  test('Keystone down during an early renewal: the old token serves until it expires', async () => {
    const k = keystoneFetch(3_600_000);
    let down = false;
    const fetch: FetchLike = (url, init) =>
      down
        ? Promise.reject(
            new Error('fetch failed', {
              cause: Object.assign(new Error('refused'), { code: 'ECONNREFUSED' }),
            }),
          )
        : k.fetch(url, init);
    const ks = new Keystone({ config: CONFIG, fetch, now: () => k.now.t });
    assert.equal((await ks.token(signal)).id, 'tok-1');
    down = true;
    k.now.t += 3_600_000 - 60_000; // due for renewal, not expired
    assert.equal((await ks.token(signal)).id, 'tok-1');
    k.now.t += 60_000; // expired
    await assert.rejects(ks.token(signal), (e: { kind?: string }) => e.kind === 'retryable');
    down = false;
    assert.equal((await ks.token(signal)).id, 'tok-2');
  });

  test('no network endpoint: a permanent error naming region and interface', async () => {
    const k = keystoneFetch(3_600_000);
    const ks = new Keystone({ config: { ...CONFIG, region: 'R9' }, fetch: k.fetch });
    await assert.rejects(
      ks.token(signal),
      (e: { kind?: string; message: string }) =>
        e.kind === 'permanent' && /no public network endpoint in region R9/.test(e.message),
    );
  });

  test('Keystone refusing the credentials is permanent; its 503 retryable', async () => {
    for (const [status, kind] of [
      [401, 'permanent'],
      [503, 'retryable'],
      [429, 'throttled'],
    ] as const) {
      const ks = new Keystone({
        config: CONFIG,
        fetch: () =>
          Promise.resolve(
            response(status, { error: { code: status, title: 'Unauthorized', message: 'nope' } }),
          ),
      });
      await assert.rejects(
        ks.token(signal),
        (e: { kind?: string; message: string }) => e.kind === kind && e.message.includes(`HTTP ${status}`),
      );
    }
  });
});

describe('NeutronClient', () => {
  test('a 401 renews the token once and repeats the request; a second 401 is permanent', async () => {
    const k = keystoneFetch(3_600_000);
    const seen: string[] = [];
    let refuse = 1;
    const fetch: FetchLike = (url, init) => {
      if (url.endsWith('/auth/tokens')) return k.fetch(url, init);
      seen.push(`${init.method} ${url} ${init.headers?.['X-Auth-Token']}`);
      if (refuse-- > 0)
        return Promise.resolve(response(401, { error: { code: 401, title: 'Unauthorized', message: '' } }));
      return Promise.resolve(
        response(200, {
          router: {
            id: 'r',
            routes: [{ destination: '10.244.0.0/24', nexthop: '10.0.0.1' }],
            revision_number: 4,
          },
        }),
      );
    };
    const neutron = new NeutronClient(new Keystone({ config: CONFIG, fetch }), fetch);
    const router = await neutron.getRouter('r', signal);
    assert.deepEqual(router, {
      id: 'r',
      routes: [{ destination: '10.244.0.0/24', nexthop: '10.0.0.1' }],
      revision: 4,
    });
    assert.deepEqual(seen, [
      'GET https://neutron.r2:9696/v2.0/routers/r tok-1',
      'GET https://neutron.r2:9696/v2.0/routers/r tok-2',
    ]);
    refuse = 2;
    await assert.rejects(neutron.getRouter('r', signal), (e: { kind?: string }) => e.kind === 'permanent');
  });

  test('setRoutes sends If-Match with the revision; a 412 is a conflict', async () => {
    const k = keystoneFetch(3_600_000);
    let headers: Record<string, string> | undefined;
    const fetch: FetchLike = (url, init) => {
      if (url.endsWith('/auth/tokens')) return k.fetch(url, init);
      headers = init.headers as Record<string, string>;
      return Promise.resolve(
        response(412, {
          NeutronError: {
            type: 'RevisionNumberConstraintFailed',
            message: 'Constrained to 3, but current revision is 4',
            detail: '',
          },
        }),
      );
    };
    const neutron = new NeutronClient(new Keystone({ config: CONFIG, fetch }), fetch);
    await assert.rejects(
      neutron.setRoutes('r', [], 3, signal),
      (e: { kind?: string; message: string }) =>
        e.kind === 'conflict' && /RevisionNumberConstraintFailed/.test(e.message),
    );
    assert.equal(headers?.['If-Match'], 'revision_number=3');
  });

  test('a transport failure is retryable; an abort rejects as AbortError', async () => {
    const k = keystoneFetch(3_600_000);
    const fetch: FetchLike = (url, init) => {
      if (url.endsWith('/auth/tokens')) return k.fetch(url, init);
      return Promise.reject(
        new Error('fetch failed', {
          cause: Object.assign(new Error('connect ECONNREFUSED'), { code: 'ECONNREFUSED' }),
        }),
      );
    };
    const neutron = new NeutronClient(new Keystone({ config: CONFIG, fetch }), fetch);
    await assert.rejects(
      neutron.extensions(signal),
      (e: { kind?: string; message: string }) => e.kind === 'retryable' && /ECONNREFUSED/.test(e.message),
    );
    const aborted = new AbortController();
    aborted.abort();
    await assert.rejects(neutron.extensions(aborted.signal), (e: Error) => e.name === 'AbortError');
  });
});
