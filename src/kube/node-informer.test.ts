// The informer's state machine against a scripted list/watch on virtual time.
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { Registry } from 'prom-client';
import { VirtualClock } from '../core/clock.ts';
import { MemoryLogger } from '../core/ports.ts';
import { RouteControllerMetrics } from '../controller/metrics.ts';
import { KubeApiError, KubeRequestError } from './kube-client.ts';
import { NodeInformer } from './node-informer.ts';
import { FakeListWatch, page, raw, recorder } from './testing/fake-list-watch.ts';

function setup(opts: { pageSize?: number } = {}) {
  const clock = new VirtualClock();
  const lw = new FakeListWatch();
  const logger = new MemoryLogger(10);
  const registry = new Registry();
  const metrics = new RouteControllerMetrics(registry);
  const informer = new NodeInformer({
    listWatch: lw,
    clock,
    logger,
    metrics,
    random: () => 0.5,
    pageSize: opts.pageSize ?? 500,
    watchTimeoutSeconds: { min: 300, max: 600 },
  });
  const rec = recorder();
  informer.addEventHandler(rec.handler);
  const restarts = async (): Promise<Record<string, number>> => {
    const m = await registry.getSingleMetric('route_controller_node_informer_restarts_total')!.get();
    return Object.fromEntries(m.values.map((v) => [String(v.labels['reason']), v.value]));
  };
  return { clock, lw, logger, informer, seen: rec.seen, restarts, metrics, registry };
}

