// The openstack plug-in authenticating with the real Keystone (PyPI `keystone`,
// testenv/keystone/serve.py, SQLite, fernet tokens) in front of the real neutron-server: the
// project, user, member role, application credential and network endpoints are made through
// Keystone's API, each Neutron request's token is validated with Keystone as keystonemiddleware
// does, and a token revoked in Keystone is refused and replaced. The stand-in
// (test/support/openstack.ts) still serves the fault-injection tests. Run: scripts/neutron.sh &&
// scripts/keystone.sh && node --test test/integration/openstack-keystone.test.ts
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { errorKind } from '../../src/core/errors.ts';
import type { Node } from '../../src/core/types.ts';
import { buildOpenStackProvider } from '../../src/cloud/openstack/index.ts';
import type { OpenStackRoutes } from '../../src/cloud/openstack/routes.ts';
import type { KeystoneAccount } from '../support/keystone.ts';
import { keystoneSkip } from '../support/keystone.ts';
import { OpenStack, neutronSkip } from '../support/openstack.ts';
import { callOptions, nodeLister, nodeRoute } from '../support/provider-calls.ts';

const NODES: Node[] = [1, 2, 3].map((i) => ({
  metadata: { name: `n${i}`, uid: `uid-n${i}` },
  spec: { podCIDRs: [`10.244.${i}.0/24`] },
  status: { addresses: [{ type: 'InternalIP', address: `10.0.0.${10 + i}` }] },
}));
const lister = nodeLister(NODES);

function cloudConf(
  authUrl: string,
  a: KeystoneAccount,
  auth: 'password' | 'appcred',
  routerId: string,
): string {
  const credentials =
    auth === 'password'
      ? `username = ${a.username}\npassword = "${a.password.replace(/["\\]/g, (m) => `\\${m}`)}"\nuser-domain-name = ${a.domain}\ntenant-id = ${a.projectId}`
      : `application-credential-id = ${a.appCredentialId}\napplication-credential-secret = ${a.appCredentialSecret}`;
  return `[Global]\nauth-url = ${authUrl}\n${credentials}\nregion = RegionOne\n\n[Route]\nrouter-id = ${routerId}\n`;
}

describe(
  'openstack plug-in with the real Keystone',
  { ...neutronSkip(), ...keystoneSkip(), timeout: 300_000 },
  () => {
    let os: OpenStack;
    let routerId = '';
    let account: KeystoneAccount;
    const routesWith = (auth: 'password' | 'appcred', a: KeystoneAccount = account): OpenStackRoutes =>
      buildOpenStackProvider(
        cloudConf(os.identityUrl, a, auth, routerId),
        lister,
      ).routes() as OpenStackRoutes;

    before(async () => {
      os = await OpenStack.start({ keystone: true });
      account = os.account!;
      let networkId = '';
      ({ routerId, networkId } = await os.topology());
      for (const n of NODES) await os.port(networkId, [n.status!.addresses![0]!.address]);
    });
    after(async () => {
      await os?.stop();
    });

    for (const [auth, i] of [
      ['password', 0],
      ['appcred', 1],
    ] as const) {
      test(`${auth}: a token from Keystone, validated by Keystone on every Neutron request`, async () => {
        const before = os.neutronRequests().length;
        const routes = routesWith(auth);
        const results = await routes.applyRoutes(
          'it',
          { deletes: [], creates: [nodeRoute(NODES[i]!)] },
          callOptions(),
        );
        assert.deepEqual(
          results.map((r) => (r.ok ? 'ok' : String(r.error))),
          ['ok'],
        );
        const listed = await routes.listRoutes('it', callOptions());
        assert.ok(
          listed.some((r) => r.targetNode === NODES[i]!.metadata!.name),
          JSON.stringify(listed),
        );
        const mine = os.neutronRequests().slice(before);
        assert.ok(mine.length >= 3, JSON.stringify(mine));
        assert.deepEqual([...new Set(mine.map((r) => r.status))], [200], JSON.stringify(mine));
        const tokens = [...new Set(mine.map((r) => r.token))];
        assert.equal(tokens.length, 1, 'one token for the whole run');
        assert.ok(await os.keystone!.validate(tokens[0]!), 'Keystone knows the token');
      });
    }

    test('a token revoked in Keystone is refused (401) and replaced by a new one; the write goes through', async () => {
      const routes = routesWith('appcred');
      await routes.listRoutes('it', callOptions());
      const old = os.neutronRequests().at(-1)!.token!;
      await os.keystone!.revoke(old);
      assert.equal(await os.keystone!.validate(old), false);
      const before = os.neutronRequests().length;
      const results = await routes.applyRoutes(
        'it',
        { deletes: [], creates: [nodeRoute(NODES[2]!)] },
        callOptions(),
      );
      assert.deepEqual(
        results.map((r) => (r.ok ? 'ok' : String(r.error))),
        ['ok'],
      );
      const after = os.neutronRequests().slice(before);
      assert.deepEqual(
        after.slice(0, 2).map((r) => `${r.status} ${r.token === old ? 'old' : 'new'}`),
        ['401 old', '200 new'],
      );
      assert.ok(
        after.slice(1).every((r) => r.token !== old && r.status === 200),
        JSON.stringify(after),
      );
      assert.ok((await os.routeList(routerId)).includes('10.244.3.0/24=10.0.0.13'));
    });

    test('a wrong password or application credential secret: Keystone refuses, permanent, no Neutron request', async () => {
      const before = os.neutronRequests().length;
      for (const [auth, a] of [
        ['password', { ...account, password: 'not-the-password' }],
        ['appcred', { ...account, appCredentialSecret: 'not-the-secret' }],
      ] as const) {
        await assert.rejects(
          routesWith(auth, a).listRoutes('it', callOptions()),
          (err: Error) => errorKind(err) === 'permanent' && /401/.test(err.message),
          auth,
        );
      }
      assert.equal(os.neutronRequests().length, before);
    });
  },
);
