// The real executable against a real kube-apiserver: one replica in watch
// mode reconciles, serves /metrics and the probes and stops on SIGTERM; `plan`
// prints the creates without a single mutating call; flag handling.
import assert from 'node:assert/strict';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { after, before, describe, test } from 'node:test';
import { apiRequest, requireTestenv, startControlPlane, testenvBinaries } from '../support/controlplane.ts';
import type { ControlPlane } from '../support/controlplane.ts';
import { Admin, internalIP, setupControllerUser, waitFor } from '../integration/kube-helpers.ts';
import {
  calls,
  Daemon,
  FAST_LEASE,
  httpGet,
  memoryCloud,
  metricValue,
  routes,
  runToExit,
  type CloudFiles,
} from './support.ts';

const WATCH = '--feature-gates=CloudControllerManagerWatchBasedRoutesReconciliation=true';

describe('cloud-route-controller executable', () => {
  test('--help exits 0 and documents every flag with its default', { timeout: 30_000 }, async () => {
    const r = await runToExit(['--help']);
    assert.equal(r.code, 0, r.stderr);
    for (const flag of [
      '--cloud-provider',
      '--cluster-cidr',
      '--leader-elect-retry-period',
      '--metrics-bind-address',
      '-v, --v',
    ]) {
      assert.ok(r.stdout.includes(flag), flag);
    }
    assert.match(r.stdout, /--metrics-bind-address host:port +.*\(default "0"\)/);
    assert.match(r.stdout, /--secure-port int +.*\(default 10258\)/);
    const plan = await runToExit(['plan', '--help']);
    assert.equal(plan.code, 0);
    assert.match(plan.stdout, /cloud-route-controller plan \[flags\]/);
  });

  test('bad flags exit 1 with every error and no stack trace', { timeout: 30_000 }, async () => {
    const r = await runToExit([
      'run',
      '--cloud-provider=memory',
      '--cluster-cidr=10.0.0.0/8,10.1.0.0/8,10.2.0.0/8',
      '--kube-api-burst=0',
      '--bogus',
    ]);
    assert.equal(r.code, 1);
    assert.equal(
      r.stderr,
      'error: unknown flag: --bogus\n' +
        'error: invalid --cluster-cidr: len of ClusterCIDRs==3 and they are not configured as dual stack (at least one from each IPFamily)\n' +
        'error: --kube-api-burst must be greater than 0\n' +
        // No KUBECONFIG in the child's environment and no cluster: reported with the rest.
        'error: no kubeconfig: pass --kubeconfig or --master, set KUBECONFIG, or run in a cluster (KUBERNETES_SERVICE_HOST and /var/run/secrets/kubernetes.io/serviceaccount/token)\n',
    );
    assert.equal(r.stdout, '');
    const v = await runToExit(['version']);
    assert.equal(v.code, 0);
    assert.match(v.stdout, /^cloud-route-controller v\d+\.\d+\.\d+/);
  });
  test(
    '--configure-cloud-routes=false idles with probes and metrics; SIGTERM exits 0',
    { timeout: 30_000 },
    async () => {
      const idle = memoryCloud();
      const d = Daemon.start(
        [
          '--cloud-provider=memory',
          '--configure-cloud-routes=false',
          '--metrics-bind-address=127.0.0.1:0',
          '--health-probe-bind-address=127.0.0.1:0',
          '--log-format=json',
        ],
        path.join(idle.dir, 'idle.log'),
      );
      try {
        const metricsPort = await d.port('metrics');
        const healthPort = await d.port('health probes');
        await d.waitForLog(
          'Will not configure cloud provider routes, --configure-cloud-routes: false',
          10_000,
        );
        assert.deepEqual(await httpGet(healthPort, '/readyz'), { status: 200, body: 'ok' });
        assert.match((await httpGet(metricsPort, '/metrics')).body, /process_cpu_user_seconds_total/);
        d.signal('SIGTERM');
        assert.deepEqual(await d.waitExit(10_000), { code: 0, signal: null });
      } finally {
        await d.kill();
        fs.rmSync(idle.dir, { recursive: true, force: true });
      }
    },
  );
});

