// Process faults with the REAL executable (memory provider, shared state file
// and call log): SIGKILL in the middle of a 500-route reconcile and a restart;
// two replicas whose leader is SIGKILLed, or partitioned from the apiserver by
// a TCP proxy, mid-reconcile. The call log's timestamps must show one writer
// at a time, and the whole log must pass the invariant checker.
import assert from 'node:assert/strict';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { after, before, describe, test } from 'node:test';
import { requireTestenv, startControlPlane, testenvBinaries } from '../support/controlplane.ts';
import type { ControlPlane } from '../support/controlplane.ts';
import { internalIP, setupControllerUser, waitFor } from '../integration/kube-helpers.ts';
import { Daemon, httpGet, memoryCloud, metricValue, type CloudFiles } from '../e2e/support.ts';
import { checkSingleWriter, type CloudCall } from './invariants.ts';
import { assertCallLog, fileCallLog, fileEntries, TrackedAdmin, waitConverged } from './support.ts';
import { kubeconfigVia, TcpProxy } from './tcp-proxy.ts';

const enabled = testenvBinaries() !== undefined;
const CIDRS = ['10.244.0.0/16'];
const WATCH = '--feature-gates=CloudControllerManagerWatchBasedRoutesReconciliation=true';
/** Lease 5 s, renew deadline 3 s, retry 500 ms: a leader gives up ≥ 1.5 s before a standby may take over. */
const LEASE = [
  '--leader-elect-lease-duration=5s',
  '--leader-elect-renew-deadline=3s',
  '--leader-elect-retry-period=500ms',
];
const GAUGE = 'leader_election_master_status{name="cloud-route-controller"}';

/** The i-th of 512 /25s of 10.244.0.0/16. */
const podCIDR = (i: number): string => `10.244.${i >> 1}.${(i & 1) * 128}/25`;

