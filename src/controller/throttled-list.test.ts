// A throttled list is no news (SPEC R109, with R49 and R65), in virtual time:
// the route cache stays as it was, node changes keep planning against it, and
// the safety resync comes back after 0.1 P, doubling, instead of every retry
// listing into the throttle.
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { RetryableError, ThrottledError } from '../core/errors.ts';
import { ip, started, watching, type Harness } from '../testing/harness.ts';

const S = 1000;
const P = 600 * S;

function join(h: Harness, name: string, cidr: string): number {
  h.cluster.createNode({ name, podCIDRs: [cidr], addresses: ip('10.0.9.9') });
  return h.clock.now();
}

const listStarts = (h: Harness): number[] => h.cloud.calls.filter((c) => c.op === 'list').map((c) => c.start);
const invalidations = (h: Harness): Promise<number> =>
  h.metric('route_controller_route_cache_invalidations_total');

describe('a throttled list is no news (SPEC R109)', () => {
  it('R109: a throttled safety resync keeps the cache, joins stay one cloud call away, the resync returns after 0.1 P, 0.2 P and repairs the drift', async () => {
    const h = watching({ controller: { routeResyncPeriodMs: P } });
    await started(h);
    h.cloud.removeRoute('10.120.0.0/24'); // drift only a list can see
    h.cloud.failFraction(1, ['list'], () => new ThrottledError('RequestLimitExceeded'));
    await h.clock.advance(1.1 * P);
    const resync = h.reports[1]!;
    assert.equal(resync.trigger, 'periodic');
    assert.equal(resync.listThrottled, true);
    assert.equal(await invalidations(h), 0, 'the throttled list dropped nothing');

    // A node change plans against the cache: its create starts at its event, no list before it.
    const lists = h.cloud.count('list');
    const t = join(h, 'b', '10.120.1.0/24');
    await h.clock.advance(0);
    assert.deepEqual(
      h.cloud.calls.filter((c) => c.op === 'create' && c.targetNode === 'b').map((c) => c.start),
      [t],
    );
    assert.equal(h.reports.at(-1)!.source, 'cache');
    assert.equal(h.cloud.count('list'), lists);
    assert.equal(h.conditions()['b'], 'False/RouteCreated');

    // The resync comes back 0.1 P after the throttled list (±10 %), then 0.2 P after the next.
    await h.clock.advance(0.25 * P);
    const [, first, second, third] = listStarts(h);
    assert.ok(
      first !== undefined && second !== undefined && third !== undefined,
      `${listStarts(h).length} lists`,
    );
    const gaps = [(second - first) / P, (third - second) / P];
    assert.ok(gaps[0]! >= 0.09 && gaps[0]! <= 0.11, `first gap ${gaps[0]} P`);
    assert.ok(gaps[1]! >= 0.18 && gaps[1]! <= 0.22, `second gap ${gaps[1]} P`);
    assert.deepEqual(h.routeSet(), ['10.120.1.0/24->b'], 'no list has seen the drift yet');

    // The cloud answers again: the next resync (0.4 P) lists and repairs the route.
    h.cloud.clearFaults();
    await h.clock.advance(0.45 * P);
    assert.deepEqual(h.routeSet(), ['10.120.0.0/24->a', '10.120.1.0/24->b']);
    const last = h.reports.at(-1)!;
    assert.equal(last.trigger, 'periodic');
    assert.equal(last.listThrottled, false);
    // Back to 0.9–1.1 P after a list the cloud answered.
    const n = h.cloud.count('list');
    await h.clock.advance(listStarts(h).at(-1)! + 0.89 * P - h.clock.now());
    assert.equal(h.cloud.count('list'), n, 'nothing before 0.9 P');
    await h.clock.advance(0.22 * P);
    assert.equal(h.cloud.count('list'), n + 1);
    await h.stop();
  });

  it('R65: a list that failed otherwise (5xx) still drops the cache: the next join lists', async () => {
    const h = watching({ controller: { routeResyncPeriodMs: P } });
    await started(h);
    h.cloud.failFraction(1, ['list'], () => new RetryableError('503'));
    await h.clock.advance(1.1 * P);
    assert.equal(h.reports[1]!.trigger, 'periodic');
    assert.equal(h.reports[1]!.listThrottled, false);
    join(h, 'b', '10.120.1.0/24');
    await h.clock.advance(0);
    assert.equal(h.reports.at(-1)!.source, 'list', 'the join tried to list');
    h.cloud.clearFaults();
    await h.clock.advance(5 * 60 * S);
    const routed = h.reports.filter((r) => r.created > 0);
    assert.deepEqual(
      routed.map((r) => r.source),
      ['list', 'list'],
      'the start, then the join: after a 503 only a list can tell what the cloud holds',
    );
    await h.stop();
  });
});
