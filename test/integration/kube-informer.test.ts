/**
 * Node informer robustness on a real kube-apiserver (SPEC R54–R59): apiserver
 * restart mid-run, bookmarks and server-closed watches, 403 until granted,
 * 410 Gone after etcd compaction (watch cache off) with no lost deletion, and
 * an expired LIST continue token.
 */
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { MemoryRoutes } from '../../src/cloud/memory/memory-routes.ts';
import { MemoryLogger, type NodeEventHandler } from '../../src/core/ports.ts';
import { createKubeClient } from '../../src/kube/kubeconfig.ts';
import { transformNode } from '../../src/kube/node-cache.ts';
import { NodeInformer } from '../../src/kube/node-informer.ts';
import { kubeNodeListWatch, type NodeListWatch } from '../../src/kube/node-transport.ts';
import { apiRequest, requireTestenv, startControlPlane, testenvBinaries } from '../support/controlplane.ts';
import type { ControlPlane } from '../support/controlplane.ts';
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

/** Wraps a list/watch to count what the informer really asked for and got. */
function observed(inner: NodeListWatch, beforeList?: (p: { continue?: string }) => Promise<void>) {
  const lists: { limit: number; continue?: string; status: number | 'ok' }[] = [];
  const watches: { resourceVersion: string; timeoutSeconds: number }[] = [];
  const events: Record<string, number> = {};
  const lw: NodeListWatch = {
    async list(p, signal, onItem) {
      await beforeList?.(p);
      try {
        const page = await inner.list(p, signal, onItem);
        lists.push({ ...p, status: 'ok' });
        return page;
      } catch (err) {
        lists.push({ ...p, status: (err as { statusCode?: number }).statusCode ?? 0 });
        throw err;
      }
    },
    watch(p, signal, onEvent) {
      watches.push(p);
      return inner.watch(p, signal, (e) => {
        events[e.type] = (events[e.type] ?? 0) + 1;
        onEvent(e);
      });
    },
  };
  return { lw, lists, watches, events };
}

function handlerLog(): { log: string[]; handler: NodeEventHandler } {
  const log: string[] = [];
  return {
    log,
    handler: {
      onAdd: (n) => log.push(`add:${n.metadata?.name}`),
      onUpdate: (_o, n) => log.push(`update:${n.metadata?.name}`),
      onDelete: (n, tomb) => log.push(`delete:${n.metadata?.name}${tomb ? ':tombstone' : ''}`),
    },
  };
}

async function restarts(rc: RunningController, reason: string): Promise<number> {
  const m = await rc.metrics.informerRestarts.get();
  return m.values.find((v) => v.labels['reason'] === reason)?.value ?? 0;
}

