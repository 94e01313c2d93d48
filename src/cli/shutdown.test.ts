// R63 timing in virtual time: finish within 20 s, else abort and wait 5 s;
// a second signal exits 1 at once.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { sleep, VirtualClock } from '../core/clock.ts';
import { MemoryLogger } from '../core/ports.ts';
import { Shutdown } from './shutdown.ts';

function setup() {
  const clock = new VirtualClock();
  const exits: number[] = [];
  const s = new Shutdown({ clock, logger: new MemoryLogger(), exit: (c) => exits.push(c) });
  return { clock, exits, s };
}

test('a reconcile that finishes within the grace period is not aborted', async () => {
  const { clock, s } = setup();
  s.onSignal('SIGTERM');
  assert.equal(s.requested, true);
  const running = sleep(clock, 15_000);
  const drained = s.drain(running);
  await clock.advance(15_000);
  assert.equal(await drained, 'finished');
  assert.equal(s.hardStop.signal.aborted, false);
  assert.equal(clock.pendingTimers(), 0);
});

test('after 20 s the in-flight calls are aborted; 5 s later the wait ends', async () => {
  const { clock, s } = setup();
  s.onSignal('SIGINT');
  // A reconcile that only ends when its signal aborts.
  const stoppable = new Promise<void>((resolve) =>
    s.hardStop.signal.addEventListener('abort', () => resolve()),
  );
  const d1 = s.drain(stoppable);
  await clock.advance(19_999);
  assert.equal(s.hardStop.signal.aborted, false);
  await clock.advance(1);
  assert.equal(s.hardStop.signal.aborted, true);
  assert.equal(await d1, 'aborted');

  const other = setup();
  other.s.onSignal('SIGTERM');
  const d2 = other.s.drain(new Promise(() => {}));
  await other.clock.advance(25_000);
  assert.equal(await d2, 'abandoned');
});

test('a second signal exits 1 immediately', () => {
  const { s, exits } = setup();
  s.onSignal('SIGTERM');
  assert.deepEqual(exits, []);
  s.onSignal('SIGTERM');
  assert.deepEqual(exits, [1]);
});