const enabled = testenvBinaries() !== undefined;

describe('daemon against a real apiserver', { timeout: 180_000 }, () => {
  let cp: ControlPlane | undefined;
  let admin: Admin;
  let kubeconfig: string;
  let cloud: CloudFiles;
  const daemons: Daemon[] = [];

  before(async () => {
    if (!enabled) return;
    cp = await startControlPlane();
    admin = new Admin(cp.adminKubeconfig);
    kubeconfig = await setupControllerUser(cp);
    await admin.createNode('node-a', ['10.244.1.0/24'], internalIP('10.0.0.1'));
    await admin.createNode('node-b', ['10.244.2.0/24'], internalIP('10.0.0.2'));
  });

  after(async () => {
    for (const d of daemons) await d.kill();
    await cp?.stop();
    if (cloud) fs.rmSync(cloud.dir, { recursive: true, force: true });
  });

  const guard = (t: Parameters<typeof requireTestenv>[0]): boolean => {
    if (enabled && cp !== undefined) return true;
    requireTestenv(t);
    return false;
  };

  const baseArgs = (c: CloudFiles): string[] => [
    '--cloud-provider=memory',
    `--cloud-config=${c.config}`,
    `--kubeconfig=${kubeconfig}`,
    '--cluster-cidr=10.244.0.0/16',
    '--metrics-bind-address=127.0.0.1:0',
    '--health-probe-bind-address=127.0.0.1:0',
    '--log-format=json',
  ];

  test(
    'plan prints the creates and makes no mutating call (nodes read access only)',
    { timeout: 60_000 },
    async (t) => {
      if (!guard(t)) return;
      // A user that may only read nodes: all `plan` needs (SPEC §7.4).
      const role = {
        apiVersion: 'rbac.authorization.k8s.io/v1',
        kind: 'ClusterRole',
        metadata: { name: 'node-reader' },
        rules: [{ apiGroups: [''], resources: ['nodes'], verbs: ['get', 'list', 'watch'] }],
      };
      assert.equal(
        (
          await apiRequest(
            cp!.adminKubeconfig,
            'POST',
            '/apis/rbac.authorization.k8s.io/v1/clusterroles',
            role,
          )
        ).status,
        201,
      );
      const binding = {
        apiVersion: 'rbac.authorization.k8s.io/v1',
        kind: 'ClusterRoleBinding',
        metadata: { name: 'node-reader-planner' },
        roleRef: { apiGroup: 'rbac.authorization.k8s.io', kind: 'ClusterRole', name: 'node-reader' },
        subjects: [{ apiGroup: 'rbac.authorization.k8s.io', kind: 'User', name: 'planner' }],
      };
      assert.equal(
        (
          await apiRequest(
            cp!.adminKubeconfig,
            'POST',
            '/apis/rbac.authorization.k8s.io/v1/clusterrolebindings',
            binding,
          )
        ).status,
        201,
      );
      const plannerKubeconfig = await cp!.userKubeconfig('planner');
      await waitFor(
        'planner can list nodes',
        20_000,
        async () => (await apiRequest(plannerKubeconfig, 'GET', '/api/v1/nodes?limit=1')).status === 200,
      );

      const planCloud = memoryCloud();
      try {
        const r = await runToExit([
          'plan',
          '--cloud-provider=memory',
          `--cloud-config=${planCloud.config}`,
          `--kubeconfig=${plannerKubeconfig}`,
          '--cluster-cidr=10.244.0.0/16',
          '--log-format=json',
        ]);
        assert.equal(r.code, 0, r.stderr);
        assert.match(
          r.stdout,
          /Routes to create \(2\):\n {2}\+ 10\.244\.1\.0\/24 -> node-a \(name hint [0-9a-f-]+\)\n {2}\+ 10\.244\.2\.0\/24 -> node-b/,
        );
        assert.match(r.stdout, /Routes to delete \(0\):\n {2}none/);
        assert.match(r.stdout, /~ node node-a: NetworkUnavailable=False \(RouteCreated\)/);
        assert.match(r.stdout, /Nothing was changed/);
        const made = calls(planCloud);
        assert.deepEqual(
          made.map((c) => c.op),
          ['list'],
        );
        assert.deepEqual(routes(planCloud), []);
        assert.equal(await admin.condition('node-a'), undefined);
      } finally {
        fs.rmSync(planCloud.dir, { recursive: true, force: true });
      }
    },
  );

  test(
    'run reconciles, serves /metrics and /readyz, and exits 0 on SIGTERM',
    { timeout: 90_000 },
    async (t) => {
      if (!guard(t)) return;
      cloud = memoryCloud();
      const d = Daemon.start(
        ['run', ...baseArgs(cloud), WATCH, ...FAST_LEASE, '-v=2'],
        path.join(cloud.dir, 'daemon.log'),
      );
      daemons.push(d);
      try {
        const metricsPort = await d.port('metrics');
        const healthPort = await d.port('health probes');
        await waitFor('routes created', 30_000, () => routes(cloud).length === 2, 200);
        assert.deepEqual(routes(cloud), ['10.244.1.0/24->node-a', '10.244.2.0/24->node-b']);
        for (const n of ['node-a', 'node-b']) {
          await waitFor(
            `${n} NetworkUnavailable=False`,
            20_000,
            async () => (await admin.condition(n))?.status === 'False',
          );
          const c = await admin.condition(n);
          assert.equal(c?.reason, 'RouteCreated');
        }
        assert.deepEqual(await httpGet(healthPort, '/readyz'), { status: 200, body: 'ok' });
        assert.equal((await httpGet(healthPort, '/healthz')).status, 200);
        assert.equal((await httpGet(healthPort, '/livez')).status, 200);
        // The reconcile counts itself when it ends, after its condition patches: wait for it.
        let m = '';
        await waitFor('the reconcile counted', 10_000, async () => {
          m = (await httpGet(metricsPort, '/metrics')).body;
          return (
            (metricValue(m, 'route_controller_route_sync_total{trigger="node_change",outcome="changed"}') ??
              0) >= 1
          );
        });
        assert.equal(metricValue(m, 'leader_election_master_status{name="cloud-route-controller"}'), 1);
        assert.equal(metricValue(m, 'running_managed_controllers{name="route"}'), 1);
        assert.equal(
          metricValue(m, 'route_controller_cloud_api_calls_total{operation="create",outcome="success"}'),
          2,
        );
        assert.match(m, /process_resident_memory_bytes/);

        // A node added later is reconciled by the watch (after minReconcileInterval at most).
        await admin.createNode('node-c', ['10.244.3.0/24'], internalIP('10.0.0.3'));
        await waitFor('node-c route', 30_000, () => routes(cloud).includes('10.244.3.0/24->node-c'), 200);

        const lease = await apiRequest(
          cp!.adminKubeconfig,
          'GET',
          '/apis/coordination.k8s.io/v1/namespaces/kube-system/leases/cloud-route-controller',
        );
        assert.equal(lease.status, 200);
        const holder = (JSON.parse(lease.body) as { spec: { holderIdentity: string } }).spec.holderIdentity;
        assert.match(holder, /^.+_[0-9a-f-]{36}$/);

        d.signal('SIGTERM');
        const exit = await d.waitExit(30_000);
        assert.deepEqual(exit, { code: 0, signal: null });
        const after = JSON.parse(
          (
            await apiRequest(
              cp!.adminKubeconfig,
              'GET',
              '/apis/coordination.k8s.io/v1/namespaces/kube-system/leases/cloud-route-controller',
            )
          ).body,
        ) as { spec: { holderIdentity?: string; leaseDurationSeconds?: number } };
        assert.equal(after.spec.holderIdentity ?? '', '', 'lease released');
        assert.equal(after.spec.leaseDurationSeconds, 1);
        const creates = calls(cloud).filter((c) => c.op === 'create');
        assert.deepEqual(creates.map((c) => c.destinationCIDR).sort(), [
          '10.244.1.0/24',
          '10.244.2.0/24',
          '10.244.3.0/24',
        ]);
        assert.ok(!d.output().includes('"level":"error"'), d.tail());
        assert.ok(d.logs().some((r) => r.msg === 'Received SIGTERM, shutting down'));
      } catch (err) {
        console.log(d.tail(60));
        cp?.markFailed(String(err));
        throw err;
      }
    },
  );

  test(
    'R63: SIGTERM during a slow reconcile waits 20 s, aborts its calls, writes nothing, exits 0',
    { timeout: 60_000 },
    async (t) => {
      if (!guard(t)) return;
      await admin.createNode('node-slow', ['10.244.9.0/24'], internalIP('10.0.0.9'));
      const slow = memoryCloud('60s');
      const d = Daemon.start(
        ['run', ...baseArgs(slow), '--leader-elect=false'],
        path.join(slow.dir, 'slow.log'),
      );
      daemons.push(d);
      try {
        const healthPort = await d.port('health probes');
        await waitFor(
          'ready',
          20_000,
          async () => (await httpGet(healthPort, '/readyz')).status === 200,
          100,
        );
        await d.waitForLog('Starting route controller', 10_000);
        // The first reconcile, and its list call, starts in the same turn as the later of these two lines.
        await d.waitForLog(/^Node cache synced/, 10_000);
        const termAt = Date.now();
        d.signal('SIGTERM');
        await waitFor(
          'not ready while shutting down',
          5_000,
          async () => (await httpGet(healthPort, '/readyz').catch(() => ({ status: 0 }))).status !== 200,
          50,
        );
        const exit = await d.waitExit(40_000);
        const took = Date.now() - termAt;
        t.diagnostic(`SIGTERM during a 60 s cloud call → exit ${exit.code} after ${took} ms`);
        assert.deepEqual(exit, { code: 0, signal: null });
        assert.ok(took >= 19_500 && took < 27_000, `exit ${took} ms after SIGTERM`);
        assert.ok(
          d
            .logs()
            .some((r) => r.msg === 'Reconcile still running after the grace period, aborting its calls'),
        );
        const made = calls(slow);
        assert.deepEqual(
          made.map((c) => [c.op, c.outcome]),
          [['list', 'AbortError']],
        );
        assert.deepEqual(routes(slow), []);
        assert.equal(await admin.condition('node-slow'), undefined, 'no condition written');
      } catch (err) {
        console.log(d.tail(40));
        throw err;
      } finally {
        fs.rmSync(slow.dir, { recursive: true, force: true });
      }
    },
  );

  test('R63: a second signal exits 1 at once', { timeout: 40_000 }, async (t) => {
    if (!guard(t)) return;
    const slow = memoryCloud('60s');
    const d = Daemon.start(
      ['run', ...baseArgs(slow), '--leader-elect=false'],
      path.join(slow.dir, 'twice.log'),
    );
    daemons.push(d);
    try {
      await d.waitForLog('Starting route controller', 20_000);
      await d.waitForLog(/^Node cache synced/, 10_000); // the first list call is in flight
      d.signal('SIGTERM');
      await d.waitForLog('Received SIGTERM, shutting down', 5_000);
      const second = Date.now();
      d.signal('SIGINT');
      const exit = await d.waitExit(5_000);
      assert.deepEqual(exit, { code: 1, signal: null });
      assert.ok(Date.now() - second < 2_000);
      assert.deepEqual(routes(slow), []);
    } finally {
      fs.rmSync(slow.dir, { recursive: true, force: true });
    }
  });
});
