// Apiserver and network faults with the controller in-process (watch mode) as
// the user of deploy/base/rbac.yaml: three apiserver restarts during a stream of
// node changes; a partition (through a TCP proxy) during which nodes change
// and etcd is compacted, so the resumed watch gets 410 Gone; and established
// connections silently dropped, which only the informer's watchdog (R57) can
// notice. The watch cache is off so that 410s are real and deterministic.
import assert from 'node:assert/strict';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { after, before, describe, test } from 'node:test';
import { requireTestenv, startControlPlane, testenvBinaries } from '../support/controlplane.ts';
import type { ControlPlane } from '../support/controlplane.ts';
import { internalIP, setupControllerUser, waitFor } from '../integration/kube-helpers.ts';
import { startFaultController, type FaultController } from './controller.ts';
import { faultScenario } from './scenario.ts';
import { AuditedMemoryRoutes, TrackedAdmin } from './support.ts';
import { kubeconfigVia, TcpProxy } from './tcp-proxy.ts';

const enabled = testenvBinaries() !== undefined;
const sleep = (ms: number): Promise<void> => new Promise((r) => setTimeout(r, ms));
/** Short watches and watchdog so a half-open watch is noticed within seconds, not minutes. */
const FAST_INFORMER = {
  watchTimeoutSeconds: { min: 3, max: 4 },
  watchdogGraceMs: 2_000,
  backoff: { initialMs: 250, maxMs: 2_000 },
};

/**
 * Waits until the informer's watch has been open 500 ms (its fresh connection is accepted by now)
 * and has 1.5 s left before its timeoutSeconds: silencing the established connections then surely
 * catches it. Silenced in the few ms between two watches, the next watch would go through.
 */
async function midWatch(rc: FaultController): Promise<void> {
  await waitFor(
    'a watch open for 500 ms with 1.5 s left',
    15_000,
    () => {
      const w = rc.currentWatch();
      return w !== undefined && w.openMs >= 500 && w.remainingMs >= 1_500;
    },
    20,
  );
}

