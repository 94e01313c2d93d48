// Two replicas of the real executable share one memory cloud (state file +
// call log) and one Lease on a real apiserver: only the leader calls the
// cloud; SIGKILL hands over within the lease duration, SIGTERM within a few
// seconds (the Lease is released); losing the apiserver ends the leader (R62).
// Throughout, no route is created twice or deleted, and the call log shows
// no two replicas acting at the same time.
import assert from 'node:assert/strict';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { after, before, describe, test } from 'node:test';
import { requireTestenv, startControlPlane, testenvBinaries } from '../support/controlplane.ts';
import type { ControlPlane } from '../support/controlplane.ts';
import { Admin, internalIP, setupControllerUser, waitFor } from '../integration/kube-helpers.ts';
import {
  assertSingleWriter,
  calls,
  Daemon,
  FAST_LEASE,
  httpGet,
  LEASE_MS,
  memoryCloud,
  metricValue,
  routes,
  sleep,
  type CloudFiles,
} from './support.ts';

const enabled = testenvBinaries() !== undefined;
const GAUGE = 'leader_election_master_status{name="cloud-route-controller"}';
const NODES = ['node-1', 'node-2', 'node-3'];
const EXPECTED = ['10.244.1.0/24->node-1', '10.244.2.0/24->node-2', '10.244.3.0/24->node-3'];

interface Replica {
  readonly daemon: Daemon;
  readonly metricsPort: number;
  readonly healthPort: number;
}

