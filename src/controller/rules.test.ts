// SPEC §9.5: one test per rule of this project (reconcile-level rules).
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { ConflictError, PermanentError, QuotaExceededError, ThrottledError } from '../core/errors.ts';
import { harness, ip } from '../testing/harness.ts';

const T0 = new Date('2026-01-01T00:00:00Z');
const T1 = new Date('2026-01-02T00:00:00Z');

describe('reconcile rules (SPEC §9.5)', () => {
  it('R26: at most 200 create+delete calls in flight; the 201st waits', async () => {
    const nodes = Array.from({ length: 150 }, (_, i) => ({
      name: `n${i}`,
      podCIDRs: [`10.120.${i}.0/24`],
      addresses: ip(`10.0.${i}.1`),
    }));
    const stale = Array.from({ length: 100 }, (_, i) => ({
      name: `stale-${i}`,
      targetNode: `gone-${i}`,
      destinationCIDR: `10.121.${i}.0/24`,
    }));
    const h = harness({ nodes, routes: stale, clusterCIDRs: ['10.120.0.0/15'], cloud: { latencyMs: 1000 } });
    const r = await h.reconcile();
    assert.equal(r.created, 150);
    assert.equal(r.deleted, 100);
    assert.equal(h.cloud.maxInFlight, 200, 'one pool shared by creates and deletes');
    const mutations = h.cloud.calls.filter((c) => c.op !== 'list');
    assert.equal(mutations.filter((c) => c.start === mutations[0]!.start).length, 200);
    assert.ok(mutations[200]!.start >= mutations[0]!.end, 'the 201st starts when a slot frees');
  });

  it('R20/E16: a managed blackhole to a node still wanting that CIDR is deleted and re-created in one reconcile', async () => {
    const h = harness({
      nodes: [{ name: 'node-1', podCIDRs: ['10.120.0.0/24'], addresses: ip('10.0.1.1') }],
      routes: [{ name: 'bh', targetNode: 'node-1', destinationCIDR: '10.120.0.0/24', blackhole: true }],
    });
    const r = await h.reconcile();
    assert.equal(r.deleted, 1);
    assert.equal(r.created, 1);
    assert.deepEqual(h.routeSet(), ['10.120.0.0/24->node-1']);
    const [del, cre] = h.cloud.calls.filter((c) => c.op !== 'list');
    assert.equal(del!.op, 'delete');
    assert.ok(del!.end <= cre!.start, 'R27 orders the re-create after the delete');
    assert.equal(h.conditions()['node-1'], 'False/RouteCreated');
  });

  it('R21/E2: two nodes claiming one CIDR get one stable owner; the other gets no route, NoRouteCreated and an Event', async () => {
    const h = harness({
      nodes: [
        { name: 'young', uid: 'y', podCIDRs: ['10.120.5.0/24'], creationTimestamp: T1 },
        { name: 'old', uid: 'o', podCIDRs: ['10.120.5.0/24'], creationTimestamp: T0 },
      ],
    });
    await h.reconcile();
    assert.deepEqual(h.routeSet(), ['10.120.5.0/24->old']);
    assert.deepEqual(h.conditions(), { young: 'True/NoRouteCreated', old: 'False/RouteCreated' });
    const ev = h.cluster.events.filter((e) => e.node.name === 'young');
    assert.equal(ev.length, 1);
    assert.equal(ev[0]!.reason, 'FailedToCreateRoute');
    assert.equal(ev[0]!.message, 'pod CIDR 10.120.5.0/24 is also assigned to node old; route not created');
    // Stable: a second reconcile changes nothing (no flapping).
    const r2 = await h.reconcile();
    assert.equal(r2.outcome, 'noop');
    assert.equal(h.cloud.count('create'), 1);
    assert.equal(h.cloud.count('delete'), 0);
  });

  it('R21: the claimant already targeted by a route keeps it even if younger', async () => {
    const h = harness({
      nodes: [
        { name: 'young', uid: 'y', podCIDRs: ['10.120.5.0/24'], creationTimestamp: T1 },
        { name: 'old', uid: 'o', podCIDRs: ['10.120.5.0/24'], creationTimestamp: T0 },
      ],
      routes: [{ name: 'r', targetNode: 'young', destinationCIDR: '10.120.5.0/24' }],
    });
    const r = await h.reconcile();
    assert.equal(r.outcome, 'noop');
    assert.deepEqual(h.routeSet(), ['10.120.5.0/24->young']);
    assert.equal(h.conditions()['old'], 'True/NoRouteCreated');
  });

  it('R17/E4: a malformed pod CIDR gets no cloud call, NoRouteCreated, an Event, and costs no other node its route', async () => {
    const h = harness({
      nodes: [
        { name: 'bad', podCIDRs: ['10.120.0.0/33'] },
        { name: 'good', podCIDRs: ['10.120.1.0/24'] },
      ],
    });
    const r = await h.reconcile();
    assert.equal(h.cloud.count('create'), 1);
    assert.deepEqual(h.routeSet(), ['10.120.1.0/24->good']);
    assert.deepEqual(h.conditions(), { bad: 'True/NoRouteCreated', good: 'False/RouteCreated' });
    const ev = h.cluster.events.filter((e) => e.node.name === 'bad');
    assert.equal(ev.length, 1);
    assert.equal(
      ev[0]!.message,
      'invalid pod CIDR "10.120.0.0/33" on node bad: invalid CIDR address: 10.120.0.0/33',
    );
    assert.equal(r.outcome, 'changed');
  });

  it('R14/E9: an unparsable destination from the cloud is logged, never deleted, never matched', async () => {
    const h = harness({
      nodes: [{ name: 'node-1', podCIDRs: ['10.120.0.0/24'] }],
      routes: [{ name: 'weird', targetNode: 'node-1', destinationCIDR: '10.120.0.0/24x' }],
    });
    await h.reconcile();
    assert.equal(h.cloud.count('delete'), 0);
    assert.equal(h.cloud.count('create'), 1);
    assert.ok(
      h.logger
        .messages()
        .includes('Ignoring route weird, unparsable CIDR: invalid CIDR address: 10.120.0.0/24x'),
    );
  });

  it('R24: a conflicting create is retried in place, 5 attempts in total, then Event and NoRouteCreated', async () => {
    const h = harness({ nodes: [{ name: 'node-1', uid: 'u1', podCIDRs: ['10.120.0.0/24'] }] });
    h.cloud.failNext(10, ['create'], () => new ConflictError('route table locked'));
    const r = await h.reconcile();
    const creates = h.cloud.calls.filter((c) => c.op === 'create');
    assert.equal(creates.length, 5);
    for (let i = 1; i < 5; i++) {
      const gap = creates[i]!.start - creates[i - 1]!.end;
      assert.ok(gap >= 100 && gap < 200, `gap ${gap} in [100, 200) ms`);
    }
    assert.equal(r.outcome, 'error');
    assert.equal(h.conditions()['node-1'], 'True/NoRouteCreated');
    const ev = h.cluster.events.filter((e) => e.reason === 'FailedToCreateRoute');
    assert.equal(ev.length, 1, 'R34: one Event per failed create per reconcile');
    assert.match(
      ev[0]!.message,
      /^Could not create route u1 10\.120\.0\.0\/24 for node node-1 after 0s: route table locked$/,
    );
    // Recovery within the attempts: 3 conflicts then success.
    const g = harness({ nodes: [{ name: 'node-1', podCIDRs: ['10.120.0.0/24'] }] });
    g.cloud.failNext(3, ['create'], () => new ConflictError('busy'));
    assert.equal((await g.reconcile()).outcome, 'changed');
    assert.equal(g.cloud.count('create'), 4);
  });

  it('R22: a failed delete is logged, raises no Event and makes the outcome error', async () => {
    const h = harness({ routes: [{ name: 'old', targetNode: 'gone', destinationCIDR: '10.120.9.0/24' }] });
    h.cloud.failNext(1, ['delete']);
    const r = await h.reconcile();
    assert.equal(r.outcome, 'error');
    assert.equal(h.cluster.events.length, 0);
    assert.ok(
      h.logger
        .messages()
        .some((m) =>
          m.startsWith('Could not delete route old 10.120.9.0/24 after 0s: injected delete failure'),
        ),
    );
  });

  it('R47 (both modes): a throttled call stops further mutations; the rest is deferred without Events', async () => {
    const nodes = Array.from({ length: 10 }, (_, i) => ({ name: `n${i}`, podCIDRs: [`10.120.${i}.0/24`] }));
    const h = harness({ nodes, controller: { maxConcurrentRouteOperations: 1 } });
    h.cloud.failNext(
      1,
      ['create'],
      () => new ThrottledError('RequestLimitExceeded', { retryAfterMs: 30_000 }),
    );
    const r = await h.reconcile();
    assert.equal(r.outcome, 'error');
    assert.equal(h.cloud.count('create'), 1, 'no create started after the throttle');
    assert.equal(r.deferred, 9);
    assert.equal(r.throttleUntil, h.clock.now() + 30_000);
    assert.equal(h.cluster.events.length, 1, 'only the throttled create emits an Event');
  });

  it('E10: at the route quota creates fail with an Event and NoRouteCreated, deletes still run', async () => {
    const h = harness({
      nodes: [
        { name: 'a', podCIDRs: ['10.120.0.0/24'] },
        { name: 'b', podCIDRs: ['10.120.1.0/24'] },
      ],
      routes: [{ name: 'x', targetNode: 'gone', destinationCIDR: '10.120.9.0/24' }],
      cloud: { quota: 1 },
    });
    h.cloud.failNext(1, ['create'], () => new QuotaExceededError('RouteLimitExceeded'));
    const r = await h.reconcile();
    assert.equal(r.deleted, 1);
    assert.equal(r.created, 1);
    assert.equal(h.cluster.events.filter((e) => e.reason === 'FailedToCreateRoute').length, 1);
    assert.deepEqual(r.failureKinds, new Set(['quota_exceeded']));
  });

  it('E3: a pod CIDR outside the cluster CIDRs is created, evented once per (UID, CIDR), and never deleted', async () => {
    const h = harness({ nodes: [{ name: 'n', uid: 'u', podCIDRs: ['192.168.7.0/24'] }] });
    await h.reconcile();
    await h.reconcile();
    assert.deepEqual(h.routeSet(), ['192.168.7.0/24->n']);
    assert.equal(h.cluster.events.filter((e) => e.reason === 'ClusterCIDRMisconfigured').length, 1);
    h.cluster.deleteNode('n');
    await h.reconcile();
    assert.deepEqual(h.routeSet(), ['192.168.7.0/24->n'], 'unmanaged: never deleted');
  });

  it('E6/E5: a node without addresses is requested with []; a PermanentError gives NoRouteCreated', async () => {
    const h = harness({ nodes: [{ name: 'n', podCIDRs: ['10.120.0.0/24'] }] });
    h.cloud.failNext(1, ['create'], () => new PermanentError('IPv6 not supported'));
    const r = await h.reconcile();
    assert.deepEqual(r.failureKinds, new Set(['permanent']));
    assert.equal(h.conditions()['n'], 'True/NoRouteCreated');
  });

  it('E15: a node without pod CIDRs but targeted by a route loses it and gets True/NoRouteCreated', async () => {
    const h = harness({
      nodes: [{ name: 'n', addresses: ip('10.0.0.1') }],
      routes: [{ name: 'r', targetNode: 'n', destinationCIDR: '10.120.3.0/24' }],
    });
    await h.reconcile();
    assert.deepEqual(h.routeSet(), []);
    assert.equal(h.conditions()['n'], 'True/NoRouteCreated');
    assert.ok(
      h.logger
        .messages()
        .includes('node n has no routes assigned to it. NodeNetworkUnavailable will be set to true'),
    );
  });

  it('E7: a node re-created with another CIDR: one reconcile deletes the old route and creates the new one with the new UID', async () => {
    const h = harness({ nodes: [{ name: 'n', uid: 'old-uid', podCIDRs: ['10.120.0.0/24'] }] });
    await h.reconcile();
    h.cluster.deleteNode('n');
    h.cluster.createNode({ name: 'n', uid: 'new-uid', podCIDRs: ['10.120.1.0/24'] });
    const r = await h.reconcile();
    assert.equal(r.deleted, 1);
    assert.equal(r.created, 1);
    assert.deepEqual(h.routeSet(), ['10.120.1.0/24->n']);
    assert.equal(h.cloud.calls.at(-1)!.nameHint, 'new-uid');
  });

  it('E11: zero nodes → every managed route deleted, foreign ones kept', async () => {
    const h = harness({
      routes: [
        { name: 'a', targetNode: 'x', destinationCIDR: '10.120.0.0/24' },
        { name: 'f', targetNode: '', destinationCIDR: '172.16.0.0/24' },
      ],
    });
    await h.reconcile();
    assert.deepEqual(h.routeSet(), ['172.16.0.0/24->']);
  });

  it('R11: a failed list gives outcome error and no create, delete or patch', async () => {
    const h = harness({ nodes: [{ name: 'n', podCIDRs: ['10.120.0.0/24'] }] });
    h.cloud.failNext(1, ['list']);
    const r = await h.reconcile();
    assert.equal(r.outcome, 'error');
    assert.equal(r.error, 'error listing routes: injected list failure (HTTP 503)');
    assert.equal(h.cloud.calls.length, 1);
    assert.equal(h.cluster.patches.length, 0);
    assert.ok(
      h.logger
        .messages()
        .includes("Couldn't reconcile node routes: error listing routes: injected list failure (HTTP 503)"),
    );
  });

  it('E14: a hanging call is aborted at cloudCallTimeout and counted as timeout', async () => {
    const h = harness({
      nodes: [{ name: 'n', podCIDRs: ['10.120.0.0/24'] }],
      controller: { cloudCallTimeoutMs: 60_000 },
    });
    h.cloud.hangNext(1, ['create']);
    const r = await h.reconcile();
    assert.equal(r.outcome, 'error');
    assert.deepEqual(r.failureKinds, new Set(['timeout']));
    assert.equal(
      await h.metric('route_controller_cloud_api_calls_total', { operation: 'create', outcome: 'timeout' }),
      1,
    );
    assert.equal(h.cloud.calls[1]!.outcome, 'aborted');
  });

  it('R53: dry-run lists routes but makes zero mutating calls, patches, Events or expectations', async () => {
    const h = harness({
      nodes: [
        { name: 'n', podCIDRs: ['10.120.0.0/24'] },
        { name: 'bad', podCIDRs: ['nope'] },
      ],
      routes: [{ name: 'old', targetNode: 'gone', destinationCIDR: '10.120.9.0/24' }],
      controller: { dryRun: true },
    });
    const r = await h.reconcile();
    assert.equal(r.outcome, 'dry_run');
    assert.deepEqual(
      h.cloud.calls.map((c) => c.op),
      ['list'],
    );
    assert.equal(h.cluster.patches.length, 0);
    assert.equal(h.cluster.events.length, 0);
    const plan = h.logger.records.find((x) => x.msg === 'Dry-run plan')!.fields!;
    assert.deepEqual(plan['creates'], [{ node: 'n', cidr: '10.120.0.0/24', hint: 'uid-1' }]);
    assert.deepEqual(plan['deletes'], [
      { route: 'old', cidr: '10.120.9.0/24', targetNode: 'gone', reason: 'no_node' },
    ]);
    assert.deepEqual(plan['conditionPatches'], [
      { node: 'n', status: 'False', reason: 'RouteCreated' },
      { node: 'bad', status: 'True', reason: 'NoRouteCreated' },
    ]);
    assert.deepEqual(plan['events'], ['FailedToCreateRoute bad nope']);
  });

  it('R8: applyRoutes, when present, is called once per reconcile instead of per-route calls', async () => {
    const h = harness({
      nodes: [
        { name: 'a', podCIDRs: ['10.120.0.0/24'] },
        { name: 'b', podCIDRs: ['10.120.1.0/24'] },
      ],
      routes: [{ name: 'old', targetNode: 'gone', destinationCIDR: '10.120.9.0/24' }],
    });
    const batches: { deletes: number; creates: number }[] = [];
    const cloud = h.cloud;
    Object.assign(cloud, {
      applyRoutes: async (
        cluster: string,
        plan: { deletes: never[]; creates: { nameHint: string; route: never }[] },
        opts: never,
      ) => {
        batches.push({ deletes: plan.deletes.length, creates: plan.creates.length });
        const out = [];
        for (const d of plan.deletes)
          out.push(await cloud.deleteRoute(cluster, d, opts).then(() => ({ ok: true as const })));
        for (const c of plan.creates)
          out.push(
            await cloud.createRoute(cluster, c.nameHint, c.route, opts).then(() => ({ ok: true as const })),
          );
        return out;
      },
    });
    const r = await h.reconcile();
    assert.deepEqual(batches, [{ deletes: 1, creates: 2 }]);
    assert.equal(r.outcome, 'changed');
    assert.equal(await h.metric('route_controller_cloud_api_calls_total', { operation: 'apply' }), 1);
    assert.deepEqual(h.routeSet(), ['10.120.0.0/24->a', '10.120.1.0/24->b']);
  });
});
