import assert from 'node:assert/strict';
import { test } from 'node:test';
import type { ReconcileReport } from '../controller/reconcile.ts';
import { fullGc, settleHeapAfterFirstList } from './settle-heap.ts';

const report = (source: 'list' | 'cache'): ReconcileReport => ({ source }) as ReconcileReport;

test('one full collection, 1 s after the first reconcile that listed; none for cached or later ones', () => {
  let collections = 0;
  const scheduled: number[] = [];
  const observe = settleHeapAfterFirstList(
    () => collections++,
    1000,
    (fn, ms) => {
      scheduled.push(ms);
      fn();
    },
  );
  observe(report('cache'));
  assert.equal(collections, 0, 'a cached reconcile leaves no list garbage');
  observe(report('list'));
  assert.deepEqual([collections, scheduled], [1, [1000]]);
  for (const s of ['list', 'cache', 'list'] as const) observe(report(s));
  assert.equal(collections, 1, 'once per process');
});

test('fullGc is V8 collection: an object only a WeakRef holds is gone after it', async () => {
  const gc = fullGc();
  const ref = new WeakRef({ payload: 'x'.repeat(1000) });
  // A WeakRef keeps its target for the rest of the job that made it.
  await new Promise((resolve) => setImmediate(resolve));
  gc();
  assert.ok(ref.deref() === undefined, 'collected');
});
