// The slow start of a learning write pacer (SPEC R137) on a virtual clock: 10
// writes at once, the rate doubling every second, again after a pause; a
// throttle hands the waiting writes over to the engaged pacer; never more than
// the bucket allows over any prefix of a busy period.
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import fc from 'fast-check';
import { VirtualClock } from './clock.ts';
import {
  SLOW_START_DOUBLING_MS,
  SLOW_START_IDLE_MS,
  SLOW_START_MAX_QPS,
  SLOW_START_WRITES,
  SlowStart,
} from './slow-start.ts';
import { AdaptiveWritePacer } from './write-pacer.ts';

const never = new AbortController().signal;

/** Starts `n` writes at once and returns each one's start, relative to now. */
async function starts(clock: VirtualClock, pacer: AdaptiveWritePacer, n: number): Promise<number[]> {
  const t0 = clock.now();
  const at: number[] = [];
  const all = Array.from({ length: n }, () => pacer.wait(never).then(() => at.push(clock.now() - t0)));
  await clock.runAll();
  await Promise.all(all);
  return at;
}

/** Writes the slow start lets through within `ms` of its start: 10, then the integral of 10·2^(t/1 s). */
const allowed = (ms: number): number =>
  SLOW_START_WRITES +
  (SLOW_START_WRITES * (2 ** (ms / SLOW_START_DOUBLING_MS) - 1) * SLOW_START_DOUBLING_MS) / 1000 / Math.LN2;

const learning = (clock: VirtualClock): AdaptiveWritePacer =>
  new AdaptiveWritePacer(clock, { kind: 'learning', slowStart: true });

describe('slow start of a learning pacer (R137)', () => {
  it('lets 10 writes through at once, then as many as the doubling rate brings', async () => {
    const clock = new VirtualClock();
    const at = await starts(clock, learning(clock), 200);
    assert.equal(at.filter((t) => t === 0).length, SLOW_START_WRITES, 'the initial window');
    for (const s of [1, 2, 3, 4]) {
      const by = at.filter((t) => t <= s * 1000).length;
      assert.equal(by, Math.min(200, Math.floor(allowed(s * 1000))), `started within ${s} s`);
    }
    assert.ok(Math.max(...at) < 4400, `200 writes within ~4.3 s, last at ${Math.max(...at)} ms`);
  });

  it('is unpaced without a slow start (a provider declaring unlimited, periodic mode)', async () => {
    const clock = new VirtualClock();
    const p = new AdaptiveWritePacer(clock, { kind: 'learning', slowStart: false });
    assert.deepEqual(await starts(clock, p, 200), Array(200).fill(0));
  });

  it('starts again at 10 after a pause of 1 s, not before', async () => {
    const clock = new VirtualClock();
    const p = learning(clock);
    await starts(clock, p, 100);
    await clock.advance(SLOW_START_IDLE_MS - 1);
    const soon = await starts(clock, p, 60);
    assert.ok(soon.filter((t) => t === 0).length > SLOW_START_WRITES, 'still fast within the pause');
    await clock.advance(SLOW_START_IDLE_MS);
    const later = await starts(clock, p, 20);
    assert.equal(later.filter((t) => t === 0).length, SLOW_START_WRITES, 'back to the initial window');
    assert.equal(p.nextWriteInMs() > 0, true, 'the 21st write would wait');
  });

  it('a throttle while writes wait hands them to the engaged pacer: none starts before the retry time', async () => {
    const clock = new VirtualClock();
    const p = learning(clock);
    const at: number[] = [];
    const t0 = clock.now();
    const waits = Array.from({ length: 40 }, () => p.wait(never).then(() => at.push(clock.now() - t0)));
    await clock.advance(0);
    assert.equal(at.length, SLOW_START_WRITES);
    for (let i = 0; i < SLOW_START_WRITES; i++) p.onSuccess(t0);
    await clock.advance(300);
    const engagedAt = clock.now() - t0;
    const before = at.length;
    p.onThrottle(2000, clock.now());
    assert.notEqual(p.qps, undefined, 'engaged by the throttle');
    await clock.runAll();
    await Promise.all(waits);
    const after = at.slice(before);
    assert.equal(after.length, 40 - before);
    assert.ok(Math.min(...after) >= engagedAt + 2000, `nothing before the retry time: ${after.join(',')}`);
  });

  it('a learning pacer that disengages carries on at the rate it learnt, until the next pause', () => {
    const clock = new VirtualClock();
    const s = new SlowStart(clock);
    s.restartAt(40);
    for (let i = 0; i < 40; i++) assert.equal(s.reserve(), 0, `write ${i} of the learnt bucket`);
    assert.ok(s.reserve() > 0);
  });

  it('past its cap the rate is flat and every wait finite', async () => {
    const clock = new VirtualClock();
    const s = new SlowStart(clock);
    // Busy for an hour without a pause: 10·2^3600 is not a number; the cap is.
    for (let t = 0; t < 3_600_000; t += 500) {
      const ms = s.reserve();
      assert.ok(Number.isFinite(ms) && ms <= 1000, `wait ${ms} at ${t} ms`);
      await clock.advance(500);
    }
    assert.ok(s.nextWriteInMs() <= Math.ceil(1000 / SLOW_START_MAX_QPS));
  });

  it('property: over any prefix of a busy period, no more writes start than the bucket allows', async () => {
    const seed = Number(process.env['FC_SEED'] ?? Date.now() % 1_000_000);
    console.log(`# slow-start property seed ${seed} (FC_SEED=${seed} to replay)`);
    await fc.assert(
      fc.asyncProperty(
        fc.array(fc.integer({ min: 0, max: 900 }), { minLength: 1, maxLength: 80 }),
        async (gaps) => {
          const clock = new VirtualClock();
          const p = learning(clock);
          const t0 = clock.now();
          const at: number[] = [];
          const waits: Promise<void>[] = [];
          // Arrivals never pause 1 s, so the whole run is one slow start from t0.
          for (const gap of gaps) {
            await clock.advance(gap);
            for (let i = 0; i < 5; i++) waits.push(p.wait(never).then(() => void at.push(clock.now() - t0)));
          }
          await clock.runAll();
          await Promise.all(waits);
          at.sort((a, b) => a - b);
          at.forEach((t, i) => assert.ok(i + 1 <= allowed(t) + 1e-6, `${i + 1} writes by ${t} ms`));
        },
      ),
      { seed, numRuns: 100 },
    );
  });
});
