// R115–R119 end to end: the real executable (watch mode) on a real kube-apiserver against the
// real neutron-server whose router allows 3 routes (quota_router_route, formerly max_routes), one
// of them another user's. Two nodes fill it; the third node's route is refused by Neutron: its
// Event names the router's limit and how to raise it, the gauges show 2 + 1 of 3, `plan` prints
// the room, and neither live node loses its route.
// Run: scripts/neutron.sh && npm run testenv:build && node --test test/integration/openstack-room.test.ts
import assert from 'node:assert/strict';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { after, before, describe, test } from 'node:test';
import { metricValue, runToExit } from '../e2e/support.ts';
import { globalSection, OpenStack, neutronSkip } from '../support/openstack.ts';
import { testenvBinaries } from '../support/controlplane.ts';
import { DaemonRun, startClusterWithUser, WATCH_GATE, type ClusterWithUser } from '../support/daemon-run.ts';
import { waitFor } from './kube-helpers.ts';

const MAX_ROUTES = 3;
const enabled = testenvBinaries() !== undefined;

function cloudConf(authUrl: string, routerId: string): string {
  return [
    globalSection(authUrl),
    '[Route]',
    `router-id = ${routerId}`,
    `max-routes = ${MAX_ROUTES}`,
    '',
  ].join('\n');
}

describe(
  'the route table room on Neutron with a low route limit',
  { ...neutronSkip(), timeout: 300_000 },
  () => {
    let cluster: ClusterWithUser | undefined;
    let dir = '';
    let cloud: OpenStack | undefined;
    const run = new DaemonRun(() => cluster);
    let routerId = '';
    let config = '';

    before(async () => {
      dir = fs.mkdtempSync(path.join(os.tmpdir(), 'routectl-openstack-room-'));
      if (!enabled) return;
      cluster = await startClusterWithUser();
      cloud = await OpenStack.start({ maxRoutes: MAX_ROUTES });
      ({ routerId } = await cloud.topology());
      // Another user's route on the same router holds one of the three places.
      await cloud.setRoutes(routerId, [{ destination: '192.168.50.0/24', nexthop: '10.0.0.250' }]);
      config = path.join(dir, 'cloud.conf');
      fs.writeFileSync(config, cloudConf(cloud.authUrl, routerId));
    });

    after(async () => {
      await run.stop();
      await cloud?.stop();
      await cluster?.cp.stop();
      fs.rmSync(dir, { recursive: true, force: true });
    });

    test('gauges, the refused node’s Event, plan’s room line; no live route removed', async (t) => {
      await run.step(t, async ({ admin, kubeconfig }) => {
        const flags = [
          '--cloud-provider=openstack',
          `--cloud-config=${config}`,
          `--kubeconfig=${kubeconfig}`,
          '--cluster-cidr=10.244.0.0/16',
        ];
        const routes = (): Promise<string[]> => cloud!.routeList(routerId);
        const daemon = run.start(
          [
            'run',
            ...flags,
            '--leader-elect=false',
            '--metrics-bind-address=127.0.0.1:0',
            '--log-format=json',
            WATCH_GATE,
          ],
          path.join(dir, 'daemon.log'),
        );
        const metricsPort = await daemon.port('metrics');
        const ip = (a: string) => [{ type: 'InternalIP', address: a }];
        await admin.createNode('node1', ['10.244.1.0/24'], ip('10.0.0.11'));
        await admin.createNode('node2', ['10.244.2.0/24'], ip('10.0.0.12'));
        const full = ['10.244.1.0/24=10.0.0.11', '10.244.2.0/24=10.0.0.12', '192.168.50.0/24=10.0.0.250'];
        await waitFor('the router full', 60_000, async () => (await routes()).join() === full.join(), 200);

        await admin.createNode('node3', ['10.244.3.0/24'], ip('10.0.0.13'));
        let event = '';
        await waitFor('node3 FailedToCreateRoute', 60_000, async () => {
          const events = await admin.events('involvedObject.name=node3,reason=FailedToCreateRoute');
          event = String((events[0] as { message?: unknown } | undefined)?.message ?? '');
          return event !== '';
        });
        assert.match(
          event,
          new RegExp(
            `; Neutron router ${routerId} holds 3 of its limit of 3 routes \\(2 of this cluster, 1 others\\); ` +
              'no route of a live node is removed to make room: raise the router route limit',
          ),
        );
        const c3 = await admin.condition('node3');
        assert.deepEqual([c3?.status, c3?.reason], ['True', 'NoRouteCreated']);

        const text = await (await fetch(`http://127.0.0.1:${metricsPort}/metrics`)).text();
        assert.equal(metricValue(text, 'route_controller_route_table_routes{owner="cluster"}'), 2);
        assert.equal(metricValue(text, 'route_controller_route_table_routes{owner="other"}'), 1);
        assert.equal(metricValue(text, 'route_controller_route_table_route_limit'), 3);

        const plan = await runToExit(['plan', ...flags]);
        assert.equal(plan.code, 0, plan.stderr);
        assert.match(
          plan.stdout,
          new RegExp(
            `Route table room: Neutron router ${routerId} holds 3 of its limit of 3 routes \\(2 of this cluster, 1 others\\): ` +
              '0 left, 0 after this plan \\(1 create\\(s\\) would be refused: raise the router route limit',
          ),
        );

        // The refusal is retried (E10); through all of it the live nodes keep their routes.
        assert.deepEqual(await routes(), full);
        for (const n of ['node1', 'node2']) {
          const c = await admin.condition(n);
          assert.deepEqual([c?.status, c?.reason], ['False', 'RouteCreated'], n);
        }
        assert.deepEqual(
          cloud!.neutronRequests('PUT', 'remove_extraroutes'),
          [],
          'nothing removed to make room',
        );
      });
    });
  },
);
