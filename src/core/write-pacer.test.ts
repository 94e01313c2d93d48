// The cloud write pacer (SPEC R68–R70) on a virtual clock: cut on throttle,
// retry time honoured, additive recovery up to the ceiling, fixed budgets.
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { VirtualClock } from './clock.ts';
import {
  AdaptiveWritePacer,
  budgetForLimit,
  PACER_FLOOR_DIVISOR,
  PACER_INCREASE_SHARE,
} from './write-pacer.ts';

const never = new AbortController().signal;

/** Starts `n` writes at once and returns the virtual start time of each. */
async function starts(clock: VirtualClock, pacer: AdaptiveWritePacer, n: number): Promise<number[]> {
  const at: number[] = [];
  const all = Array.from({ length: n }, () => pacer.wait(never).then(() => at.push(clock.now())));
  await clock.runAll();
  await Promise.all(all);
  return at;
}

describe('AdaptiveWritePacer (R68–R70)', () => {
  it('starts a little under the documented limit', () => {
    assert.deepEqual(budgetForLimit({ qps: 20, burst: 40 }), { qps: 19, burst: 36 });
    assert.deepEqual(budgetForLimit({ qps: 5, burst: 50 }), { qps: 4.75, burst: 45 });
    assert.deepEqual(budgetForLimit({ qps: 1, burst: 1 }), { qps: 0.95, burst: 1 }, 'burst at least 1');
  });

  it('lets the burst through at once, then one write per 1/qps', async () => {
    const clock = new VirtualClock();
    const p = new AdaptiveWritePacer(clock, { qps: 10, burst: 5, adaptive: true });
    const t0 = clock.now();
    const at = await starts(clock, p, 8);
    assert.deepEqual(
      at.map((t) => t - t0),
      [0, 0, 0, 0, 0, 100, 200, 300],
    );
  });

  it('a throttle halves the rate and blocks writes until the retry time', async () => {
    const clock = new VirtualClock();
    const rates: number[] = [];
    const p = new AdaptiveWritePacer(clock, {
      qps: 10,
      burst: 2,
      adaptive: true,
      onRate: (r) => rates.push(r),
    });
    await starts(clock, p, 2);
    p.onThrottle(3000);
    assert.equal(p.qps, 5);
    assert.deepEqual(rates, [10, 5], 'the gauge sees every change');
    const t0 = clock.now();
    assert.equal(p.nextWriteInMs(), 3000);
    const at = await starts(clock, p, 2);
    assert.ok(at[0]! - t0 >= 3000, `first write after the retry time, at +${at[0]! - t0} ms`);
  });

  it('without a retry time a throttle blocks for one interval at the cut rate', () => {
    const clock = new VirtualClock();
    const p = new AdaptiveWritePacer(clock, { qps: 4, burst: 1, adaptive: true });
    p.onThrottle(undefined);
    assert.equal(p.qps, 2);
    assert.equal(p.nextWriteInMs(), 500);
  });

  it('recovers additively while writes succeed, never above the start', async () => {
    const clock = new VirtualClock();
    const p = new AdaptiveWritePacer(clock, { qps: 20, burst: 40, adaptive: true });
    p.onThrottle(undefined);
    p.onThrottle(undefined);
    assert.equal(p.qps, 5);
    await clock.advance(999);
    p.onSuccess();
    assert.equal(p.qps, 5, 'nothing before a whole second without a throttle');
    await clock.advance(1);
    p.onSuccess();
    assert.equal(p.qps, 5 + PACER_INCREASE_SHARE * 20);
    await clock.advance(3000);
    p.onSuccess();
    assert.equal(p.qps, 5 + 4 * PACER_INCREASE_SHARE * 20, 'each whole second counts once');
    await clock.advance(3_600_000);
    p.onSuccess();
    assert.equal(p.qps, 20, 'capped at the ceiling');
  });

  it('never falls below ceiling / floor divisor', () => {
    const clock = new VirtualClock();
    const p = new AdaptiveWritePacer(clock, { qps: 64, burst: 1, adaptive: true });
    for (let i = 0; i < 20; i++) p.onThrottle(1);
    assert.equal(p.qps, 64 / PACER_FLOOR_DIVISOR);
  });

  it('a fixed budget keeps its rate but still honours retry times', async () => {
    const clock = new VirtualClock();
    const p = new AdaptiveWritePacer(clock, { qps: 10, burst: 1, adaptive: false });
    p.onThrottle(2000);
    assert.equal(p.qps, 10);
    assert.equal(p.nextWriteInMs(), 2000);
    await clock.advance(5000);
    p.onSuccess();
    assert.equal(p.qps, 10);
  });

  it('an aborted waiter gives its token back, unless a throttle emptied the bucket meanwhile', async () => {
    const clock = new VirtualClock();
    const p = new AdaptiveWritePacer(clock, { qps: 1, burst: 1, adaptive: true });
    await p.wait(never); // the burst
    const a = new AbortController();
    const waiting = p.wait(a.signal);
    a.abort();
    await assert.rejects(waiting);
    assert.equal(p.nextWriteInMs(), 1000, 'refunded: the next write waits one interval, not two');
    const b = new AbortController();
    const waiting2 = p.wait(b.signal);
    p.onThrottle(10_000);
    b.abort();
    await assert.rejects(waiting2);
    assert.equal(p.nextWriteInMs(), 10_000, 'no refund after a throttle; the retry time holds');
  });

  it('rejects a budget that cannot pace', () => {
    const clock = new VirtualClock();
    assert.throws(() => new AdaptiveWritePacer(clock, { qps: 0, burst: 1, adaptive: true }), RangeError);
    assert.throws(() => new AdaptiveWritePacer(clock, { qps: 1, burst: 0, adaptive: true }), RangeError);
    assert.throws(
      () => new AdaptiveWritePacer(clock, { qps: Infinity, burst: 1, adaptive: true }),
      RangeError,
    );
  });
});
