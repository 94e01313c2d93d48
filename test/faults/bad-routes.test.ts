// Bad input on the cloud side (SPEC §8 E8, E9, E11, E16): routes the cloud
// lists with unknown targets, unparsable destinations, blackholes, and a
// cluster with no nodes, seeded into the in-memory cloud, against a real
// kube-apiserver with the controller in-process as the user of
// deploy/base/rbac.yaml. A healthy bystander node is served throughout.
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { apiRequest, requireTestenv } from '../support/controlplane.ts';
import { internalIP, waitFor } from '../integration/kube-helpers.ts';
import { inProcessSuite } from './scenario.ts';
import type { TrackedAdmin } from './support.ts';

const sleep = (ms: number): Promise<void> => new Promise((r) => setTimeout(r, ms));

describe('bad input: cloud routes (SPEC §8)', { timeout: 300_000 }, () => {
  let admin: TrackedAdmin;
  const { env, scenario, bystander } = inProcessSuite({ watch: true }, '10.30.0.1', (e) => ({ admin } = e));

  test(
    'E8: routes to no known node: managed ones deleted, unmanaged untouched, the list never fails',
    { timeout: 60_000 },
    async (t) => {
      const seed = [
        { destinationCIDR: '10.244.80.0/24', targetNode: '' },
        { destinationCIDR: '10.244.81.0/24', targetNode: 'i-0123456789abcdef0' },
        { destinationCIDR: 'fd00:10:244:82::/64', targetNode: 'deleted-node' },
      ];
      const keep = [
        { destinationCIDR: '0.0.0.0/0', targetNode: 'igw-0abc' },
        { destinationCIDR: '10.0.0.0/8', targetNode: 'i-0123456789abcdef0' }, // contains the cluster CIDR, first/last outside
        { destinationCIDR: '172.16.0.0/16', targetNode: '' },
      ];
      await scenario(t, { seed, keep }, async (rc, cloud) => {
        await bystander('ok-e8', '10.244.83.0/24', cloud);
        await waitFor('managed ones deleted', 15_000, () => cloud.snapshot().length === 4);
        assert.ok(!rc.reports.some((r) => r.failureKinds.has('list')), 'listRoutes never failed');
        const deleted = rc.logger.messages().filter((m) => m.startsWith('Deleted route seed-'));
        assert.equal(deleted.length, 3, deleted.join('\n'));
      });
    },
  );

  test(
    'E9: unparsable destinations from the cloud are logged, never deleted, never matched',
    { timeout: 60_000 },
    async (t) => {
      const keep = [
        { destinationCIDR: 'not-a-cidr', targetNode: 'x' },
        { destinationCIDR: '10.244.300.0/24', targetNode: 'ok-e9' },
        { destinationCIDR: 'fd00:10:244::zz/64', targetNode: '' },
        { destinationCIDR: '10.244.90.0', targetNode: 'ok-e9' },
      ];
      await scenario(t, { keep }, async (rc, cloud) => {
        await bystander('ok-e9', '10.244.90.0/24', cloud);
        const n = rc.reports.length;
        await admin.patchStatus('ok-e9', { addresses: [{ type: 'InternalIP', address: '10.30.0.9' }] });
        await waitFor('another reconcile', 15_000, () => rc.reports.length > n);
        for (const k of keep)
          assert.ok(
            rc.logger
              .messages()
              .some((m) => m.startsWith(`Ignoring route seed-${k.destinationCIDR}, unparsable CIDR:`)),
            k.destinationCIDR,
          );
      });
    },
  );

  test('E11: zero nodes: every managed route deleted, foreign ones kept', { timeout: 60_000 }, async (t) => {
    const seed = [
      { destinationCIDR: '10.244.110.0/24', targetNode: 'old-1' },
      { destinationCIDR: 'fd00:10:244:6e::/64', targetNode: '' },
    ];
    const keep = [{ destinationCIDR: '192.168.0.0/24', targetNode: 'vpn' }];
    await scenario(t, { seed, keep }, async (rc, cloud) => {
      assert.deepEqual(await admin.nodes(), []);
      await waitFor('managed routes deleted', 15_000, () => cloud.snapshot().length === 1);
      assert.equal(rc.reports[0]?.deleted, 2);
    });
  });

  test(
    'E11: an unsynced (forbidden) node cache is never taken for zero nodes; once granted, it reconciles',
    { timeout: 60_000 },
    async (t) => {
      const suite = env();
      if (suite === undefined) return void requireTestenv(t);
      const late = await suite.cp.userKubeconfig('e11-late-grant');
      const seed = [{ destinationCIDR: '10.244.111.0/24', targetNode: 'old-2' }];
      await scenario(t, { seed, kubeconfig: late }, async (rc, cloud) => {
        await waitFor('403 logged at Error', 15_000, () =>
          rc.logger.records.some((r) => r.level === 'error' && /forbidden/i.test(r.msg)),
        );
        await sleep(3_000);
        assert.deepEqual(cloud.log, [], 'no cloud call at all before the initial sync (R12, R58)');
        assert.equal(cloud.snapshot().length, 1);
        const r = await apiRequest(
          admin.kubeconfig,
          'POST',
          '/apis/rbac.authorization.k8s.io/v1/clusterrolebindings',
          {
            metadata: { name: 'e11-late-grant' },
            roleRef: {
              apiGroup: 'rbac.authorization.k8s.io',
              kind: 'ClusterRole',
              name: 'cloud-route-controller',
            },
            subjects: [{ apiGroup: 'rbac.authorization.k8s.io', kind: 'User', name: 'e11-late-grant' }],
          },
        );
        assert.equal(r.status, 201, r.body);
        await waitFor('synced, stale route deleted', 30_000, () => cloud.snapshot().length === 0);
      });
    },
  );

  test(
    'E16: a managed blackhole to a node still wanting the CIDR is deleted, then re-created in the same reconcile (R20, R27)',
    { timeout: 60_000 },
    async (t) => {
      await scenario(t, {}, async (rc, cloud) => {
        await bystander('ok-e16', '10.244.160.0/24', cloud);
        await admin.createNode('bh', ['10.244.161.0/24'], internalIP('10.30.16.1'));
        await waitFor('bh routed', 15_000, () => cloud.snapshot().some((r) => r.targetNode === 'bh'));
        const n = cloud.log.length;
        cloud.blackholeTarget('bh');
        // In watch mode nothing in Kubernetes changed: a node event makes the next reconcile come now.
        await admin.patchStatus('bh', { addresses: [{ type: 'InternalIP', address: '10.30.16.2' }] });
        await waitFor('bh route healthy again', 15_000, () =>
          cloud.snapshot().some((r) => r.targetNode === 'bh' && !r.blackhole),
        );
        const calls = cloud.log.slice(n).filter((c) => c.destinationCIDR === '10.244.161.0/24');
        assert.deepEqual(
          calls.map((c) => `${c.op}/${c.outcome}`),
          ['delete/ok', 'create/ok'],
        );
        assert.ok(calls[1]!.start >= calls[0]!.end, 'R27: the create waited for the delete');
        const lists = cloud.log
          .slice(n)
          .filter((c) => c.op === 'list' && c.start > calls[0]!.start && c.start < calls[1]!.start);
        assert.deepEqual(lists, [], 'one reconcile');
        // The reconcile reports after its condition patches, which may come after the create.
        await waitFor('the reconcile that replaced the route reported', 10_000, () =>
          rc.reports.some((r) => r.deleted === 1 && r.created === 1),
        );
      });
    },
  );
});
