import assert from 'node:assert/strict';
import { test } from 'node:test';
import { resyncDelayMs, safetyResyncPeriodMs } from './backoff.ts';

const P = 30 * 60_000;

test('R109: after throttled lists the resync comes at 0.1 P, doubling, at most P; otherwise P (R49)', () => {
  assert.equal(safetyResyncPeriodMs(P, 0), P);
  assert.deepEqual(
    [1, 2, 3, 4, 5, 6].map((n) => safetyResyncPeriodMs(P, n) / P),
    [0.1, 0.2, 0.4, 0.8, 1, 1],
  );
});

test('R49: the resync delay is drawn in [0.9 P, 1.1 P]', () => {
  assert.equal(
    resyncDelayMs(P, () => 0),
    0.9 * P,
  );
  assert.equal(
    resyncDelayMs(P, () => 0.5),
    P,
  );
  assert.ok(Math.abs(resyncDelayMs(P, () => 1) - 1.1 * P) < 1e-6);
});