describe('node informer on a real apiserver (watch cache on)', { timeout: 150_000 }, () => {
  let cp: ControlPlane | undefined;
  let admin: Admin;
  let kubeconfig = '';

  before(async () => {
    if (!enabled) return;
    // Bookmarks need the watch cache's RV to move without node events: see the bookmark test.
    cp = await startControlPlane({ etcdProgressNotifyMs: 1_000 });
    admin = new Admin(cp.adminKubeconfig);
    kubeconfig = await setupControllerUser(cp);
  });

  after(async () => {
    await cp?.stop();
  });

  for (const watch of [true, false]) {
    const mode = watch ? 'watch' : 'periodic';
    test(`${mode} mode: apiserver stopped and restarted mid-run`, { timeout: 60_000 }, async (t) => {
      if (!enabled || cp === undefined) return void requireTestenv(t);
      const p = `${mode[0]}`;
      const cloud = new MemoryRoutes({ random: testRandom('cloud') });
      const rc = startController({
        kubeconfig,
        watch,
        cloud,
        informer: { backoff: { initialMs: 250, maxMs: 2000 } },
      });
      try {
        const base = watch ? 10 : 20;
        await admin.createNode(`${p}-a`, [`10.244.${base}.0/24`], internalIP('10.1.0.1'));
        await admin.createNode(`${p}-b`, [`10.244.${base + 1}.0/24`], internalIP('10.1.0.2'));
        const mine = (): string[] => routeList(cloud).filter((r) => r.includes(`->${p}-`));
        await waitFor('initial routes', 20_000, () => mine().length === 2);
        assert.deepEqual(mine(), [`10.244.${base}.0/24->${p}-a`, `10.244.${base + 1}.0/24->${p}-b`]);
        // The reconcile patches the conditions after the routes are visible. A patch still to come
        // when the apiserver stops (or, in periodic mode, a repeat by a reconcile whose node cache
        // has not seen it yet) would fail with ECONNREFUSED at Error. So stop only once the informer
        // holds both conditions and no reconcile is running: later reconciles write nothing.
        await waitFor(
          'conditions written and seen by the informer, no reconcile running',
          20_000,
          () =>
            [`${p}-a`, `${p}-b`].every(
              (n) =>
                rc.informer
                  .get(n)
                  ?.status?.conditions?.some(
                    (c) =>
                      c.type === 'NetworkUnavailable' && c.status === 'False' && c.reason === 'RouteCreated',
                  ) === true,
            ) && rc.controller.status().reconcileStartedAt === undefined,
        );

        await cp.stopApiserver();
        await waitFor(
          'informer noticed the outage',
          15_000,
          async () => (await restarts(rc, 'watch_error')) > 0,
        );
        const refused = (): typeof rc.logger.records =>
          rc.logger.records.filter((r) => r.msg.includes('ECONNREFUSED'));
        await waitFor('a few backoff rounds against the dead port', 15_000, () => refused().length >= 2);
        await cp.startApiserver();
        await admin.createNode(`${p}-c`, [`10.244.${base + 2}.0/24`], internalIP('10.1.0.3'));
        await waitFor('route for a node created after the outage', 30_000, () => mine().length === 3);
        await waitFor(`${p}-c NetworkUnavailable=False`, 20_000, async () => {
          return (await admin.condition(`${p}-c`))?.reason === 'RouteCreated';
        });
        await admin.createNode(`${p}-d`, [`10.244.${base + 3}.0/24`], internalIP('10.1.0.4'));
        await waitFor('route for a later node', 20_000, () => mine().length === 4);
        assert.deepEqual(
          cloud.calls.filter((c) => c.op === 'delete').map((c) => c.destinationCIDR),
          [],
          'no route of a live node was deleted',
        );
        assert.ok(rc.informer.hasSynced());
        // Refused connections are warnings; a 403 while the restarted apiserver's RBAC cache
        // warms up would be an Error (R54), which is fine.
        assert.ok(
          refused().every((r) => r.level === 'warn'),
          refused()
            .map((r) => `${r.level} ${r.msg}`)
            .join('\n'),
        );
      } catch (err) {
        cp.markFailed(String(err));
        console.log(
          rc.logger.records
            .slice(-30)
            .map((r) => `${r.level} ${r.msg}`)
            .join('\n'),
        );
        throw err;
      } finally {
        await rc.stop();
      }
    });
  }

  test(
    'bookmarks advance the RV silently; server-closed watches resume without a relist',
    { timeout: 50_000 },
    async (t) => {
      if (!enabled || cp === undefined) return void requireTestenv(t);
      const client = createKubeClient({ kubeconfig });
      const o = observed(kubeNodeListWatch(client));
      const logger = new MemoryLogger(4);
      const informer = new NodeInformer({ listWatch: o.lw, logger, watchTimeoutSeconds: { min: 5, max: 5 } });
      const h = handlerLog();
      informer.addEventHandler(h.handler);
      informer.start();
      try {
        await informer.waitForSync(AbortSignal.timeout(10_000));
        const nodeRVs = informer.list().map((n) => Number(n.metadata?.resourceVersion));
        const listed = h.log.length;
        // The watch cache sends a watch one bookmark, 2 s before its deadline, and only with an
        // RV newer than the watch's. Without node changes the cache's RV moves only on etcd
        // progress notifications: those a consistent LIST served from the cache requests, and
        // etcd's periodic ones, set to 1 s for this control plane. The first alone failed under
        // load after the restarts above: the apiserver sent every LIST to etcd (it serves them
        // from the cache only once an asynchronous check after its start has found etcd able to
        // report progress), and no bookmark came in 30 s. So: move etcd's revision with writes,
        // and wait for the bookmark itself, not for a number of watches.
        let bumping = true;
        const bumps = (async () => {
          while (bumping) {
            await apiRequest(cp!.adminKubeconfig, 'POST', '/api/v1/namespaces/default/configmaps', {
              metadata: { generateName: 'bump-' },
            });
            await apiRequest(cp!.adminKubeconfig, 'GET', '/api/v1/nodes?limit=1');
            await new Promise((r) => setTimeout(r, 200));
          }
        })();
        try {
          await waitFor(
            'a bookmark and three watches',
            30_000,
            () => (o.events['BOOKMARK'] ?? 0) >= 1 && o.watches.length >= 3,
          );
        } catch (err) {
          const m = await apiRequest(cp.adminKubeconfig, 'GET', '/metrics');
          const lines = m.body
            .split('\n')
            .filter((l) =>
              /^apiserver_(watch_cache_consistent_read_total|watch_cache_resource_version|cache_list_total|storage_list_total)\b.*"nodes"/.test(
                l,
              ),
            );
          throw new Error(
            `${(err as Error).message}; events ${JSON.stringify(o.events)}, watches ${JSON.stringify(o.watches)}\n${lines.join('\n')}`,
            { cause: err },
          );
        } finally {
          bumping = false;
          await bumps;
        }
        assert.equal(o.lists.length, 1, 'no relist after a server-side watch timeout');
        assert.equal(h.log.length, listed, 'bookmarks emit nothing');
        assert.ok(Number(informer.resourceVersion) > Math.max(...nodeRVs), 'the RV moved past every node');
        assert.equal(o.watches.at(-1)?.resourceVersion, informer.resourceVersion ?? 'x');
        assert.equal(o.watches[0]?.timeoutSeconds, 5);
      } finally {
        await informer.stop();
        client.close();
      }
    },
  );

  test(
    'R110: a protobuf LIST reads every node as its JSON does; its errors stay readable',
    { timeout: 30_000 },
    async (t) => {
      if (!enabled || cp === undefined) return void requireTestenv(t);
      const now = new Date().toISOString().replace(/\.\d+Z$/, 'Z');
      await admin.createNode(
        'pb-dual',
        ['10.244.90.0/24', 'fd00:10:244:90::/64'],
        [
          { type: 'InternalIP', address: '10.9.0.1' },
          { type: 'InternalIP', address: 'fd00:9::1' },
          { type: 'Hostname', address: 'pb-dual' },
        ],
      );
      const networkOK = {
        type: 'NetworkUnavailable',
        status: 'False',
        reason: 'RouteCreated',
        message: 'ルート ok',
        lastHeartbeatTime: now,
        lastTransitionTime: now,
      };
      await admin.patchStatus('pb-dual', { conditions: [networkOK] });
      await admin.createNode('pb-bare', []);
      await admin.patchNode('pb-bare', { metadata: { annotations: { note: 'x'.repeat(20_000) } } });
      const client = createKubeClient({ kubeconfig });
      const seen: string[] = [];
      const inner = client.requestStream.bind(client);
      client.requestStream = (path, opts, onChunk) =>
        inner(path, opts, (c, h) => {
          seen.push(String(h['content-type']));
          onChunk(c, h);
        });
      const listAll = async (lw: NodeListWatch) => {
        const items: unknown[] = [];
        const page = await lw.list({ limit: 0 }, AbortSignal.timeout(10_000), (i) => items.push(i));
        const mine = items
          .map((i) => transformNode(i))
          .filter((n) => n?.metadata?.name?.startsWith('pb-'))
          .map((n) => ({ ...n, metadata: { ...n?.metadata, resourceVersion: undefined } }));
        return { page, mine };
      };
      try {
        const proto = await listAll(kubeNodeListWatch(client, 'protobuf'));
        assert.match(seen.at(-1) ?? '', /^application\/vnd\.kubernetes\.protobuf/);
        const json = await listAll(kubeNodeListWatch(client, 'json'));
        assert.match(seen.at(-1) ?? '', /^application\/json/);
        assert.equal(proto.mine.length, 2);
        assert.deepEqual(proto.mine, json.mine);
        const dual = proto.mine.find((n) => n.metadata.name === 'pb-dual');
        assert.deepEqual(dual?.spec?.podCIDRs, ['10.244.90.0/24', 'fd00:10:244:90::/64']);
        assert.deepEqual(dual?.status?.conditions, [networkOK]);
        assert.match(proto.page.resourceVersion, /^\d+$/);
        // A Status error answered in protobuf is decoded, not shown as bytes.
        await assert.rejects(
          kubeNodeListWatch(client, 'protobuf').list(
            { limit: 1, continue: 'not-a-token' },
            AbortSignal.timeout(10_000),
            () => {},
          ),
          (err: Error & { statusCode?: number }) => {
            assert.equal(err.statusCode, 400);
            assert.match(err.message, /continue/i);
            assert.ok(!err.message.includes('k8s\0'), err.message);
            return true;
          },
        );
      } finally {
        client.close();
        await admin.deleteNode('pb-dual');
        await admin.deleteNode('pb-bare');
      }
    },
  );

  test('403 is logged at Error and retried until the grant arrives', { timeout: 30_000 }, async (t) => {
    if (!enabled || cp === undefined) return void requireTestenv(t);
    // A node of its own, so the synced list is not empty whichever tests ran before.
    await admin.createNode('late-grant-node', []);
    const kc = await cp.userKubeconfig('late-grant');
    const client = createKubeClient({ kubeconfig: kc });
    const logger = new MemoryLogger(4);
    const informer = new NodeInformer({ client, logger, backoff: { initialMs: 200, maxMs: 500 } });
    informer.start();
    try {
      await waitFor('a 403 logged at Error', 10_000, () =>
        logger.records.some((r) => r.level === 'error' && /forbidden/i.test(r.msg)),
      );
      assert.equal(informer.hasSynced(), false);
      const r = await apiRequest(
        cp.adminKubeconfig,
        'POST',
        '/apis/rbac.authorization.k8s.io/v1/clusterrolebindings',
        {
          metadata: { name: 'late-grant' },
          roleRef: {
            apiGroup: 'rbac.authorization.k8s.io',
            kind: 'ClusterRole',
            name: 'cloud-route-controller',
          },
          subjects: [{ apiGroup: 'rbac.authorization.k8s.io', kind: 'User', name: 'late-grant' }],
        },
      );
      assert.equal(r.status, 201, r.body);
      assert.equal(await informer.waitForSync(AbortSignal.timeout(15_000)), true);
      assert.ok(informer.list().some((n) => n.metadata?.name === 'late-grant-node'));
    } finally {
      await informer.stop();
      client.close();
      await admin.deleteNode('late-grant-node');
    }
  });
});