describe('apiserver and network faults', { timeout: 400_000 }, () => {
  let cp: ControlPlane | undefined;
  let admin: TrackedAdmin;
  let kubeconfig = '';
  let proxy: TcpProxy | undefined;
  let proxied = '';

  before(async () => {
    if (!enabled) return;
    cp = await startControlPlane({ watchCacheDisabled: true });
    admin = new TrackedAdmin(cp.adminKubeconfig);
    kubeconfig = await setupControllerUser(cp);
    proxy = new TcpProxy(cp.server);
    await proxy.start();
    proxied = path.join(cp.dir, 'proxied.kubeconfig');
    fs.writeFileSync(proxied, kubeconfigVia(fs.readFileSync(kubeconfig, 'utf8'), proxy.url), { mode: 0o600 });
  });

  after(async () => {
    await proxy?.stop();
    await cp?.stop();
  });

  const start =
    (kc: () => string) =>
    (cloud: AuditedMemoryRoutes): FaultController =>
      startFaultController({ kubeconfig: kc(), watch: true, cloud, informer: FAST_INFORMER });

  test(
    'three apiserver restarts during a stream of node changes: converges, nothing wrongly deleted',
    { timeout: 180_000 },
    async (t) => {
      if (!enabled || cp === undefined) return void requireTestenv(t);
      await faultScenario(
        {
          t,
          cp,
          admin,
          cloud: new AuditedMemoryRoutes(),
          start: start(() => kubeconfig),
          convergeMs: 60_000,
        },
        async (rc) => {
          const stop = new AbortController();
          let applied = 0;
          let refused = 0;
          const live: string[] = [];
          const stream = (async () => {
            for (let i = 1; !stop.signal.aborted; i++) {
              try {
                if (i % 4 === 0 && live.length > 2) {
                  const victim = live.splice(Math.floor(live.length / 2), 1)[0]!;
                  await admin.deleteNode(victim);
                } else if (i % 4 === 1 && live.length > 0) {
                  await admin.patchStatus(live[0]!, {
                    addresses: [{ type: 'InternalIP', address: `10.5.9.${i % 250}` }],
                  });
                } else {
                  await admin.createNode(
                    `r${i}`,
                    [`10.244.${100 + (i % 150)}.0/24`],
                    internalIP(`10.5.0.${i % 250}`),
                  );
                  live.push(`r${i}`);
                }
                applied++;
              } catch {
                refused++; // the apiserver is down; the stream goes on
              }
              await sleep(300);
            }
          })();
          for (let k = 0; k < 3; k++) {
            await sleep(2_500);
            await cp!.restartApiserver();
          }
          await sleep(2_000);
          // How many changes fit between the restarts depends on the machine's speed: the
          // stream goes on until it has made enough, not for a fixed time.
          await waitFor('more than 10 changes applied', 30_000, () => applied > 10);
          stop.abort();
          await stream;
          t.diagnostic(`stream: ${applied} changes applied, ${refused} refused while the apiserver was down`);
          assert.ok(refused > 0 && applied > 10);
          await waitFor('three informer restarts', 30_000, async () => {
            return (await rc.restarts('watch_error')) + (await rc.restarts('list_error')) >= 3;
          });
        },
      );
    },
  );

  test(
    'partition, nodes changed and etcd compacted meanwhile: watchdog, 410 Gone, relist, converges',
    { timeout: 90_000 },
    async (t) => {
      if (!enabled || cp === undefined || proxy === undefined) return void requireTestenv(t);
      const p = proxy;
      await faultScenario(
        { t, cp, admin, cloud: new AuditedMemoryRoutes(), start: start(() => proxied), convergeMs: 40_000 },
        async (rc, cloud) => {
          for (const i of [1, 2, 3])
            await admin.createNode(`g${i}`, [`10.244.${30 + i}.0/24`], internalIP(`10.6.0.${i}`));
          await waitFor('three routes', 20_000, () => cloud.snapshot().length === 3);
          p.setMode('blackhole');
          await admin.deleteNode('g2');
          await admin.createNode('g4', ['10.244.34.0/24'], internalIP('10.6.0.4'));
          await admin.patchStatus('g1', { addresses: [{ type: 'InternalIP', address: '10.6.1.1' }] });
          await cp!.compactEtcd();
          await sleep(3_000);
          assert.deepEqual(
            cloud
              .entries()
              .map((r) => r.targetNode)
              .sort(),
            ['g1', 'g2', 'g3'],
            'nothing happens while partitioned',
          );
          p.setMode('forward');
          await waitFor('watchdog and 410 relist', 30_000, async () => {
            return (await rc.restarts('watchdog')) >= 1 && (await rc.restarts('gone')) >= 1;
          });
          assert.ok(rc.logger.messages().some((m) => m.startsWith('Node watch expired, relisting')));
        },
      );
    },
  );

  test(
    'established connections silently dropped: the watchdog (R57) re-establishes the watch',
    { timeout: 90_000 },
    async (t) => {
      if (!enabled || cp === undefined || proxy === undefined) return void requireTestenv(t);
      const p = proxy;
      await faultScenario(
        { t, cp, admin, cloud: new AuditedMemoryRoutes(), start: start(() => proxied), convergeMs: 40_000 },
        async (rc, cloud) => {
          await admin.createNode('b1', ['10.244.51.0/24'], internalIP('10.7.0.1'));
          await waitFor('b1 route', 20_000, () => cloud.snapshot().length === 1);
          const dogs = await rc.restarts('watchdog');
          await midWatch(rc);
          const accepted = p.accepted;
          const silenced = p.silenceEstablished();
          assert.ok(silenced >= 1, 'the watch connection was open');
          const at = Date.now();
          await admin.createNode('b2', ['10.244.52.0/24'], internalIP('10.7.0.2'));
          await waitFor('b2 route', 30_000, () => cloud.snapshot().some((r) => r.targetNode === 'b2'));
          const took = Date.now() - at;
          const restarts = (await rc.restarts('watchdog')) - dogs;
          t.diagnostic(
            `b2 routed ${took} ms after the connections went silent; ${restarts} watchdog restart(s)`,
          );
          assert.ok((await rc.restarts('watchdog')) > dogs, 'only the watchdog could see the dead watch');
          assert.ok(p.accepted > accepted, 'the client reconnected');
          // timeoutSeconds (≤ 4 s) + grace (2 s), plus a reconcile.
          assert.ok(took < 12_000, `${took} ms`);
        },
      );
    },
  );

  test(
    'after a watchdog restart the next watch is not sent over another dead pooled connection',
    // Regression: watches used to share the keep-alive pool, so the retry after a
    // watchdog restart could land on another dead idle socket and wait a whole
    // timeoutSeconds + grace again (6–11 min in production per dead socket).
    { timeout: 60_000 },
    async (t) => {
      if (!enabled || cp === undefined || proxy === undefined) return void requireTestenv(t);
      const p = proxy;
      const cloud = new AuditedMemoryRoutes();
      const rc = start(() => proxied)(cloud);
      try {
        await admin.createNode('d1', ['10.244.61.0/24'], internalIP('10.8.0.1'));
        // A condition write leaves an idle keep-alive socket in the pool beside the watch.
        await waitFor(
          'd1 condition',
          20_000,
          async () => (await admin.condition('d1'))?.reason === 'RouteCreated',
        );
        const dogs = await rc.restarts('watchdog');
        await midWatch(rc);
        p.silenceEstablished();
        await admin.createNode('d2', ['10.244.62.0/24'], internalIP('10.8.0.2'));
        await waitFor('d2 route', 30_000, () => cloud.snapshot().some((r) => r.targetNode === 'd2'));
        assert.equal((await rc.restarts('watchdog')) - dogs, 1, 'one watchdog restart must be enough');
      } finally {
        await rc.stop();
        for (const n of await admin.nodes()) await admin.deleteNode(n.metadata.name);
      }
    },
  );
});
