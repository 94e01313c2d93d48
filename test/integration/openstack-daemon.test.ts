// `cloud-route-controller run --cloud-provider=openstack --cloud-config=cloud.conf` (the real
// executable) on a real kube-apiserver against the real neutron-server and the real Keystone
// (test/support/openstack.ts, test/support/keystone.ts: Keystone issues the daemon's tokens and
// validates each Neutron request's), as a normal user bound to deploy/base/rbac.yaml: periodic
// mode on a Neutron with `extraroute` only (the If-Match read-modify-write), watch mode on one
// with `extraroute-atomic`. The bad-config cases use the stand-in (no request may reach it).
// Run: scripts/neutron.sh && scripts/keystone.sh && npm run testenv:build &&
// node --test test/integration/openstack-daemon.test.ts
import assert from 'node:assert/strict';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { after, before, describe, test } from 'node:test';
import { CREDENTIALS, globalSection, OpenStack, neutronSkip } from '../support/openstack.ts';
import { keystoneSkip } from '../support/keystone.ts';
import type { KeystoneAccount } from '../support/keystone.ts';
import { testenvBinaries } from '../support/controlplane.ts';
import {
  assertConfigsRefused,
  daemonArgs,
  DaemonRun,
  networkCondition,
  startClusterWithUser,
  type ClusterWithUser,
  deleteNodeRoute,
  untilRoutes,
} from '../support/daemon-run.ts';
import { waitFor } from './kube-helpers.ts';
import type { NodeAddress } from '../../src/core/types.ts';

const enabled = testenvBinaries() !== undefined;

/** cloud.conf as openstack-cloud-controller-manager reads it, pointed at Keystone or the stand-in. */
function cloudConf(authUrl: string, routerId: string | undefined, c: KeystoneAccount = CREDENTIALS): string {
  return [
    globalSection(authUrl, c),
    '[LoadBalancer]',
    'use-octavia = true',
    '',
    ...(routerId !== undefined ? ['[Route]', `router-id = ${routerId}`] : []),
    '',
  ].join('\n');
}

function addresses(...ips: string[]): NodeAddress[] {
  return [...ips.map((address) => ({ type: 'InternalIP', address })), { type: 'Hostname', address: 'h' }];
}

