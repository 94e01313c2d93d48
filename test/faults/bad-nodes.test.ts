// Bad input on the Kubernetes side (SPEC §8 E1–E7, E15) against a real
// kube-apiserver: what it refuses (so the row is covered at unit level) and
// what it accepts, with the controller in-process as the user of
// deploy/base/rbac.yaml. Every case has a healthy bystander node that must be
// served regardless, and ends in a log line or Event.
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { PermanentError } from '../../src/core/errors.ts';
import { apiRequest, requireTestenv } from '../support/controlplane.ts';
import { internalIP, waitFor } from '../integration/kube-helpers.ts';
import { inProcessSuite } from './scenario.ts';
import { AuditedMemoryRoutes, type TrackedAdmin } from './support.ts';

const sleep = (ms: number): Promise<void> => new Promise((r) => setTimeout(r, ms));

describe('bad input: nodes (SPEC §8)', { timeout: 400_000 }, () => {
  let admin: TrackedAdmin;
  const { env, scenario, bystander } = inProcessSuite({ watch: false }, '10.20.0.1', (e) => ({ admin } = e));

  const condition = async (name: string): Promise<string> => {
    const c = await admin.condition(name);
    return c ? `${c.status}/${c.reason}` : 'none';
  };

  async function refused(podCIDRs: string[]): Promise<string> {
    const r = await apiRequest(admin.kubeconfig, 'POST', '/api/v1/nodes', {
      apiVersion: 'v1',
      kind: 'Node',
      metadata: { name: 'refused' },
      spec: { podCIDR: podCIDRs[0], podCIDRs },
    });
    assert.equal(r.status, 422, `${JSON.stringify(podCIDRs)} accepted: ${r.body}`);
    return (JSON.parse(r.body) as { message: string }).message;
  }

  test('E1: duplicate pod CIDRs are refused by the apiserver (one per family); unit level: TR17', async (t) => {
    if (env() === undefined) return void requireTestenv(t);
    for (const p of [
      ['10.244.1.0/24', '10.244.1.0/24'],
      ['10.244.1.0/24', '10.244.2.0/24'],
    ])
      assert.match(await refused(p), /may specify no more than one CIDR for each IP family/);
  });

  test(
    'E4: malformed pod CIDRs are refused by the apiserver (unit level: R17/E4); accepted non-canonical IPv6 forms are routed once and kept',
    { timeout: 60_000 },
    async (t) => {
      if (env() === undefined) return void requireTestenv(t);
      assert.match(await refused(['10.244.1.5/24']), /must not have bits set beyond the prefix length/);
      assert.match(await refused(['010.244.1.0/24']), /must not have leading 0s/);
      assert.match(await refused(['10.244.1.0/33']), /must be a valid CIDR value/);
      assert.match(await refused(['garbage']), /must be a valid CIDR value/);
      assert.match(await refused(['::ffff:10.244.1.0/120']), /IPv4-mapped/);
      await scenario(t, {}, async (rc, cloud) => {
        await bystander('ok-e4', '10.244.10.0/24', cloud);
        await admin.createNode('upper', ['10.244.11.0/24', 'FD00:10:244:B::/64'], internalIP('10.20.0.2'));
        await admin.createNode('padded', ['10.244.12.0/24', 'fd00:10:244:0c::/64'], internalIP('10.20.0.3'));
        await waitFor('5 routes', 15_000, () => cloud.snapshot().length === 5);
        const n = rc.reports.length;
        await waitFor('3 more reconciles', 10_000, () => rc.reports.length >= n + 3);
        const creates = cloud.log.filter((c) => c.op === 'create').map((c) => c.destinationCIDR);
        assert.deepEqual(creates.filter((d) => d!.includes(':')).sort(), [
          'FD00:10:244:B::/64',
          'fd00:10:244:0c::/64',
        ]);
        assert.equal(cloud.log.filter((c) => c.op === 'delete').length, 0, 'no re-create loop');
        assert.equal(await condition('upper'), 'False/RouteCreated');
      });
    },
  );

  test(
    'E2: two nodes claim one CIDR: one stable owner, the other NoRouteCreated + Event',
    { timeout: 60_000 },
    async (t) => {
      await scenario(t, {}, async (rc, cloud) => {
        await bystander('ok-e2', '10.244.20.0/24', cloud);
        await admin.createNode('c-old', ['10.244.21.0/24'], internalIP('10.20.1.1'));
        await waitFor('c-old routed', 15_000, () => cloud.snapshot().some((r) => r.targetNode === 'c-old'));
        const since = Date.now();
        await admin.createNode('c-new', ['10.244.21.0/24'], internalIP('10.20.1.2'));
        await waitFor(
          'c-new NoRouteCreated',
          15_000,
          async () => (await condition('c-new')) === 'True/NoRouteCreated',
        );
        const n = rc.reports.length;
        await waitFor('4 more reconciles', 10_000, () => rc.reports.length >= n + 4);
        const touched = cloud.log.filter(
          (c) => c.op !== 'list' && c.destinationCIDR === '10.244.21.0/24' && c.start > since,
        );
        assert.deepEqual(touched, [], 'the owner is stable: no flip-flop');
        assert.equal(await condition('c-old'), 'False/RouteCreated');
        await admin.eventsUntil('FailedToCreateRoute', (ev) =>
          ev.includes('c-new: pod CIDR 10.244.21.0/24 is also assigned to node c-old; route not created'),
        );
        assert.ok(
          rc.logger
            .messages()
            .some((m) => m.startsWith('node c-new: pod CIDR 10.244.21.0/24 is also assigned')),
        );
        // The owner goes away: the other claimant gets the route.
        await admin.deleteNode('c-old');
        await waitFor(
          'c-new routed',
          15_000,
          async () => (await condition('c-new')) === 'False/RouteCreated',
        );
      });
    },
  );

  test(
    'E3: a pod CIDR outside the cluster CIDRs is routed, evented once, never deleted',
    { timeout: 60_000 },
    async (t) => {
      await scenario(
        t,
        { survivors: () => [{ destinationCIDR: '10.99.1.0/24', targetNode: 'o1' }] },
        async (rc, cloud) => {
          await bystander('ok-e3', '10.244.30.0/24', cloud);
          await admin.createNode('o1', ['10.99.1.0/24'], internalIP('10.20.3.1'));
          await waitFor('o1 routed', 15_000, async () => (await condition('o1')) === 'False/RouteCreated');
          const n = rc.reports.length;
          await waitFor('4 more reconciles', 10_000, () => rc.reports.length >= n + 4);
          type Ev = { count?: number; message?: string; involvedObject?: { name?: string } };
          // Events are posted after the reconcile that caused them: wait for the first.
          let mine: Ev[] = [];
          await waitFor('ClusterCIDRMisconfigured Event for o1', 15_000, async () => {
            const ev = (await admin.events('reason=ClusterCIDRMisconfigured')) as Ev[];
            mine = ev.filter((e) => e.involvedObject?.name === 'o1');
            return mine.length > 0;
          });
          assert.equal(mine.length, 1);
          assert.equal(mine[0]!.count ?? 1, 1, 'once per (UID, CIDR) per process');
          assert.match(
            mine[0]!.message ?? '',
            /pod CIDR 10\.99\.1\.0\/24 of node o1 is outside the cluster CIDRs/,
          );
          await admin.deleteNode('o1');
          // Counted from o1's removal from the cache: the event wait above may already have
          // seen n + 6 reconciles, all of them with o1 still there.
          await waitFor('o1 gone from the cache', 10_000, () => !rc.informer.get('o1'));
          const m = rc.reports.length;
          await waitFor('2 more reconciles', 10_000, () => rc.reports.length >= m + 2);
          assert.ok(!cloud.log.some((c) => c.op === 'delete'), 'unmanaged: never deleted');
        },
      );
    },
  );

  test('E5: IPv6-only cluster: 128-bit rules end to end', { timeout: 60_000 }, async (t) => {
    const v6 = ['fd00:10:244::/56'];
    await scenario(
      t,
      {
        clusterCIDRs: v6,
        seed: [{ destinationCIDR: 'fd00:10:244:ff::/64', targetNode: 'gone' }],
        keep: [{ destinationCIDR: 'fd00:11::/64', targetNode: 'gone' }],
      },
      async (_rc, cloud) => {
        await bystander('ok-e5', 'fd00:10:244:50::/64', cloud);
        await admin.createNode('six', ['fd00:10:244:51::/64'], internalIP('fd00::51'));
        await waitFor(
          'stale v6 route deleted',
          15_000,
          () =>
            !cloud
              .snapshot()
              .some((r) => r.targetNode === 'gone' && r.destinationCIDR.startsWith('fd00:10:244:')),
        );
      },
    );
  });

  test(
    'E5: a cloud without IPv6 (PermanentError): Event, NoRouteCreated, no retry; the IPv4 route is made',
    { timeout: 60_000 },
    async (t) => {
      const cloud = new AuditedMemoryRoutes();
      cloud.reject = (op, route) =>
        op === 'create' && route?.destinationCIDR.includes(':')
          ? new PermanentError('IPv6 routes are not supported in this VPC')
          : undefined;
      await scenario(t, { watch: true, cloud, unrouted: new Set(['fd00:10:244:52::/64']) }, async () => {
        await bystander('ok-e5p', '10.244.52.0/24', cloud);
        await admin.createNode('ds', ['10.244.53.0/24', 'fd00:10:244:52::/64'], internalIP('10.20.5.3'));
        await waitFor(
          'ds NoRouteCreated',
          15_000,
          async () => (await condition('ds')) === 'True/NoRouteCreated',
        );
        await sleep(13_000); // a retryable error would have been retried by now (R46: 10–12 s)
        const tries = cloud.log.filter(
          (c) => c.op === 'create' && c.destinationCIDR === 'fd00:10:244:52::/64',
        );
        assert.equal(tries.length, 1, 'permanent: no retry');
        assert.ok(
          cloud.snapshot().some((r) => r.destinationCIDR === '10.244.53.0/24' && r.targetNode === 'ds'),
        );
        await admin.eventsUntil('FailedToCreateRoute', (ev) =>
          ev.some((e) => e.startsWith('ds: ') && e.endsWith('IPv6 routes are not supported in this VPC')),
        );
      });
    },
  );

  test(
    'E6: a node without addresses is requested with []; a cloud refusing that: Event, NoRouteCreated; addresses appear → routed (R41c)',
    { timeout: 60_000 },
    async (t) => {
      const cloud = new AuditedMemoryRoutes({ reportNodeAddresses: true });
      const requested: string[] = [];
      cloud.reject = (op, route) => {
        if (op !== 'create' || !route) return undefined;
        requested.push(`${route.targetNode}:${JSON.stringify(route.targetNodeAddresses)}`);
        return route.targetNodeAddresses.length === 0
          ? new PermanentError('instance has no private IP to route to')
          : undefined;
      };
      await scenario(t, { watch: true, cloud }, async () => {
        await bystander('ok-e6', '10.244.60.0/24', cloud);
        await admin.createNode('na', ['10.244.61.0/24'], []);
        await waitFor(
          'na NoRouteCreated',
          15_000,
          async () => (await condition('na')) === 'True/NoRouteCreated',
        );
        assert.ok(requested.includes('na:[]'), requested.join());
        await admin.eventsUntil('FailedToCreateRoute', (ev) =>
          ev.some((e) => e.startsWith('na: ') && e.endsWith('instance has no private IP to route to')),
        );
        await admin.patchStatus('na', { addresses: [{ type: 'InternalIP', address: '10.20.6.1' }] });
        await waitFor('na routed', 15_000, async () => (await condition('na')) === 'False/RouteCreated');
        const route = cloud.snapshot().find((r) => r.targetNode === 'na');
        assert.deepEqual(route?.targetNodeAddresses, [{ type: 'InternalIP', address: '10.20.6.1' }]);
      });
    },
  );

  test(
    'E7: a node re-created with the same name and CIDR between two reconciles keeps its route',
    { timeout: 60_000 },
    async (t) => {
      await scenario(t, { controller: { routeReconciliationPeriodMs: 3_000 } }, async (rc, cloud) => {
        await bystander('ok-e7', '10.244.70.0/24', cloud);
        const old = await admin.createNode('rc', ['10.244.71.0/24'], internalIP('10.20.7.1'));
        await waitFor('rc routed', 15_000, async () => (await condition('rc')) === 'False/RouteCreated');
        const n = rc.reports.length;
        await waitFor('a tick', 10_000, () => rc.reports.length > n);
        await admin.deleteNode('rc');
        const fresh = await admin.createNode('rc', ['10.244.71.0/24'], internalIP('10.20.7.1'));
        const since = Date.now();
        assert.notEqual(fresh.metadata.uid, old.metadata.uid);
        await waitFor('two more ticks', 15_000, () => rc.reports.length >= n + 3);
        assert.deepEqual(
          cloud.log.filter((c) => c.op !== 'list' && c.start >= since - 50),
          [],
          'the route is kept: no delete, no create',
        );
        const route = cloud.snapshot().find((r) => r.targetNode === 'rc');
        assert.ok(route?.name.includes(old.metadata.uid), 'the cloud name may embed the old UID (E7)');
        await waitFor(
          'new rc RouteCreated',
          10_000,
          async () => (await condition('rc')) === 'False/RouteCreated',
        );
      });
    },
  );

  test(
    'E15: a node without pod CIDRs but targeted by a route loses it and gets True/NoRouteCreated',
    { timeout: 60_000 },
    async (t) => {
      await scenario(t, { watch: false }, async (rc, cloud) => {
        await admin.createNode('np', [], internalIP('10.20.15.1'));
        // The route appears once np is cached: seeded before, a reconcile that ran before np
        // existed would rightly delete it as a route to no node (E8), and np would stay untracked.
        await waitFor('np cached', 10_000, () => rc.informer.list().some((n) => n.metadata?.name === 'np'));
        cloud.putRoute({ destinationCIDR: '10.244.77.0/24', targetNode: 'np', clusterName: 'faults' });
        await bystander('ok-e15', '10.244.78.0/24', cloud);
        await waitFor(
          'np NoRouteCreated',
          15_000,
          async () => (await condition('np')) === 'True/NoRouteCreated',
        );
        assert.ok(!cloud.snapshot().some((r) => r.targetNode === 'np'));
        assert.ok(
          rc.logger
            .messages()
            .includes('node np has no routes assigned to it. NodeNetworkUnavailable will be set to true'),
        );
      });
    },
  );
});