describe('node informer with the watch cache off: 410 Gone', { timeout: 120_000 }, () => {
  let cp: ControlPlane | undefined;
  let admin: Admin;
  let kubeconfig = '';

  before(async () => {
    if (!enabled) return;
    cp = await startControlPlane({ watchCacheDisabled: true });
    admin = new Admin(cp.adminKubeconfig);
    kubeconfig = await setupControllerUser(cp);
  });

  after(async () => {
    await cp?.stop();
  });

  test(
    'a watch from a compacted RV relists; a deletion missed meanwhile still removes the route',
    { timeout: 60_000 },
    async (t) => {
      if (!enabled || cp === undefined) return void requireTestenv(t);
      const cloud = new MemoryRoutes({ random: testRandom('cloud') });
      const rc = startController({ kubeconfig, watch: true, cloud });
      const h = handlerLog();
      rc.informer.addEventHandler(h.handler);
      try {
        await admin.createNode('x1', ['10.244.31.0/24'], internalIP('10.3.0.1'));
        await admin.createNode('x2', ['10.244.32.0/24'], internalIP('10.3.0.2'));
        await admin.createNode('x3', ['10.244.33.0/24'], internalIP('10.3.0.3'));
        await waitFor('three routes', 20_000, () => routeList(cloud).length === 3);
        // Break the watch, change the cluster, compact: the old RV is gone from etcd.
        await rc.informer.stop();
        const oldRv = rc.informer.resourceVersion;
        await admin.deleteNode('x2');
        await admin.createNode('x4', ['10.244.34.0/24'], internalIP('10.3.0.4'));
        await admin.patchStatus('x1', { addresses: [{ type: 'InternalIP', address: '10.3.0.11' }] });
        const rev = await cp.compactEtcd();
        assert.ok(rev > Number(oldRv));
        h.log.length = 0;
        rc.informer.start();
        await waitFor('relist after 410', 20_000, async () => (await restarts(rc, 'gone')) >= 1);
        await waitFor('x2 route removed, x4 route created', 20_000, () => {
          return routeList(cloud).join() === '10.244.31.0/24->x1,10.244.33.0/24->x3,10.244.34.0/24->x4';
        });
        // The relist's differences (later updates are the controller's own condition patches).
        assert.deepEqual(h.log.slice(0, 3).sort(), ['add:x4', 'delete:x2:tombstone', 'update:x1']);
        assert.deepEqual(rc.informer.get('x1')?.status?.addresses, [
          { type: 'InternalIP', address: '10.3.0.11' },
        ]);
        assert.deepEqual(
          cloud.calls.filter((c) => c.op === 'delete').map((c) => c.targetNode),
          ['x2'],
        );
        assert.ok(rc.logger.messages().some((m) => m.includes('Node watch expired, relisting')));
      } catch (err) {
        cp.markFailed(String(err));
        console.log(
          rc.logger.records
            .slice(-30)
            .map((r) => `${r.level} ${r.msg}`)
            .join('\n'),
        );
        throw err;
      } finally {
        await rc.stop();
      }
    },
  );

  test('a LIST continue token expired by compaction restarts the list', { timeout: 40_000 }, async (t) => {
    if (!enabled || cp === undefined) return void requireTestenv(t);
    for (let i = 0; i < 5; i++) await admin.createNode(`page-${i}`, [`10.244.${40 + i}.0/24`]);
    const client = createKubeClient({ kubeconfig });
    let compacted = false;
    const o = observed(kubeNodeListWatch(client), async (p) => {
      if (p.continue !== undefined && !compacted) {
        compacted = true;
        await admin.patchNode('page-0', { metadata: { labels: { bump: 'yes' } } });
        await cp!.compactEtcd();
      }
    });
    const logger = new MemoryLogger(4);
    const informer = new NodeInformer({ listWatch: o.lw, pageSize: 2, logger });
    informer.start();
    try {
      assert.equal(await informer.waitForSync(AbortSignal.timeout(15_000)), true);
      assert.deepEqual(
        o.lists.slice(0, 3).map((l) => [l.continue === undefined ? 'first' : 'continue', l.status]),
        [
          ['first', 'ok'],
          ['continue', 410],
          ['first', 'ok'],
        ],
      );
      const names = informer.list().map((n) => n.metadata?.name);
      for (let i = 0; i < 5; i++) assert.ok(names.includes(`page-${i}`));
    } finally {
      await informer.stop();
      client.close();
    }
  });
});