describe('two replicas with leader election', { timeout: 180_000 }, () => {
  let cp: ControlPlane | undefined;
  let kubeconfig: string;
  let cloud: CloudFiles;
  let admin: Admin;
  const all: Daemon[] = [];
  let standby: Replica | undefined;

  before(async () => {
    if (!enabled) return;
    cp = await startControlPlane();
    admin = new Admin(cp.adminKubeconfig);
    kubeconfig = await setupControllerUser(cp);
    for (const [i, n] of NODES.entries())
      await admin.createNode(n, [`10.244.${i + 1}.0/24`], internalIP(`10.0.0.${i + 1}`));
    cloud = memoryCloud('30ms');
  });

  after(async () => {
    for (const d of all) await d.kill();
    await cp?.stop();
    if (cloud) fs.rmSync(cloud.dir, { recursive: true, force: true });
  });

  const guard = (t: Parameters<typeof requireTestenv>[0]): boolean => {
    if (enabled && cp !== undefined) return true;
    requireTestenv(t);
    return false;
  };

  const failed = (err: unknown): never => {
    cp?.markFailed(String(err));
    for (const d of all) console.log(`---- replica ${d.pid}\n${d.tail(25)}`);
    throw err;
  };

  async function start(name: string): Promise<Replica> {
    const daemon = Daemon.start(
      [
        'run',
        '--cloud-provider=memory',
        `--cloud-config=${cloud.config}`,
        `--kubeconfig=${kubeconfig}`,
        '--cluster-cidr=10.244.0.0/16',
        '--route-reconciliation-period=1s',
        '--metrics-bind-address=127.0.0.1:0',
        '--health-probe-bind-address=127.0.0.1:0',
        '--log-format=json',
        ...FAST_LEASE,
      ],
      path.join(cloud.dir, `${name}.log`),
    );
    all.push(daemon);
    return {
      daemon,
      metricsPort: await daemon.port('metrics'),
      healthPort: await daemon.port('health probes'),
    };
  }

  async function leading(r: Replica): Promise<boolean> {
    try {
      return metricValue((await httpGet(r.metricsPort, '/metrics')).body, GAUGE) === 1;
    } catch {
      return false;
    }
  }

  function assertNoDuplicates(): void {
    const made = calls(cloud);
    const creates = made
      .filter((c) => c.op === 'create')
      .map((c) => c.destinationCIDR)
      .sort();
    assert.deepEqual(
      creates,
      ['10.244.1.0/24', '10.244.2.0/24', '10.244.3.0/24'],
      'each route created exactly once',
    );
    assert.deepEqual(
      made.filter((c) => c.op === 'delete'),
      [],
      'no route deleted',
    );
    assertSingleWriter(made);
    assert.deepEqual(routes(cloud), EXPECTED);
  }

  test(
    'only the leader acts; SIGKILL of the leader hands over within the lease duration',
    { timeout: 90_000 },
    async (t) => {
      if (!guard(t)) return;
      try {
        const [a, b] = await Promise.all([start('a'), start('b')]);
        await waitFor('a leader', 20_000, async () => (await leading(a)) || (await leading(b)), 100);
        const [leader, other] = (await leading(a)) ? [a, b] : [b, a];
        await waitFor('routes created', 20_000, () => routes(cloud).length === 3, 100);
        for (const n of NODES)
          await waitFor(
            `${n} condition`,
            20_000,
            async () => (await admin.condition(n))?.reason === 'RouteCreated',
          );
        const lists = (): number => calls(cloud).filter((c) => c.op === 'list').length;
        await waitFor('several periodic reconciles by the leader', 10_000, () => lists() >= 3, 100);
        // The standby is warm and ready, but silent.
        assert.equal(await leading(other), false);
        assert.deepEqual(await httpGet(other.healthPort, '/readyz'), { status: 200, body: 'ok' });
        const before = calls(cloud);
        assert.deepEqual(
          [...new Set(before.map((c) => c.pid))],
          [leader.daemon.pid],
          'only the leader called the cloud',
        );

        const killedAt = Date.now();
        leader.daemon.signal('SIGKILL');
        await leader.daemon.waitExit(5_000);
        await waitFor('standby takes over', LEASE_MS + 5_000, () => leading(other), 100);
        const tookOver = Date.now() - killedAt;
        t.diagnostic(`SIGKILL → new leader after ${tookOver} ms (lease duration ${LEASE_MS} ms)`);
        assert.ok(tookOver <= LEASE_MS + 3_000, `takeover after ${tookOver} ms`);
        await waitFor(
          'new leader lists',
          10_000,
          () => calls(cloud).some((c) => c.pid === other.daemon.pid),
          100,
        );
        const firstCall = calls(cloud).find((c) => c.pid === other.daemon.pid)!;
        assert.ok(firstCall.start >= killedAt, 'the new leader acted only after the old one was gone');
        await sleep(1_500);
        assert.deepEqual(assertSingleWriter(calls(cloud)), [leader.daemon.pid, other.daemon.pid]);
        assertNoDuplicates();
        standby = other;
      } catch (err) {
        failed(err);
      }
    },
  );

  test(
    'SIGTERM releases the Lease: a new standby takes over within seconds, exit 0',
    { timeout: 60_000 },
    async (t) => {
      if (!guard(t) || standby === undefined) return;
      try {
        const leader = standby;
        const next = await start('c');
        await waitFor(
          'c ready',
          20_000,
          async () => (await httpGet(next.healthPort, '/readyz')).status === 200,
          100,
        );
        assert.equal(await leading(next), false);
        const termAt = Date.now();
        leader.daemon.signal('SIGTERM');
        const exit = await leader.daemon.waitExit(30_000);
        assert.deepEqual(exit, { code: 0, signal: null });
        assert.ok(
          leader.daemon
            .logs()
            .some((r) => /^released leader lease kube-system\/cloud-route-controller/.test(r.msg)),
        );
        await waitFor('c takes over', 10_000, () => leading(next), 100);
        const handover = Date.now() - termAt;
        t.diagnostic(`SIGTERM → new leader after ${handover} ms`);
        assert.ok(handover < 3_500, `handover after ${handover} ms (lease duration ${LEASE_MS} ms)`);
        await waitFor('c lists', 10_000, () => calls(cloud).some((c) => c.pid === next.daemon.pid), 100);
        await sleep(1_500);
        const order = assertSingleWriter(calls(cloud));
        assert.deepEqual(order.slice(-2), [leader.daemon.pid, next.daemon.pid]);
        assertNoDuplicates();
        standby = next;
      } catch (err) {
        failed(err);
      }
    },
  );

  test(
    'R62: a leader that cannot renew logs "leaderelection lost" and exits 1',
    { timeout: 60_000 },
    async (t) => {
      if (!guard(t) || standby === undefined) return;
      try {
        const leader = standby;
        assert.equal(await leading(leader), true);
        const stoppedAt = Date.now();
        await cp!.stopApiserver();
        const exit = await leader.daemon.waitExit(20_000);
        const after = Date.now() - stoppedAt;
        assert.deepEqual(exit, { code: 1, signal: null });
        assert.ok(leader.daemon.logs().some((r) => r.level === 'error' && r.msg === 'leaderelection lost'));
        // Renew deadline 3 s after a retry period of 500 ms, plus detection; never near a second lease.
        t.diagnostic(`apiserver stopped → leader exited 1 after ${after} ms`);
        assert.ok(after < LEASE_MS + 2_000, `exited ${after} ms after the apiserver stopped`);
        const lostAt = leader.daemon.logs().find((r) => r.msg === 'leaderelection lost')!.ts * 1000;
        const late = calls(cloud).filter(
          (c) => c.pid === leader.daemon.pid && c.op !== 'list' && c.start > lostAt,
        );
        assert.deepEqual(late, [], 'no cloud mutation after leadership was lost');
        assertNoDuplicates();
      } catch (err) {
        failed(err);
      }
    },
  );
});
