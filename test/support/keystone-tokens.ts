// The Keystone v3 stand-in's token issuance (test/support/openstack.ts): the checks of
// POST /v3/auth/tokens for the test's credentials (password scoped to the project, or an
// application credential, which may not ask for a scope), and the token body with the
// catalog the openstack plug-in reads (identity and network endpoints of the region).
import { CREDENTIALS } from './openstack-conf.ts';

export interface KeystoneAnswer {
  readonly status: number;
  readonly body: unknown;
  readonly headers?: Record<string, string>;
}

const unauthorized = (message = 'The request you have made requires authentication.'): KeystoneAnswer => ({
  status: 401,
  body: { error: { code: 401, title: 'Unauthorized', message } },
});

interface AuthRequest {
  identity?: {
    methods?: string[];
    password?: { user?: Record<string, unknown> };
    application_credential?: Record<string, unknown>;
  };
  scope?: { project?: { id?: string } };
}

/** The request's auth methods when its credentials are the test's, else Keystone's answer. */
export function checkAuthRequest(body: string): { methods: string[] } | KeystoneAnswer {
  let auth: AuthRequest;
  try {
    auth = (JSON.parse(body) as { auth: AuthRequest }).auth;
  } catch {
    return { status: 400, body: { error: { code: 400, title: 'Bad Request', message: 'not JSON' } } };
  }
  const c = CREDENTIALS;
  const methods = auth?.identity?.methods ?? [];
  if (methods[0] === 'password') {
    const u = auth.identity?.password?.user ?? {};
    const domain = (u['domain'] as { name?: string } | undefined)?.name;
    if (u['name'] !== c.username || domain !== c.domain || u['password'] !== c.password)
      return unauthorized();
    if (auth.scope?.project?.id !== c.projectId) return unauthorized();
  } else if (methods[0] === 'application_credential') {
    const a = auth.identity?.application_credential ?? {};
    if (a['id'] !== c.appCredentialId || a['secret'] !== c.appCredentialSecret) return unauthorized();
    if (auth.scope !== undefined) return unauthorized('application credentials cannot request a scope');
  } else {
    return unauthorized();
  }
  return { methods };
}

export interface TokenFacts {
  readonly id: string;
  readonly methods: string[];
  readonly issuedAt: number;
  readonly lifetimeMs: number;
  readonly region: string;
  readonly identityUrl: string;
  readonly networkUrl: string;
}

/** 201 with the token in X-Subject-Token and its body, catalog included. */
export function tokenAnswer(t: TokenFacts): KeystoneAnswer {
  const c = CREDENTIALS;
  const endpoint = (i: string, url: string) => ({ interface: i, region: t.region, region_id: t.region, url });
  return {
    status: 201,
    headers: { 'X-Subject-Token': t.id },
    body: {
      token: {
        methods: t.methods,
        issued_at: new Date(t.issuedAt).toISOString(),
        expires_at: new Date(t.issuedAt + t.lifetimeMs).toISOString(),
        project: { id: c.projectId, name: 'k8s', domain: { id: 'default', name: c.domain } },
        catalog: [
          { type: 'identity', name: 'keystone', endpoints: [endpoint('public', t.identityUrl)] },
          {
            type: 'network',
            name: 'neutron',
            endpoints: ['public', 'internal'].map((i) => endpoint(i, t.networkUrl)),
          },
        ],
      },
    },
  };
}
