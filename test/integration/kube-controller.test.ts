/**
 * The RouteController on the src/kube adapters against a real kube-apiserver,
 * running as a normal user bound only to deploy/base/rbac.yaml, with an in-memory
 * cloud. The functional cases run in periodic mode and in watch mode with and without the route cache.
 */
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { MemoryRoutes } from '../../src/cloud/memory/memory-routes.ts';
import { apiRequest, requireTestenv, startControlPlane, testenvBinaries } from '../support/controlplane.ts';
import type { ControlPlane } from '../support/controlplane.ts';
import { retryBoundMs as retryBound } from '../support/retry-bound.ts';
import { testRandom } from '../support/seed.ts';
import {
  Admin,
  internalIP,
  routeList,
  setupControllerUser,
  startController,
  waitFor,
  type RunningController,
} from './kube-helpers.ts';

const enabled = testenvBinaries() !== undefined;

// Watch mode runs with the defaults (route cache and pacing on) and with the route cache off.
for (const { watch, routeCache } of [
  { watch: false, routeCache: true },
  { watch: true, routeCache: true },
  { watch: true, routeCache: false },
]) {
  const mode = watch ? (routeCache ? 'watch' : 'watch, --route-cache=false') : 'periodic';
  describe(`route controller on a real apiserver (${mode} mode)`, { timeout: 150_000 }, () => {
    let cp: ControlPlane | undefined;
    let admin: Admin;
    let rc: RunningController | undefined;
    let cloud: MemoryRoutes;

    before(async () => {
      if (!enabled) return;
      cp = await startControlPlane();
      admin = new Admin(cp.adminKubeconfig);
      const kubeconfig = await setupControllerUser(cp);
      cloud = new MemoryRoutes({ random: testRandom('cloud') });
      rc = startController({ kubeconfig, watch, cloud, controller: { routeCache } });
    });

    after(async () => {
      await rc?.stop();
      await cp?.stop();
    });

    const guard = (t: { skip(m?: string): void }): boolean => {
      if (enabled && cp !== undefined && rc !== undefined) return true;
      requireTestenv(t as Parameters<typeof requireTestenv>[0]);
      return false;
    };

    const failed = (err: unknown): never => {
      cp?.markFailed(String(err));
      if (rc)
        console.log(
          rc.logger.records
            .slice(-40)
            .map((r) => `${r.level} ${r.msg}`)
            .join('\n'),
        );
      throw err;
    };

    const waitCondition = async (name: string, status: string, reason: string, ms = 20_000): Promise<void> =>
      waitFor(`${name} NetworkUnavailable=${status}/${reason}`, ms, async () => {
        const c = await admin.condition(name);
        return c?.status === status && c.reason === reason;
      });

    test(
      'nodes get routes and NetworkUnavailable=False/RouteCreated; Ready survives',
      { timeout: 30_000 },
      async (t) => {
        if (!guard(t)) return;
        try {
          const n1 = await admin.createNode('n1', ['10.244.1.0/24'], internalIP('10.0.0.1'));
          const n2 = await admin.createNode(
            'n2',
            ['10.244.2.0/24', 'fd00:10:244:2::/64'],
            internalIP('10.0.0.2'),
          );
          await waitFor('three routes', 20_000, () => routeList(cloud).length === 3);
          assert.deepEqual(routeList(cloud), [
            '10.244.1.0/24->n1',
            '10.244.2.0/24->n2',
            'fd00:10:244:2::/64->n2',
          ]);
          const hints = cloud.calls.filter((c) => c.op === 'create' && c.outcome === 'ok');
          assert.ok(hints.every((c) => c.nameHint === (c.targetNode === 'n1' ? n1 : n2).metadata.uid));
          await waitCondition('n1', 'False', 'RouteCreated');
          await waitCondition('n2', 'False', 'RouteCreated');
          const node = await admin.getNode('n2');
          const nu = node?.status?.conditions?.find((c) => c.type === 'NetworkUnavailable');
          assert.equal(nu?.message, 'RouteController created a route');
          assert.match(String(nu?.lastTransitionTime), /^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ$/);
          // Strategic merge by type: the kubelet's Ready condition is untouched.
          const ready = node?.status?.conditions?.find((c) => c.type === 'Ready');
          assert.equal(ready?.status, 'True');
          assert.equal(ready?.reason, 'KubeletReady');
        } catch (err) {
          failed(err);
        }
      },
    );

    test('a deleted node loses its routes', { timeout: 30_000 }, async (t) => {
      if (!guard(t)) return;
      try {
        await admin.deleteNode('n1');
        await waitFor('n1 route gone', 20_000, () => !routeList(cloud).some((r) => r.endsWith('->n1')));
        assert.deepEqual(routeList(cloud), ['10.244.2.0/24->n2', 'fd00:10:244:2::/64->n2']);
      } catch (err) {
        failed(err);
      }
    });

    test(
      'a node re-created with another CIDR ends with only the new route, hint = new uid',
      { timeout: 30_000 },
      async (t) => {
        if (!guard(t)) return;
        try {
          const before = cloud.calls.length;
          await admin.deleteNode('n2');
          const n2 = await admin.createNode('n2', ['10.244.3.0/24'], internalIP('10.0.0.2'));
          await waitFor(
            'only the new n2 route',
            20_000,
            () => routeList(cloud).join() === '10.244.3.0/24->n2',
          );
          const creates = cloud.calls.slice(before).filter((c) => c.op === 'create' && c.outcome === 'ok');
          assert.deepEqual(
            creates.map((c) => [c.destinationCIDR, c.nameHint]),
            [['10.244.3.0/24', n2.metadata.uid]],
          );
          await waitCondition('n2', 'False', 'RouteCreated');
        } catch (err) {
          failed(err);
        }
      },
    );

    test(
      'a failing cloud: NoRouteCreated + FailedToCreateRoute event, then recovery',
      { timeout: 120_000 },
      async (t) => {
        if (!guard(t)) return;
        try {
          cloud.failFraction(1, ['create']);
          const n4 = await admin.createNode('n4', ['10.244.4.0/24'], internalIP('10.0.0.4'));
          await waitCondition('n4', 'True', 'NoRouteCreated');
          let events: Record<string, unknown>[] = [];
          await waitFor('FailedToCreateRoute event for n4', 20_000, async () => {
            events = await admin.events('involvedObject.name=n4,reason=FailedToCreateRoute');
            return events.length > 0;
          });
          const ev = events[0] as {
            type: string;
            message: string;
            count: number;
            involvedObject: { kind: string; apiVersion: string; name: string; uid: string };
            source: { component: string };
            reportingComponent: string;
            firstTimestamp: string;
            lastTimestamp: string;
          };
          assert.equal(ev.type, 'Warning');
          const io = ev.involvedObject;
          assert.deepEqual([io.kind, io.apiVersion, io.name, io.uid], ['Node', 'v1', 'n4', n4.metadata.uid]);
          assert.equal(ev.source.component, 'route_controller');
          assert.equal(ev.reportingComponent, 'route_controller');
          assert.match(
            ev.message,
            /^Could not create route .* 10\.244\.4\.0\/24 for node n4 after .*injected create failure/,
          );
          assert.ok(ev.firstTimestamp && ev.lastTimestamp);
          if (!watch) {
            // Repeats every tick: the recorder aggregates and patches counts instead of creating more events.
            await waitFor('an event with count >= 2', 30_000, async () => {
              const evs = await admin.events('involvedObject.name=n4,reason=FailedToCreateRoute');
              return evs.some((e) => Number(e['count']) >= 2);
            });
            const evs = await admin.events('involvedObject.name=n4,reason=FailedToCreateRoute');
            assert.ok(evs.length <= 11, `aggregated: ${evs.length} events`);
          }
          assert.equal(routeList(cloud).includes('10.244.4.0/24->n4'), false);
          // Watch mode recovers through its R46 retry, and each failed reconcile doubles its delay
          // (10 s × 2ⁿ⁻¹ × U[1, 1.2)); how many failed before the cloud recovers depends on the
          // machine's speed: wait the rule's bound for the errors seen once no reconcile is running,
          // not a fixed guess. Periodic mode recovers at its next tick.
          const before = rc!.reports.length;
          cloud.clearFaults();
          await waitFor(
            'no reconcile running',
            10_000,
            () => rc!.controller.status().reconcileStartedAt === undefined,
          );
          let retryBoundMs = 10_000;
          if (watch) {
            const sinceSuccess = rc!.reports.slice(
              rc!.reports.findLastIndex((r) => r.outcome === 'changed' || r.outcome === 'noop') + 1,
            );
            const n = sinceSuccess.filter((r) => r.outcome === 'error').length;
            assert.ok(
              n <= 3,
              `${n} failed reconciles before recovery: the retry would come after the timeout`,
            );
            retryBoundMs = retryBound(n);
          }
          await waitFor('n4 route after recovery', retryBoundMs + 10_000, () =>
            routeList(cloud).includes('10.244.4.0/24->n4'),
          );
          await waitCondition('n4', 'False', 'RouteCreated');
          // The reconcile reports after its condition patches: wait for the report, not the patch.
          if (watch)
            await waitFor('a retry reconcile that created the route', 10_000, () =>
              rc!.reports.slice(before).some((r) => r.trigger === 'retry' && r.created === 1),
            );
        } catch (err) {
          failed(err);
        }
      },
    );

    test(
      'another writer setting NetworkUnavailable=False/CalicoIsUp gets it put back',
      { timeout: 30_000 },
      async (t) => {
        if (!guard(t)) return;
        try {
          const before = rc!.reports.length;
          const now = new Date().toISOString().replace(/\.\d+Z$/, 'Z');
          await admin.patchStatus('n2', {
            conditions: [
              {
                type: 'NetworkUnavailable',
                status: 'False',
                reason: 'CalicoIsUp',
                message: 'Calico is running on this node',
                lastTransitionTime: now,
                lastHeartbeatTime: now,
              },
            ],
          });
          await waitCondition('n2', 'False', 'RouteCreated');
          // The condition is put back inside the reconcile, which reports after it: on a loaded
          // machine the patch is visible before the report exists.
          if (watch)
            await waitFor('a condition_drift reconcile', 10_000, () =>
              rc!.reports.slice(before).some((r) => r.trigger === 'condition_drift'),
            );
        } catch (err) {
          failed(err);
        }
      },
    );

    test(
      'the controller user is refused what deploy/base/rbac.yaml does not grant',
      { timeout: 20_000 },
      async (t) => {
        if (!guard(t)) return;
        const kc = await cp!.userKubeconfig('route-controller-ts');
        const del = await apiRequest(kc, 'DELETE', '/api/v1/nodes/n2');
        assert.equal(del.status, 403, del.body);
        const secrets = await apiRequest(kc, 'GET', '/api/v1/namespaces/kube-system/secrets');
        assert.equal(secrets.status, 403, secrets.body);
        const upd = await apiRequest(
          kc,
          'PATCH',
          '/api/v1/nodes/n2',
          '{"metadata":{"labels":{"x":"y"}}}',
          'application/strategic-merge-patch+json',
        );
        assert.equal(upd.status, 403, upd.body);
        // A single node's GET is not granted either: the cache lists and watches (SPEC §7.4).
        assert.equal((await apiRequest(kc, 'GET', '/api/v1/nodes/n2')).status, 403);
        // What it does need works.
        assert.equal((await apiRequest(kc, 'GET', '/api/v1/nodes?limit=1')).status, 200);
        assert.ok(await admin.getNode('n2'));
      },
    );

    if (watch) {
      test(
        'watch mode: an address change triggers a reconcile; heartbeats, labels and images do not',
        { timeout: 40_000 },
        async (t) => {
          if (!guard(t)) return;
          try {
            const quiet = async (): Promise<number> => {
              let n = rc!.reports.length;
              let since = Date.now();
              await waitFor('no reconcile for 1.5 s', 20_000, () => {
                if (rc!.reports.length !== n) {
                  n = rc!.reports.length;
                  since = Date.now();
                }
                return Date.now() - since > 1500;
              });
              return n;
            };
            const n0 = await quiet();
            await admin.heartbeat('n2');
            await admin.patchNode('n2', {
              metadata: { labels: { 'example.com/pool': 'blue' }, annotations: { a: 'b' } },
            });
            const images = Array.from({ length: 5 }, (_, i) => ({
              names: [`registry.example/img${i}:v1`],
              sizeBytes: 1000 + i,
            }));
            const last = await admin.patchStatus('n2', { images });
            // The informer saw all of them (its cache is at the last write) ...
            await waitFor(
              'informer caught up',
              10_000,
              () => rc!.informer.get('n2')?.metadata?.resourceVersion === last.metadata.resourceVersion,
            );
            await new Promise((r) => setTimeout(r, 1000));
            // ... and none triggered a reconcile (R42).
            assert.equal(
              rc!.reports.length,
              n0,
              `reconciles after heartbeat/labels/images: ${rc!.reports
                .slice(n0)
                .map((r) => r.trigger)
                .join()}`,
            );
            await admin.patchStatus('n2', { addresses: [{ type: 'InternalIP', address: '10.0.0.22' }] });
            await waitFor('a node_change reconcile', 10_000, () =>
              rc!.reports.slice(n0).some((r) => r.trigger === 'node_change'),
            );
            assert.deepEqual(rc!.informer.get('n2')?.status?.addresses, [
              { type: 'InternalIP', address: '10.0.0.22' },
            ]);
          } catch (err) {
            failed(err);
          }
        },
      );
    }
  });
}
