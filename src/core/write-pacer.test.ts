// The cloud write pacer (SPEC R68–R70, R111) on a virtual clock: one cut per
// congestion episode, retry time honoured, recovery with elapsed time up to the
// ceiling, a learning pacer that engages at the rate the cloud accepted, fixed budgets.
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import fc from 'fast-check';
import { VirtualClock } from './clock.ts';
import {
  AdaptiveWritePacer,
  budgetForLimit,
  LEARNING_QUIET_MS,
  PACER_DECREASE,
  PACER_FLOOR_DIVISOR,
  PACER_MIN_RECOVERY_MS,
  PACER_MIN_RECOVERY_SHARE,
  PACER_RECOVERY_WRITES,
  recoverySlope,
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

const close = (a: number | undefined, b: number, what: string): void =>
  assert.ok(a !== undefined && Math.abs(a - b) < 1e-9, `${what}: ${a} ≠ ${b}`);

describe('AdaptiveWritePacer (R68–R70)', () => {
  it('starts a little under the documented limit', () => {
    assert.deepEqual(budgetForLimit({ qps: 20, burst: 40 }), { qps: 19, burst: 36 });
    assert.deepEqual(budgetForLimit({ qps: 5, burst: 50 }), { qps: 4.75, burst: 45 });
    assert.deepEqual(budgetForLimit({ qps: 1, burst: 1 }), { qps: 0.95, burst: 1 }, 'burst at least 1');
  });

  it('lets the burst through at once, then one write per 1/qps', async () => {
    const clock = new VirtualClock();
    const p = new AdaptiveWritePacer(clock, { kind: 'adaptive', qps: 10, burst: 5 });
    const t0 = clock.now();
    const at = await starts(clock, p, 8);
    assert.deepEqual(
      at.map((t) => t - t0),
      [0, 0, 0, 0, 0, 100, 200, 300],
    );
  });

  it('recovers over the same number of its own write intervals at any rate (at least 2 s), at least a share of the ceiling per second', () => {
    for (const qps of [1, 5]) {
      const secondsBack = ((1 - PACER_DECREASE) * qps) / recoverySlope(qps, qps);
      close(secondsBack * qps, PACER_RECOVERY_WRITES, `${qps}/s`);
    }
    // Never faster than the cloud's answer can come back: at 50/s, 20 intervals would be 0.4 s.
    close(((1 - PACER_DECREASE) * 50) / recoverySlope(50, 50), PACER_MIN_RECOVERY_MS / 1000, '50/s');
    // Cut near the floor (every write refused for a while): back within minutes, not hours.
    const floor = 10 / PACER_FLOOR_DIVISOR;
    assert.equal(recoverySlope(floor, 10), PACER_MIN_RECOVERY_SHARE * 10);
  });

  it('a throttle cuts the rate and blocks writes until the retry time', async () => {
    const clock = new VirtualClock();
    const rates: number[] = [];
    const p = new AdaptiveWritePacer(clock, {
      kind: 'adaptive',
      qps: 10,
      burst: 2,
      onRate: (r) => rates.push(r),
    });
    await starts(clock, p, 2);
    p.onThrottle(3000, clock.now());
    close(p.qps, 10 * PACER_DECREASE, 'cut');
    assert.deepEqual(rates, [10, 10 * PACER_DECREASE], 'the gauge sees the cut');
    const t0 = clock.now();
    assert.equal(p.nextWriteInMs(), 3000);
    const at = await starts(clock, p, 2);
    assert.ok(at[0]! - t0 >= 3000, `first write after the retry time, at +${at[0]! - t0} ms`);
  });

  it('cuts once per congestion episode: answers to writes sent before the cut do not cut again', async () => {
    const clock = new VirtualClock();
    const p = new AdaptiveWritePacer(clock, { kind: 'adaptive', qps: 10, burst: 100 });
    const sent = clock.now();
    await clock.advanceTo(sent + 50);
    for (let i = 0; i < 40; i++) p.onThrottle(200, sent);
    close(p.qps, 10 * PACER_DECREASE, 'forty throttled answers of one burst: one cut');
    await clock.advanceTo(sent + 300);
    p.onThrottle(200, sent + 260);
    // 250 ms after the first cut the rate had recovered a little; the second cut starts from there.
    const recovered = 10 * PACER_DECREASE + 0.25 * recoverySlope(10, 10);
    close(p.qps, recovered * PACER_DECREASE, 'a write sent after the cut starts a new episode');
  });

  it('without a retry time a throttle blocks for one interval at the cut rate', () => {
    const clock = new VirtualClock();
    const p = new AdaptiveWritePacer(clock, { kind: 'adaptive', qps: 4, burst: 1 });
    p.onThrottle(undefined, clock.now());
    close(p.qps, 4 * PACER_DECREASE, 'cut');
    assert.equal(p.nextWriteInMs(), Math.ceil(1000 / (4 * PACER_DECREASE)));
  });

  it('recovers with elapsed time, not per success, never above the start', async () => {
    const clock = new VirtualClock();
    const p = new AdaptiveWritePacer(clock, { kind: 'adaptive', qps: 20, burst: 40 });
    p.onThrottle(undefined, clock.now());
    const cut = 20 * PACER_DECREASE;
    await clock.advance(100);
    close(p.qps, cut + 0.1 * recoverySlope(20, 20), '100 ms later, with no write at all');
    await clock.advance(200);
    close(p.qps, cut + 0.3 * recoverySlope(20, 20), 'linear in time');
    await clock.advance(3_600_000);
    assert.equal(p.qps, 20, 'capped at the ceiling');
  });

  it('never falls below ceiling / floor divisor', async () => {
    const clock = new VirtualClock();
    const p = new AdaptiveWritePacer(clock, { kind: 'adaptive', qps: 64, burst: 1 });
    for (let i = 0; i < 40; i++) {
      p.onThrottle(1, clock.now());
      await clock.advance(1); // each a new episode, with no time to recover
    }
    assert.ok(p.qps! >= 64 / PACER_FLOOR_DIVISOR && p.qps! < 64 / PACER_FLOOR_DIVISOR + 0.01, `${p.qps}`);
  });

  it('a fixed budget keeps its rate but still honours retry times', async () => {
    const clock = new VirtualClock();
    const p = new AdaptiveWritePacer(clock, { kind: 'fixed', qps: 10, burst: 1 });
    p.onThrottle(2000, clock.now());
    assert.equal(p.qps, 10);
    assert.equal(p.nextWriteInMs(), 2000);
    await clock.advance(5000);
    p.onSuccess(clock.now());
    assert.equal(p.qps, 10);
  });

  it('an aborted waiter gives its token back, unless a throttle emptied the bucket meanwhile', async () => {
    const clock = new VirtualClock();
    const p = new AdaptiveWritePacer(clock, { kind: 'fixed', qps: 1, burst: 1 });
    await p.wait(never); // the burst
    const a = new AbortController();
    const waiting = p.wait(a.signal);
    a.abort();
    await assert.rejects(waiting);
    assert.equal(p.nextWriteInMs(), 1000, 'refunded: the next write waits one interval, not two');
    const b = new AbortController();
    const waiting2 = p.wait(b.signal);
    p.onThrottle(10_000, clock.now());
    b.abort();
    await assert.rejects(waiting2);
    assert.equal(p.nextWriteInMs(), 10_000, 'no refund after a throttle; the retry time holds');
  });

  it('rejects a budget that cannot pace', () => {
    const clock = new VirtualClock();
    assert.throws(() => new AdaptiveWritePacer(clock, { kind: 'adaptive', qps: 0, burst: 1 }), RangeError);
    assert.throws(() => new AdaptiveWritePacer(clock, { kind: 'adaptive', qps: 1, burst: 0 }), RangeError);
    assert.throws(
      () => new AdaptiveWritePacer(clock, { kind: 'fixed', qps: Infinity, burst: 1 }),
      RangeError,
    );
  });
});

describe('a learning pacer (R111)', () => {
  it('is unpaced until the first throttle', async () => {
    const clock = new VirtualClock();
    const p = new AdaptiveWritePacer(clock, { kind: 'learning' });
    assert.equal(p.qps, undefined);
    const t0 = clock.now();
    assert.deepEqual(await starts(clock, p, 300), Array(300).fill(t0));
    assert.equal(p.nextWriteInMs(), 0);
  });

  it('engages at the rate the cloud accepted in the last second, cut once, with that as its bucket', async () => {
    const clock = new VirtualClock();
    const rates: number[] = [];
    const p = new AdaptiveWritePacer(clock, { kind: 'learning', onRate: (r) => rates.push(r) });
    for (let i = 0; i < 60; i++) {
      await clock.advanceTo(clock.now() + 10); // 100 accepted per second for 0.6 s; the last second holds 60
      p.onSuccess(clock.now() - 10);
    }
    const sent = clock.now();
    await clock.advanceTo(sent + 20);
    for (let i = 0; i < 30; i++) p.onThrottle(200, sent); // one burst's answers: one episode
    close(p.qps, 60 * PACER_DECREASE, 'engaged at 60/s, cut once');
    assert.deepEqual(rates, [60, 60 * PACER_DECREASE]);
    assert.equal(p.nextWriteInMs(), 200, 'the retry time holds');
  });

  it('with nothing accepted it engages at 1 write/s, and backs off geometrically while every write is throttled', async () => {
    const clock = new VirtualClock();
    const p = new AdaptiveWritePacer(clock, { kind: 'learning' });
    const gaps: number[] = [];
    for (let i = 0; i < 6; i++) {
      const started = clock.now();
      const w = p.wait(never);
      await clock.runAll();
      await w;
      gaps.push(clock.now() - started);
      p.onThrottle(undefined, clock.now());
    }
    assert.equal(gaps[0], 0, 'the first write was unpaced');
    for (let i = 2; i < gaps.length; i++) assert.ok(gaps[i]! > gaps[i - 1]!, `gaps grow: ${gaps.join(', ')}`);
  });

  it('disengages once it has recovered to its engaged rate and seen no throttle for a quiet period', async () => {
    const clock = new VirtualClock();
    const p = new AdaptiveWritePacer(clock, { kind: 'learning' });
    p.onSuccess(clock.now());
    p.onThrottle(100, clock.now());
    assert.notEqual(p.qps, undefined);
    await clock.advance(Math.ceil((((1 - PACER_DECREASE) * 1) / recoverySlope(1, 1)) * 1000));
    assert.equal(p.qps, 1, 'recovered to its start');
    assert.notEqual(p.qps, undefined, 'still engaged: the rest of a burst would meet the same throttle');
    await clock.advance(LEARNING_QUIET_MS);
    assert.equal(p.nextWriteInMs(), 0);
    assert.equal(
      p.qps,
      undefined,
      'unpaced again: a throttle caused by others once does not pace it for good',
    );
  });
});

describe('pacer properties (R69)', () => {
  it('a paced sender never exceeds its bucket plus its ceiling over any interval', async () => {
    const seed = Number(process.env['FC_SEED'] ?? Date.now() % 1_000_000);
    console.log(`# pacer property seed ${seed}`);
    await fc.assert(
      fc.asyncProperty(
        fc.integer({ min: 1, max: 50 }),
        fc.integer({ min: 1, max: 20 }),
        fc.array(fc.tuple(fc.integer({ min: 0, max: 3000 }), fc.boolean()), { maxLength: 40 }),
        async (qps, burst, events) => {
          const clock = new VirtualClock();
          const p = new AdaptiveWritePacer(clock, { kind: 'adaptive', qps, burst });
          const sent: number[] = [];
          for (const [gap, throttled] of events) {
            await clock.advance(gap);
            const start = clock.now();
            const w = p.wait(never).then(() => sent.push(clock.now()));
            await clock.runAll();
            await w;
            if (throttled) p.onThrottle(undefined, start);
            else p.onSuccess(start);
            assert.ok(p.qps! <= qps + 1e-9 && p.qps! >= qps / PACER_FLOOR_DIVISOR - 1e-9);
          }
          for (let i = 0; i < sent.length; i++) {
            const within = sent.filter((t) => t >= sent[i]! && t - sent[i]! < 1000).length;
            assert.ok(within <= burst + qps + 1, `${within} writes within 1 s (qps ${qps}, burst ${burst})`);
          }
        },
      ),
      { seed, numRuns: 100 },
    );
  });
});
