import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { OpenStackConfigError, parseOpenStackConfig } from './config.ts';
import type { ConfigEnvironment } from './config.ts';

const PASSWORD = `[Global]
auth-url = https://keystone.example:5000
username = k8s
password = "s3cr;t"
user-domain-name = Default
tenant-id = 5e3a
region = RegionOne

[LoadBalancer]
subnet-id = ignored-by-us

[Route]
router-id = 7f1c
`;

const NO_FILES: ConfigEnvironment = { env: {}, exists: () => false, readFile: () => '' };

function rejects(text: string, message: RegExp, env: ConfigEnvironment = NO_FILES): void {
  assert.throws(
    () => parseOpenStackConfig(text, env),
    (err: unknown) => {
      assert.ok(err instanceof OpenStackConfigError, String(err));
      assert.match(err.message, /^openstack cloud config: /);
      assert.match(err.message, message);
      return true;
    },
  );
}

describe('parseOpenStackConfig', () => {
  test("cloud-provider-openstack's cloud.conf with a password: v3 URL, project scope, defaults", () => {
    assert.deepEqual(parseOpenStackConfig(PASSWORD, NO_FILES), {
      authUrl: 'https://keystone.example:5000/v3',
      auth: {
        method: 'password',
        user: { name: 'k8s', domainName: 'Default' },
        password: 's3cr;t',
        project: { id: '5e3a' },
      },
      region: 'RegionOne',
      endpointInterface: 'public',
      tlsInsecure: false,
      routerId: '7f1c',
    });
  });

  test('an application credential by ID needs no user or project; CA and endpoint type are read', () => {
    const c = parseOpenStackConfig(
      `[Global]\nauth-url=http://ks/v3/\napplication-credential-id=ac1\napplication-credential-secret=x\nca-file=/etc/ca.pem\nos-endpoint-type=internalURL\ntls-insecure=false\n[Route]\nrouter-id=r`,
      NO_FILES,
    );
    assert.deepEqual(c.auth, { method: 'application_credential', id: 'ac1', secret: 'x' });
    assert.equal(c.authUrl, 'http://ks/v3');
    assert.equal(c.caFile, '/etc/ca.pem');
    assert.equal(c.endpointInterface, 'internal');
  });

  test('project-name with domain-name scopes user and project; project-* spell tenant-*', () => {
    const c = parseOpenStackConfig(
      `[Global]\nauth-url=http://ks\nuser-id=u1\npassword=p\nproject-name=k8s\ndomain-name=Default\n[Route]\nrouter-id=r`,
      NO_FILES,
    );
    assert.deepEqual(c.auth, {
      method: 'password',
      user: { id: 'u1', domainName: 'Default' },
      password: 'p',
      project: { name: 'k8s', domainName: 'Default' },
    });
  });

  test('use-clouds: clouds.yaml fills what cloud.conf leaves empty; cloud.conf wins', () => {
    const files: Record<string, string> = {
      '/conf/clouds.yaml': `clouds:
  other: {auth: {auth_url: http://wrong}}
  prod:
    auth:
      auth_url: https://keystone.prod:5000/v3
      username: from-yaml
      password: yaml-pass
      project_id: p-yaml
      user_domain_name: Default
    region_name: RegionTwo
    interface: internal
    cacert: /conf/ca.pem
    verify: false
`,
    };
    const c = parseOpenStackConfig(
      `[Global]\nuse-clouds = true\nclouds-file = /conf/clouds.yaml\ncloud = prod\nusername = from-conf\n[Route]\nrouter-id = r`,
      { env: {}, exists: (f) => f in files, readFile: (f) => files[f]! },
    );
    assert.equal(c.authUrl, 'https://keystone.prod:5000/v3');
    assert.deepEqual(c.auth, {
      method: 'password',
      user: { name: 'from-conf', domainName: 'Default' },
      password: 'yaml-pass',
      project: { id: 'p-yaml' },
    });
    assert.equal(c.region, 'RegionTwo');
    assert.equal(c.endpointInterface, 'internal');
    assert.equal(c.caFile, '/conf/ca.pem');
    assert.equal(c.tlsInsecure, true);
  });

  test('use-clouds finds the file by OS_CLIENT_CONFIG_FILE and the cloud by OS_CLOUD', () => {
    const yaml =
      'clouds:\n  a: {auth: {auth_url: http://a, application_credential_id: i, application_credential_secret: s}}\n  b: {auth: {auth_url: http://b, application_credential_id: i, application_credential_secret: s}}\n';
    const c = parseOpenStackConfig('[Global]\nuse-clouds=true\n[Route]\nrouter-id=r', {
      env: { OS_CLIENT_CONFIG_FILE: '/x.yaml', OS_CLOUD: 'b' },
      exists: () => true,
      readFile: () => yaml,
    });
    assert.equal(c.authUrl, 'http://b/v3');
  });

  for (const [name, text, message] of [
    ['no router', '[Global]\nauth-url=http://k\n', /\[Route\] "router-id" is required/],
    [
      'no auth-url',
      '[Global]\napplication-credential-id=a\napplication-credential-secret=s\n[Route]\nrouter-id=r',
      /"auth-url" is required/,
    ],
    [
      'no credentials',
      '[Global]\nauth-url=http://k\n[Route]\nrouter-id=r',
      /no credentials: set "username" and "password"/,
    ],
    [
      'no password',
      '[Global]\nauth-url=http://k\nusername=u\n[Route]\nrouter-id=r',
      /"password" is required/,
    ],
    [
      'no user domain',
      '[Global]\nauth-url=http://k\nusername=u\npassword=p\ntenant-id=t\n[Route]\nrouter-id=r',
      /needs the user's domain/,
    ],
    [
      'no project',
      '[Global]\nauth-url=http://k\nuser-id=u\npassword=p\n[Route]\nrouter-id=r',
      /a project is required/,
    ],
    [
      'secret without id',
      '[Global]\nauth-url=http://k\napplication-credential-secret=s\n[Route]\nrouter-id=r',
      /needs "application-credential-id"/,
    ],
    [
      'id without secret',
      '[Global]\nauth-url=http://k\napplication-credential-id=i\n[Route]\nrouter-id=r',
      /"application-credential-secret" is required/,
    ],
    [
      'a typo',
      '[Global]\nauth-ulr=http://k\n[Route]\nrouter-id=r',
      /line 2: unknown key "auth-ulr" in \[Global\]/,
    ],
    [
      'trusts',
      '[Global]\nauth-url=http://k\ntrust-id=t\n[Route]\nrouter-id=r',
      /"trust-id" is not supported/,
    ],
    [
      'keystone v2',
      '[Global]\nauth-url=http://k/v2.0\napplication-credential-id=a\napplication-credential-secret=s\n[Route]\nrouter-id=r',
      /Keystone v2.0/,
    ],
    [
      'bad bool',
      '[Global]\ntls-insecure=maybe\n[Route]\nrouter-id=r',
      /"tls-insecure" must be true or false/,
    ],
    ['bad syntax', '[Global\n', /not valid gcfg/],
    ['clouds without a file', '[Global]\nuse-clouds=true\n[Route]\nrouter-id=r', /no clouds.yaml was found/],
  ] as const) {
    test(`rejects: ${name}`, () => rejects(text, message));
  }

  test('a credential never appears in an error message', () => {
    rejects(
      '[Global]\nauth-url=http://k\nusername=u\npassword=hunter2\ntenant-id=t\n[Route]\nrouter-id=r',
      /^(?!.*hunter2)/s,
    );
  });
});
