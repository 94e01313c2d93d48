import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { HcloudFake } from '../../../test/support/hcloud-fake.ts';
import type { NodeLister } from '../../core/types.ts';
import {
  buildHcloudProvider,
  DEFAULT_ENDPOINT,
  hcloudProviderFactory,
  parseHcloudConfig,
  readHcloudToken,
} from './index.ts';

const NO_NODES: NodeLister = { get: () => undefined, list: () => [] };

function rejectsConfig(text: string, re: RegExp, env: Record<string, string> = {}): void {
  assert.throws(
    () => parseHcloudConfig(text, env),
    (err: unknown) => {
      assert.equal((err as Error).name, 'HcloudConfigError');
      assert.match((err as Error).message, re);
      return true;
    },
  );
}

describe('hcloud cloud config', () => {
  it('reads YAML and JSON, IDs and names, with the default endpoint', () => {
    assert.deepEqual(parseHcloudConfig('network: 42\n', {}), { network: 42, endpoint: DEFAULT_ENDPOINT });
    assert.deepEqual(parseHcloudConfig('{"network": "k8s-net", "endpoint": "http://127.0.0.1:9/v1/"}', {}), {
      network: 'k8s-net',
      endpoint: 'http://127.0.0.1:9/v1',
    });
    assert.deepEqual(parseHcloudConfig('network: "42"', {}).network, 42);
  });

  it('falls back to HCLOUD_NETWORK and HCLOUD_ENDPOINT; the config text wins', () => {
    const env = { HCLOUD_NETWORK: '7', HCLOUD_ENDPOINT: 'https://example.test/v1' };
    assert.deepEqual(parseHcloudConfig('', env), { network: 7, endpoint: 'https://example.test/v1' });
    assert.deepEqual(parseHcloudConfig('network: mine\nendpoint: https://other.test/v1', env), {
      network: 'mine',
      endpoint: 'https://other.test/v1',
    });
  });

  it('names the field in validation errors', () => {
    rejectsConfig('', /field "network" is required/);
    rejectsConfig('endpoint: https://x.test', /field "network" is required/);
    rejectsConfig(
      'network: [1, 2]',
      /field "network" must be a network ID \(number\) or name \(string\), got a list/,
    );
    rejectsConfig('network: -3', /field "network" must be a positive integer/);
    rejectsConfig('network: ""', /field "network" must not be empty/);
    rejectsConfig('network: 1\nendpoint: ftp://x', /field "endpoint" must be an http\(s\) URL/);
    rejectsConfig('network: 1\nendpoint: not a url', /field "endpoint" "not a url" is not a valid URL/);
    rejectsConfig('network: 1\nendpoint: 5', /field "endpoint" must be a non-empty URL string/);
    rejectsConfig('network: 1\nnetwrok: 2', /unknown field "netwrok"/);
    rejectsConfig('network: 1\ntoken: abc', /field "token" is not supported.*HCLOUD_TOKEN/);
    rejectsConfig('- a\n- b', /must be a mapping/);
    rejectsConfig('network: [', /not valid YAML or JSON/);
    rejectsConfig('', /environment variable HCLOUD_ENDPOINT/, {
      HCLOUD_NETWORK: '1',
      HCLOUD_ENDPOINT: 'nope',
    });
    rejectsConfig('', /environment variable HCLOUD_NETWORK/, { HCLOUD_NETWORK: '0' });
  });

  it('requires HCLOUD_TOKEN without echoing anything secret', () => {
    assert.throws(() => buildHcloudProvider('network: 1', NO_NODES, { env: {} }), /HCLOUD_TOKEN is not set/);
    assert.throws(
      () => buildHcloudProvider('network: 1', NO_NODES, { env: { HCLOUD_TOKEN: '  \n' } }),
      /HCLOUD_TOKEN/,
    );
  });

  it('HCLOUD_TOKEN_FILE, as the hcloud CCM reads it: trimmed, never with HCLOUD_TOKEN (R122)', () => {
    const files: Record<string, string> = { '/run/secrets/hcloud-token': 'tok-from-file\n' };
    const read = (p: string): string => {
      const v = files[p];
      if (v === undefined) throw new Error(`ENOENT: ${p}`);
      return v;
    };
    assert.equal(readHcloudToken({ HCLOUD_TOKEN_FILE: '/run/secrets/hcloud-token' }, read), 'tok-from-file');
    assert.throws(
      () => readHcloudToken({ HCLOUD_TOKEN_FILE: '/run/secrets/hcloud-token', HCLOUD_TOKEN: 'x' }, read),
      /both HCLOUD_TOKEN and HCLOUD_TOKEN_FILE are set/,
    );
    assert.throws(
      () => readHcloudToken({ HCLOUD_TOKEN_FILE: '/nope' }, read),
      /HCLOUD_TOKEN_FILE \/nope: ENOENT/,
    );
    assert.throws(
      () => readHcloudToken({ HCLOUD_TOKEN_FILE: '/run/secrets/empty' }, () => '\n'),
      /HCLOUD_TOKEN is not set/,
    );
  });

  it('the factory builds a working provider named hcloud', async (t) => {
    const fake = await HcloudFake.start();
    t.after(() => fake.close());
    fake.addNetwork({
      id: 3,
      name: 'net',
      ipRange: '10.0.0.0/16',
      routes: [{ destination: '10.244.0.0/24', gateway: '10.0.0.2' }],
    });
    const provider = buildHcloudProvider(`network: net\nendpoint: ${fake.endpoint}`, NO_NODES, {
      env: { HCLOUD_TOKEN: `${fake.token}\n` },
    });
    assert.equal(provider.name, 'hcloud');
    const routes = provider.routes();
    assert.ok(routes);
    const listed = await routes.listRoutes('c', {
      signal: new AbortController().signal,
      reconcile: { id: 'r', scratch: new Map() },
    });
    assert.deepEqual(
      listed.map((r) => [r.destinationCIDR, r.targetNode, r.blackhole]),
      [['10.244.0.0/24', '', true]],
    );
    assert.equal(typeof hcloudProviderFactory, 'function');
  });
});