describe(
  'the openstack executable on a real apiserver and Neutron',
  { ...neutronSkip(), timeout: 400_000 },
  () => {
    let cluster: ClusterWithUser | undefined;
    let dir = '';

    before(async () => {
      dir = fs.mkdtempSync(path.join(os.tmpdir(), 'routectl-openstack-'));
      if (!enabled) return;
      cluster = await startClusterWithUser();
    });

    after(async () => {
      await cluster?.cp.stop();
      fs.rmSync(dir, { recursive: true, force: true });
    });

    test('bad cloud.conf: exit 1, one clear error line, no call to Keystone or Neutron', async () => {
      const cloud = await OpenStack.start();
      try {
        await assertConfigsRefused(
          'openstack',
          dir,
          [
            [
              'no-router.conf',
              cloudConf(cloud.authUrl, undefined),
              /^error: cloud provider could not be initialized: openstack cloud config: \[Route\] "router-id" is required/,
            ],
            [
              'no-password.conf',
              cloudConf(cloud.authUrl, 'r').replace(/^password = .*$/m, ''),
              /^error: cloud provider could not be initialized: openstack cloud config: "password" is required/,
            ],
            [
              'missing-ca.conf',
              cloudConf(cloud.authUrl, 'r').replace('region = RegionOne', 'ca-file = /nonexistent/ca.pem'),
              /^error: cloud provider could not be initialized: openstack cloud config: cannot read "ca-file" \/nonexistent\/ca.pem/,
            ],
          ],
          (stderr) =>
            assert.doesNotMatch(
              stderr,
              new RegExp(CREDENTIALS.password.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')),
            ),
        );
        assert.deepEqual(cloud.requests, [], 'no request reached Keystone or Neutron');
      } finally {
        await cloud.stop();
      }
    });

    for (const watch of [false, true]) {
      const mode = watch ? 'watch' : 'periodic';
      // The real Keystone issues and validates the daemon's tokens.
      describe(`${mode} mode (${watch ? 'extraroute-atomic' : 'extraroute only'})`, keystoneSkip(), () => {
        const run = new DaemonRun(() => cluster);
        let cloud: OpenStack;
        let routerId = '';
        let networkId = '';
        let node1Port = '';
        const routes = (): Promise<string[]> => cloud.routeList(routerId);
        const until = (what: string, cond: (r: string[]) => boolean): Promise<void> =>
          untilRoutes(what, routes, cond);

        before(async () => {
          cloud = await OpenStack.start({ noAtomic: !watch, keystone: true });
          ({ routerId, networkId } = await cloud.topology());
          // Another user's route on the same router, outside the cluster CIDRs.
          await cloud.setRoutes(routerId, [{ destination: '192.168.50.0/24', nexthop: '10.0.0.250' }]);
          if (!enabled) return;
          const config = path.join(dir, `${mode}.conf`);
          fs.writeFileSync(config, cloudConf(cloud.identityUrl, routerId, cloud.account));
          run.start(
            daemonArgs({
              provider: 'openstack',
              config,
              kubeconfig: cluster!.kubeconfig,
              watch,
              extra: ['-v=10'],
            }),
            path.join(dir, `${mode}.log`),
          );
        });

        after(async () => {
          await run.stop();
          if (run.daemon) {
            // -v=10: every line the daemon wrote, and no credential or token in any of them.
            const output = run.daemon.output();
            assert.ok(output.length > 0);
            for (const secret of [
              CREDENTIALS.password,
              cloud.account!.appCredentialSecret,
              ...cloud.issuedTokens(),
            ]) {
              assert.ok(!output.includes(secret), `a credential reached the log: ${secret.slice(0, 8)}…`);
            }
          }
          if (enabled)
            for (const n of ['node1', 'ds', 'node3']) await cluster?.admin.deleteNode(n).catch(() => {});
          await cloud?.stop();
        });

        test('nodes → extra routes → NetworkUnavailable=False; dual stack; the port allows the pod CIDR', async (t) => {
          await run.step(t, async ({ admin }) => {
            const port = (node1Port = await cloud.port(networkId, ['10.0.0.11']));
            await admin.createNode('node1', ['10.244.1.0/24'], addresses('10.0.0.11'));
            await admin.createNode(
              'ds',
              ['10.244.2.0/24', 'fd00:10:244:2::/64'],
              addresses('10.0.0.12', 'fd00::12'),
            );
            const expected = [
              '10.244.1.0/24=10.0.0.11',
              '10.244.2.0/24=10.0.0.12',
              '192.168.50.0/24=10.0.0.250',
              'fd00:10:244:2::/64=fd00::12',
            ];
            await until('three routes', (r) => r.join() === expected.join());
            for (const n of ['node1', 'ds']) await networkCondition(admin, n);
            assert.deepEqual(await cloud.pairs(port), ['10.244.1.0/24']);
            const writes = cloud.neutronRequests('PUT', `/routers/${routerId}`);
            if (watch)
              assert.ok(
                writes.every((w) => w.path.endsWith('_extraroutes')),
                'atomic calls only',
              );
            else
              assert.ok(
                writes.every((w) => /^revision_number=\d+$/.test(w.ifMatch ?? '')),
                'every PUT carries If-Match',
              );
            assert.ok(
              cloud.neutronRequests().every((r) => r.status !== 401),
              'every Neutron call carried a token Keystone issued',
            );
          });
        });

        test('deleting node1 removes its route and its address pair; the foreign route stays', async (t) => {
          await run.step(t, async ({ admin }) => {
            await deleteNodeRoute(admin, 'node1', routes, '10.244.1.0/24=10.0.0.11', [
              '10.244.2.0/24=10.0.0.12',
              '192.168.50.0/24=10.0.0.250',
              'fd00:10:244:2::/64=fd00::12',
            ]);
            // The pair goes right after the route, in the same batch.
            await waitFor(
              'the pod CIDR left the port',
              30_000,
              async () => (await cloud.pairs(node1Port)).length === 0,
              200,
            );
          });
        });

        test('a route in the cluster CIDRs to a next hop no node has is deleted; the token is renewed after a revocation', async (t) => {
          await run.step(t, async ({ admin }) => {
            await cloud.revokeTokens();
            await cloud.setRoutes(routerId, [
              ...(await cloud.routes(routerId)),
              { destination: '10.244.77.0/24', nexthop: '10.0.0.77' },
            ]);
            // A node event makes watch mode reconcile now (it lists, since the change is new to it).
            await admin.createNode('node3', ['10.244.3.0/24'], addresses('10.0.0.13'));
            await until('node3 route', (r) => r.includes('10.244.3.0/24=10.0.0.13'));
            await networkCondition(admin, 'node3');
            if (!watch) await until('stale route gone', (r) => !r.some((x) => x.startsWith('10.244.77.')));
            assert.ok((await routes()).includes('192.168.50.0/24=10.0.0.250'));
            assert.ok(
              cloud.requests.some((r) => r.status === 401),
              'the revoked token was refused once',
            );
            assert.ok(cloud.tokensIssued >= 2, 'and a new one issued');
          });
        });

        if (!watch) {
          test('another writer between the read and the PUT: 412, re-read, no route lost', async (t) => {
            await run.step(t, async ({ admin }) => {
              cloud.faults.push({
                method: 'PUT',
                path: `/routers/${routerId}`,
                before: async () => {
                  const current = await cloud.routes(routerId);
                  await cloud.setRoutes(routerId, [
                    ...current,
                    { destination: '172.16.0.0/16', nexthop: '10.0.0.250' },
                  ]);
                },
              });
              await admin.deleteNode('node3');
              await until('node3 route gone', (r) => !r.includes('10.244.3.0/24=10.0.0.13'));
              assert.ok(
                (await routes()).includes('172.16.0.0/16=10.0.0.250'),
                "the other writer's route survived",
              );
              const statuses = cloud.neutronRequests('PUT', `/routers/${routerId}`).map((r) => r.status);
              const at = statuses.indexOf(412);
              assert.ok(
                at >= 0 && statuses.slice(at + 1).includes(200),
                `PUT statuses ${statuses.join(',')}`,
              );
            });
          });
        }
      });
    }
  },
);