describe('NodeInformer', () => {
  test('syncs only after the complete paginated list; watches from its RV with bookmarks', async () => {
    const { clock, lw, informer, seen } = setup({ pageSize: 2 });
    lw.replies.push(page([raw('a', '5'), raw('b', '6')], '10', 'c1'), page([raw('c', '7')], '10'));
    const ac = new AbortController();
    const synced = informer.waitForSync(ac.signal);
    informer.start();
    await clock.advance(0);
    assert.equal(await synced, true);
    // R108: the first page of the first list may come from the watch cache; a continue carries its own RV.
    assert.deepEqual(lw.lists, [
      { limit: 2, resourceVersion: '0' },
      { limit: 2, continue: 'c1' },
    ]);
    assert.deepEqual(
      seen.map((s) => `${s.kind}:${s.name}`),
      ['add:a', 'add:b', 'add:c'],
    );
    assert.equal(lw.watches.length, 1);
    assert.equal(lw.watch0.params.resourceVersion, '10');
    assert.equal(lw.watch0.params.timeoutSeconds, 450);
    // Cached objects are stripped (R58).
    assert.deepEqual(informer.get('a'), {
      metadata: { name: 'a', uid: 'uid-a', resourceVersion: '5', creationTimestamp: undefined },
      spec: { podCIDRs: ['10.0.0.0/24'] },
      status: {},
    });
    await informer.stop();
  });

  test('watch events: add, update, delete; bookmarks advance the RV silently', async () => {
    const { clock, lw, informer, seen, registry } = setup();
    lw.replies.push(page([raw('a', '5')], '10'));
    informer.start();
    await clock.advance(0);
    seen.length = 0;
    const w = lw.watch0;
    w.send('ADDED', raw('b', '11'));
    w.send('MODIFIED', raw('a', '12'));
    w.send('MODIFIED', raw('a', '12')); // a duplicate is not a resync
    w.send('BOOKMARK', { kind: 'Node', metadata: { resourceVersion: '20' } });
    w.send('DELETED', raw('b', '21'));
    assert.deepEqual(
      seen.map((s) => `${s.kind}:${s.name}:${s.rv}${s.tombstone ? ':tomb' : ''}`),
      ['add:b:11', 'update:a:12', 'delete:b:21'],
    );
    assert.equal(informer.resourceVersion, '21');
    assert.deepEqual(
      informer.list().map((n) => n.metadata?.name),
      ['a'],
    );
    const last = await registry
      .getSingleMetric('route_controller_node_informer_last_event_timestamp_seconds')!
      .get();
    assert.equal(last.values[0]?.value, clock.now() / 1000);
    await informer.stop();
  });

  test('a server-closed watch resumes from the last RV without relisting', async () => {
    const { clock, lw, informer, restarts } = setup();
    lw.replies.push(page([raw('a', '5')], '10'));
    informer.start();
    await clock.advance(0);
    lw.watch0.send('BOOKMARK', { metadata: { resourceVersion: '33' } });
    await clock.advance(450_000);
    lw.watch0.end();
    await clock.advance(0);
    assert.equal(lw.watches.length, 2);
    assert.equal(lw.watch0.params.resourceVersion, '33');
    assert.equal(lw.lists.length, 1);
    assert.deepEqual(await restarts(), {});
    await informer.stop();
  });

  test('410 Gone (ERROR event) relists, swaps the cache and emits the differences', async () => {
    const { clock, lw, informer, seen, restarts } = setup();
    lw.replies.push(page([raw('a', '5'), raw('b', '6'), raw('c', '7')], '10'));
    informer.start();
    await clock.advance(0);
    seen.length = 0;
    lw.replies.push(page([raw('a', '5'), raw('b', '16'), raw('c', '17', 'uid-c2'), raw('d', '18')], '30'));
    const caches: string[][] = [];
    informer.addEventHandler({
      onAdd: () => caches.push(informer.list().map((n) => n.metadata!.name!)),
      onUpdate: () => {},
      onDelete: () => {},
    });
    caches.length = 0;
    lw.watch0.send('ERROR', {
      kind: 'Status',
      code: 410,
      reason: 'Expired',
      message: 'too old resource version',
    });
    await clock.advance(0);
    assert.deepEqual(
      seen.map((s) => `${s.kind}:${s.name}:${s.rv}${s.tombstone ? ':tomb' : ''}`),
      ['delete:c:7:tomb', 'add:c:17', 'add:d:18', 'update:b:16'],
    );
    // Handlers only ever see the complete new cache (atomic swap).
    assert.deepEqual(caches, [
      ['a', 'b', 'c', 'd'],
      ['a', 'b', 'c', 'd'],
    ]);
    assert.equal(lw.watch0.params.resourceVersion, '30');
    assert.deepEqual(await restarts(), { gone: 1 });
    await informer.stop();
  });

  test('410 right after every relist backs off instead of relisting in a loop', async () => {
    const { clock, lw, informer } = setup();
    for (let i = 0; i < 4; i++) lw.replies.push(page([], String(10 + i)));
    informer.start();
    await clock.advance(0);
    const gone = (): void =>
      lw.watch0.send('ERROR', { kind: 'Status', code: 410, reason: 'Expired', message: 'too old' });
    gone();
    await clock.advance(0);
    assert.equal(lw.lists.length, 2, 'the first 410 relists at once');
    assert.equal(
      lw.lists[1]!.resourceVersion,
      undefined,
      'a relist after a 410 reads from etcd, not the watch cache',
    );
    gone();
    await clock.advance(999);
    assert.equal(lw.lists.length, 2, 'the second in a row waits');
    await clock.advance(1);
    assert.equal(lw.lists.length, 3);
    lw.watch0.send('BOOKMARK', { metadata: { resourceVersion: '50' } });
    gone();
    await clock.advance(0);
    assert.equal(lw.lists.length, 4, 'after an event, a 410 relists at once again');
    await informer.stop();
  });

  test('a node deleted while the watch was down is deleted by the relist (tombstone)', async () => {
    const { clock, lw, informer, seen } = setup();
    lw.replies.push(page([raw('a', '5'), raw('b', '6')], '10'));
    informer.start();
    await clock.advance(0);
    seen.length = 0;
    lw.watch0.fail(new KubeApiError(410, 'Gone'));
    lw.replies.push(page([raw('a', '5')], '40'));
    await clock.advance(0);
    assert.deepEqual(seen, [{ kind: 'delete', name: 'b', rv: '6', tombstone: true }]);
    await informer.stop();
  });

  test('an expired continue restarts the list; twice falls back to one full list', async () => {
    const { clock, lw, informer, seen, logger } = setup({ pageSize: 1 });
    const expired = (): Error =>
      new KubeApiError(410, 'The provided continue parameter is too old', { reason: 'Expired' });
    lw.replies.push(
      page([raw('a', '5')], '10', 'k1'),
      () => expired(),
      page([raw('a', '5')], '12', 'k2'),
      () => expired(),
      page([raw('a', '5'), raw('b', '11')], '13'),
    );
    informer.start();
    await clock.advance(0);
    assert.deepEqual(lw.lists, [
      { limit: 1, resourceVersion: '0' },
      { limit: 1, continue: 'k1' },
      { limit: 1, resourceVersion: '0' },
      { limit: 1, continue: 'k2' },
      { limit: 0 },
    ]);
    assert.equal(informer.hasSynced(), true);
    assert.deepEqual(
      seen.map((s) => `${s.kind}:${s.name}`),
      ['add:a', 'add:b'],
    );
    assert.ok(logger.messages().some((m) => m.includes('continue token expired')));
    await informer.stop();
  });

  test('failures back off 1 s → 30 s with jitter, reset by an event; never give up', async () => {
    const { clock, lw, informer, restarts } = setup();
    lw.replies.push(() => new KubeRequestError('connect ECONNREFUSED'));
    lw.replies.push(() => new KubeApiError(500, 'etcd timeout'));
    lw.replies.push(page([raw('a', '5')], '10'));
    informer.start();
    await clock.advance(0);
    assert.equal(lw.lists.length, 1);
    await clock.advance(999);
    assert.equal(lw.lists.length, 1);
    await clock.advance(1);
    assert.equal(lw.lists.length, 2); // 1 s × (0.9 + 0.2 × 0.5)
    await clock.advance(2000);
    assert.equal(lw.lists.length, 3);
    assert.equal(informer.hasSynced(), true);
    // Watch failures continue the same sequence: 4 s, 8 s, 16 s, 30 s, 30 s.
    const gaps: number[] = [];
    for (let i = 0; i < 5; i++) {
      const t0 = clock.now();
      const n = lw.watches.length;
      lw.watch0.fail(new KubeRequestError('socket hang up'));
      await clock.advance(0);
      while (lw.watches.length === n)
        await clock.advance(Math.max(1, (clock.nextTimerAt() ?? clock.now()) - clock.now()));
      gaps.push(clock.now() - t0);
    }
    assert.deepEqual(gaps, [4000, 8000, 16000, 30000, 30000]);
    // An event resets the backoff.
    lw.watch0.send('ADDED', raw('b', '11'));
    lw.watch0.fail(new KubeRequestError('socket hang up'));
    await clock.advance(1000);
    assert.equal(lw.watches.length, 7);
    assert.deepEqual(await restarts(), { list_error: 2, watch_error: 6 });
    assert.equal(informer.hasSynced(), true);
    await informer.stop();
  });

  test('429 honours Retry-After; 401/403 are logged at Error', async () => {
    const { clock, lw, informer, logger } = setup();
    lw.replies.push(() => new KubeApiError(429, 'Too many requests', { retryAfterMs: 7000 }));
    lw.replies.push(() => new KubeApiError(403, 'nodes is forbidden: User "x" cannot list resource "nodes"'));
    lw.replies.push(page([], '10'));
    informer.start();
    await clock.advance(6999);
    assert.equal(lw.lists.length, 1);
    await clock.advance(1);
    assert.equal(lw.lists.length, 2);
    await clock.advance(2000);
    assert.equal(lw.lists.length, 3);
    const forbidden = logger.records.find((r) => r.msg.includes('forbidden'));
    assert.equal(forbidden?.level, 'error');
    assert.equal(logger.records.find((r) => r.msg.includes('Too many'))?.level, 'warn');
    await informer.stop();
  });

  test('a non-410 ERROR event and a very short empty watch are watch errors', async () => {
    const { clock, lw, informer, restarts } = setup();
    lw.replies.push(page([], '10'));
    informer.start();
    await clock.advance(0);
    lw.watch0.send('ERROR', { kind: 'Status', code: 500, message: 'internal error' });
    await clock.advance(1000);
    assert.equal(lw.watches.length, 2);
    assert.equal(lw.watch0.params.resourceVersion, '10');
    lw.watch0.end(); // closed at once without any event
    await clock.advance(1999);
    assert.equal(lw.watches.length, 2);
    await clock.advance(1);
    assert.equal(lw.watches.length, 3);
    assert.deepEqual(await restarts(), { watch_error: 2 });
    assert.equal(lw.lists.length, 1);
    await informer.stop();
  });

  test('R57: a watch open 60 s past its timeoutSeconds is aborted and re-established', async () => {
    const { clock, lw, informer, restarts, logger } = setup();
    lw.replies.push(page([], '10'));
    informer.start();
    await clock.advance(0);
    const first = lw.watch0;
    await clock.advance(450_000 + 59_999);
    assert.equal(first.signal.aborted, false);
    await clock.advance(1);
    assert.equal(first.signal.aborted, true);
    assert.equal(lw.watches.length, 2);
    assert.equal(lw.watch0.params.resourceVersion, '10');
    assert.deepEqual(await restarts(), { watchdog: 1 });
    assert.equal(lw.resets, 1, 'idle pooled connections are dropped too');
    assert.ok(logger.messages().some((m) => m.includes('half-open')));
    await informer.stop();
  });

  test('callbacks of superseded attempts are ignored; at most one watch is open', async () => {
    const { clock, lw, informer, seen } = setup();
    lw.replies.push(page([], '10'));
    informer.start();
    await clock.advance(0);
    const first = lw.watch0;
    first.fail(new KubeRequestError('reset'));
    await clock.advance(1000);
    assert.equal(lw.watches.length, 2);
    first.send('ADDED', raw('ghost', '99'));
    assert.equal(informer.get('ghost'), undefined);
    assert.equal(seen.length, 0);
    assert.equal(lw.watches.filter((w) => !w.signal.aborted).length, 2); // the first settled, not aborted
    await informer.stop();
    assert.ok(lw.watches.every((w, i) => i === 0 || w.signal.aborted));
  });

  test('stop aborts the watch without logging an error; waitForSync honours its signal', async () => {
    const { clock, lw, informer, logger } = setup();
    const ac = new AbortController();
    const waiting = informer.waitForSync(ac.signal);
    ac.abort();
    assert.equal(await waiting, false);
    lw.replies.push(page([raw('a', '1')], '10'));
    informer.start();
    await clock.advance(0);
    await informer.stop();
    assert.equal(lw.watch0.signal.aborted, true);
    assert.deepEqual(
      logger.records.filter((r) => r.level !== 'info'),
      [],
    );
    assert.equal(informer.running, false);
    assert.equal(informer.get('a')?.metadata?.resourceVersion, '1'); // the cache survives stop
  });

  test('stop right after the sync, before the watch opens, still ends the loop', async () => {
    const { clock, lw, informer } = setup();
    lw.replies.push(page([], '10'));
    const stopped = informer.waitForSync(new AbortController().signal).then(() => informer.stop());
    informer.start();
    await clock.advance(0);
    await stopped;
    assert.equal(informer.running, false);
    assert.ok(lw.watches.every((w) => w.signal.aborted));
  });

  test('a handler added after the sync gets the cache as adds; unsubscribing stops delivery', async () => {
    const { clock, lw, informer } = setup();
    lw.replies.push(page([raw('a', '1'), raw('b', '2')], '10'));
    informer.start();
    await clock.advance(0);
    const late = recorder();
    const off = informer.addEventHandler(late.handler);
    assert.deepEqual(
      late.seen.map((s) => `${s.kind}:${s.name}`),
      ['add:a', 'add:b'],
    );
    off();
    lw.watch0.send('ADDED', raw('c', '11'));
    assert.equal(late.seen.length, 2);
    await informer.stop();
  });

  test('a throwing handler is logged and does not break the watch', async () => {
    const { clock, lw, informer, logger, seen } = setup();
    lw.replies.push(page([], '10'));
    informer.addEventHandler({
      onAdd: () => {
        throw new Error('boom');
      },
      onUpdate: () => {},
      onDelete: () => {},
    });
    informer.start();
    await clock.advance(0);
    lw.watch0.send('ADDED', raw('a', '11'));
    assert.equal(seen.length, 1);
    assert.equal(lw.watches.length, 1);
    assert.ok(logger.records.some((r) => r.level === 'error' && r.msg.includes('boom')));
    await informer.stop();
  });
});