describe('process faults (real executable)', { timeout: 420_000 }, () => {
  let cp: ControlPlane | undefined;
  let admin: TrackedAdmin;
  let kubeconfig = '';
  const daemons: Daemon[] = [];
  const clouds: CloudFiles[] = [];
  const proxies: TcpProxy[] = [];

  before(async () => {
    if (!enabled) return;
    cp = await startControlPlane();
    admin = new TrackedAdmin(cp.adminKubeconfig);
    kubeconfig = await setupControllerUser(cp);
  });

  after(async () => {
    for (const d of daemons) await d.kill();
    for (const p of proxies) await p.stop();
    await cp?.stop();
    for (const c of clouds) fs.rmSync(c.dir, { recursive: true, force: true });
  });

  function cloud(latency: string): CloudFiles {
    const c = memoryCloud(latency);
    clouds.push(c);
    return c;
  }

  function start(c: CloudFiles, name: string, extra: string[], kc = kubeconfig): Daemon {
    const d = Daemon.start(
      [
        'run',
        '--cloud-provider=memory',
        `--cloud-config=${c.config}`,
        `--kubeconfig=${kc}`,
        `--cluster-cidr=${CIDRS.join(',')}`,
        '--metrics-bind-address=127.0.0.1:0',
        '--health-probe-bind-address=127.0.0.1:0',
        '--log-format=json',
        WATCH,
        ...extra,
      ],
      path.join(c.dir, `${name}.log`),
    );
    daemons.push(d);
    return d;
  }

  async function createNodes(prefix: string, from: number, n: number): Promise<void> {
    const todo = Array.from({ length: n }, (_, i) => from + i);
    await Promise.all(
      Array.from({ length: 8 }, async () => {
        for (let i = todo.shift(); i !== undefined; i = todo.shift())
          await admin.createNode(`${prefix}${i}`, [podCIDR(i)], internalIP(`10.9.${i >> 8}.${i & 255}`));
      }),
    );
  }

  const okCreates = (log: readonly CloudCall[], pid?: number): number =>
    log.filter((c) => c.op === 'create' && c.outcome === 'ok' && (pid === undefined || c.pid === pid)).length;

  async function deleteAllNodes(): Promise<void> {
    const names = (await admin.nodes()).map((n) => n.metadata.name);
    await Promise.all(
      Array.from({ length: 8 }, async () => {
        for (let n = names.shift(); n !== undefined; n = names.shift()) await admin.deleteNode(n);
      }),
    );
  }

  const dump = (err: unknown): never => {
    cp?.markFailed(String(err));
    for (const d of daemons) console.log(`---- ${d.logFile} (pid ${d.pid})\n${d.tail(25)}`);
    throw err;
  };

  test(
    'SIGKILL in the middle of a 500-route reconcile, then a restart: converges, no duplicate create, nothing deleted',
    { timeout: 180_000 },
    async (t) => {
      if (!enabled || cp === undefined) return void requireTestenv(t);
      try {
        await createNodes('k', 0, 500);
        const c = cloud('10ms');
        const first = start(c, 'first', ['--leader-elect=false']);
        await waitFor('150 routes created', 60_000, () => okCreates(fileCallLog(c)) >= 150, 50);
        first.signal('SIGKILL');
        assert.deepEqual(await first.waitExit(5_000), { code: null, signal: 'SIGKILL' });
        const atKill = fileEntries(c).length;
        t.diagnostic(`killed with ${atKill} of 500 routes created`);
        assert.ok(atKill < 500, 'killed mid-reconcile');

        const second = start(c, 'second', ['--leader-elect=false']);
        await waitConverged('500 routes and conditions', 90_000, admin, () => fileEntries(c), {
          clusterCIDRs: CIDRS,
        });
        const log = fileCallLog(c);
        assertCallLog(log, { clusterCIDRs: CIDRS, history: admin.history });
        // Each route created exactly once; at most one (the call cut by the kill after
        // its save, before its log line) exists without a logged create.
        const perDest = new Map<string, number>();
        for (const x of log.filter((y) => y.op === 'create' && y.outcome === 'ok'))
          perDest.set(x.destinationCIDR!, (perDest.get(x.destinationCIDR!) ?? 0) + 1);
        assert.ok(
          [...perDest.values()].every((n) => n === 1),
          'a route was created twice',
        );
        assert.ok(perDest.size >= 499, `${perDest.size} logged creates`);
        assert.equal(okCreates(log, second.pid), 500 - atKill);
        assert.deepEqual(
          log.filter((x) => x.op === 'delete'),
          [],
        );
        second.signal('SIGTERM');
        assert.deepEqual(await second.waitExit(30_000), { code: 0, signal: null });
      } catch (err) {
        dump(err);
      } finally {
        await deleteAllNodes();
      }
    },
  );

  /** Diagnostics of the handover tests. */
  const t0diag: string[] = [];

  async function leading(d: Daemon): Promise<boolean> {
    try {
      const port = await d.port('metrics', 1_000);
      return metricValue((await httpGet(port, '/metrics')).body, GAUGE) === 1;
    } catch {
      return false;
    }
  }

  /**
   * Two replicas, A the leader; 100 nodes make A start a slow reconcile; after
   * 30 creates `fault(A)` strikes. B must finish the job, and never overlap A.
   */
  async function handover(
    name: string,
    kcA: string,
    latency: string,
    fault: (a: Daemon) => Promise<void>,
  ): Promise<{ a: Daemon; b: Daemon; log: CloudCall[] }> {
    const c = cloud(latency);
    const a = start(c, `${name}-a`, LEASE, kcA);
    await waitFor('A leads', 20_000, () => leading(a), 100);
    const b = start(c, `${name}-b`, LEASE);
    await waitFor('B ready', 20_000, async () => {
      return (await httpGet(await b.port('health probes'), '/readyz')).status === 200;
    });
    assert.equal(await leading(b), false);
    // A reconciles while the nodes are still being created: count its creates meanwhile, or on a
    // slow machine it may be far past 30 (even done) before the fault strikes.
    const creating = createNodes(`${name}`, 0, 100);
    void creating.catch(() => {}); // a failure surfaces at the await below, not as unhandled
    try {
      await waitFor('A created 30 routes', 30_000, () => okCreates(fileCallLog(c), a.pid) >= 30, 20);
      await fault(a);
    } finally {
      await creating;
    }
    await waitConverged('100 routes and conditions', 60_000, admin, () => fileEntries(c), {
      clusterCIDRs: CIDRS,
    });
    const log = fileCallLog(c);
    const sw = checkSingleWriter(log);
    assert.deepEqual(sw.violations, []);
    assert.deepEqual(sw.order, [a.pid, b.pid]);
    const lastA = Math.max(...log.filter((x) => x.pid === a.pid).map((x) => x.end));
    const firstB = Math.min(...log.filter((x) => x.pid === b.pid).map((x) => x.start));
    t0diag.push(`${name}: A's last call ended ${firstB - lastA} ms before B's first call`);
    assertCallLog(log, { clusterCIDRs: CIDRS, history: admin.history });
    assert.deepEqual(
      log.filter((x) => x.op === 'delete'),
      [],
    );
    assert.ok(okCreates(log, b.pid) > 0 && okCreates(log, a.pid) + okCreates(log, b.pid) <= 101);
    return { a, b, log };
  }

  test(
    'two replicas: leader SIGKILLed mid-reconcile; the standby finishes, never overlapping',
    { timeout: 120_000 },
    async (t) => {
      if (!enabled || cp === undefined) return void requireTestenv(t);
      try {
        const { b } = await handover('sk', kubeconfig, '30ms', async (a) => {
          a.signal('SIGKILL');
          await a.waitExit(5_000);
        });
        t.diagnostic(t0diag.join('; '));
        b.signal('SIGTERM');
        assert.deepEqual(await b.waitExit(30_000), { code: 0, signal: null });
      } catch (err) {
        dump(err);
      } finally {
        await deleteAllNodes();
      }
    },
  );

  test(
    'two replicas: leader partitioned from the apiserver mid-reconcile stops (exit 1) before the standby starts',
    { timeout: 120_000 },
    async (t) => {
      if (!enabled || cp === undefined) return void requireTestenv(t);
      const proxy = new TcpProxy(cp.server);
      proxies.push(proxy);
      await proxy.start();
      const kcA = path.join(cp.dir, 'partitioned.kubeconfig');
      fs.writeFileSync(kcA, kubeconfigVia(fs.readFileSync(kubeconfig, 'utf8'), proxy.url), { mode: 0o600 });
      try {
        t0diag.length = 0;
        let cutAt = 0;
        // 60 ms a call: A, whose cloud is not behind the proxy, is still creating when it gives up.
        const { a, b, log } = await handover('pt', kcA, '60ms', async () => {
          cutAt = Date.now();
          proxy.setMode('blackhole');
        });
        t.diagnostic(t0diag.join('; '));
        assert.deepEqual(await a.waitExit(10_000), { code: 1, signal: null });
        const lost = a.logs().find((r) => r.msg === 'leaderelection lost');
        assert.ok(lost, 'A logged leaderelection lost');
        const lostAt = lost.ts * 1000;
        t.diagnostic(`A lost the lease ${Math.round(lostAt - cutAt)} ms after the cut`);
        const late = log.filter(
          (x) => x.pid === a.pid && x.op !== 'list' && x.outcome === 'ok' && x.end > lostAt,
        );
        assert.deepEqual(late, [], 'no cloud mutation after leadership was lost');
        b.signal('SIGTERM');
        assert.deepEqual(await b.waitExit(30_000), { code: 0, signal: null });
      } catch (err) {
        dump(err);
      } finally {
        await deleteAllNodes();
      }
    },
  );
});
