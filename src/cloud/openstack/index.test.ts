import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { OPENSTACK_WRITE_LIMIT, OpenStackConfigError, buildOpenStackProvider } from './index.ts';

const NODES = { get: () => undefined, list: () => [] };
const CONF =
  '[Global]\nauth-url=https://ks\napplication-credential-id=a\napplication-credential-secret=s\nca-file=/etc/os/ca.pem\n[Route]\nrouter-id=r1\n';

describe('buildOpenStackProvider', () => {
  test('declares its write limit and that routes map by node addresses; reads the CA file once', () => {
    const read: string[] = [];
    const p = buildOpenStackProvider(CONF, NODES, {
      env: {},
      readFile: (f) => {
        read.push(f);
        return '-----BEGIN CERTIFICATE-----\n';
      },
    });
    assert.equal(p.name, 'openstack');
    assert.deepEqual(p.writeLimit, OPENSTACK_WRITE_LIMIT);
    assert.deepEqual(p.routeTargetKeys, ['addresses']);
    assert.ok(p.routes() !== undefined);
    assert.deepEqual(read, ['/etc/os/ca.pem']);
  });

  test('an unreadable ca-file is a config error naming the key and the file', () => {
    assert.throws(
      () =>
        buildOpenStackProvider(CONF, NODES, {
          env: {},
          readFile: () => {
            throw new Error('ENOENT: no such file');
          },
        }),
      (e: unknown) =>
        e instanceof OpenStackConfigError &&
        /cannot read "ca-file" \/etc\/os\/ca.pem: ENOENT/.test(e.message),
    );
  });
});
