import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { VirtualClock } from '../core/clock.ts';
import {
  EventCorrelator,
  Lru,
  aggregateKey,
  eventKey,
  eventName,
  spamKey,
  type CoreV1Event,
  type CorrelateResult,
} from './event-correlator.ts';

function ev(clock: VirtualClock, node = 'n1', message = 'boom', reason = 'FailedToCreateRoute'): CoreV1Event {
  const ts = new Date(clock.now()).toISOString().replace(/\.\d+Z$/, 'Z');
  return {
    apiVersion: 'v1',
    kind: 'Event',
    metadata: { name: eventName(node, clock.now()), namespace: 'default' },
    involvedObject: { apiVersion: 'v1', kind: 'Node', name: node, uid: `uid-${node}` },
    reason,
    message,
    type: 'Warning',
    source: { component: 'route_controller', host: 'h' },
    reportingComponent: 'route_controller',
    reportingInstance: 'h',
    firstTimestamp: ts,
    lastTimestamp: ts,
    count: 1,
  };
}

function accepted(r: CorrelateResult): Extract<CorrelateResult, { skip: false }> {
  assert.equal(r.skip, false);
  return r as Extract<CorrelateResult, { skip: false }>;
}

describe('EventCorrelator', () => {
  test('identical repeats become count patches of the first event', async () => {
    const clock = new VirtualClock();
    const c = new EventCorrelator({ clock });
    const first = accepted(c.correlate(ev(clock)));
    assert.equal(first.patch, undefined);
    assert.equal(first.event.count, 1);
    c.updateState(first.key, {
      ...first.event,
      metadata: { ...first.event.metadata, resourceVersion: '77' },
    });
    await clock.advance(60_000);
    const second = accepted(c.correlate(ev(clock)));
    assert.equal(second.event.metadata.name, first.event.metadata.name);
    assert.equal(second.event.metadata.resourceVersion, '77');
    assert.equal(second.event.firstTimestamp, first.event.firstTimestamp);
    assert.equal(second.event.count, 2);
    assert.deepEqual(second.patch, { count: 2, lastTimestamp: second.event.lastTimestamp, message: 'boom' });
    assert.notEqual(second.event.lastTimestamp, first.event.lastTimestamp);
    const third = accepted(c.correlate(ev(clock)));
    assert.equal(third.patch?.count, 3);
  });

  test('spam filter: burst 25 per object, then one per 5 minutes; objects are independent', async () => {
    const clock = new VirtualClock();
    const c = new EventCorrelator({ clock });
    const results = Array.from({ length: 30 }, (_, i) => c.correlate(ev(clock, 'n1', `m${i % 3}`)));
    assert.equal(results.filter((r) => !r.skip).length, 25);
    assert.equal(c.correlate(ev(clock, 'n2')).skip, false);
    await clock.advance(299_000);
    assert.equal(c.correlate(ev(clock, 'n1')).skip, true);
    await clock.advance(1_000);
    assert.equal(c.correlate(ev(clock, 'n1')).skip, false);
    assert.equal(c.correlate(ev(clock, 'n1')).skip, true);
    await clock.advance(600_000);
    assert.equal(c.correlate(ev(clock, 'n1')).skip, false);
    assert.equal(c.correlate(ev(clock, 'n1')).skip, false);
    assert.equal(c.correlate(ev(clock, 'n1')).skip, true);
  });

  test('10 distinct messages of one reason within 10 minutes aggregate into one counted event', async () => {
    const clock = new VirtualClock();
    const c = new EventCorrelator({ clock });
    const out = Array.from({ length: 12 }, (_, i) => accepted(c.correlate(ev(clock, 'n1', `after ${i}s`))));
    assert.ok(
      out.slice(0, 9).every((r) => r.patch === undefined && !r.event.message.startsWith('(combined')),
    );
    const agg = out[9]!;
    assert.equal(agg.event.message, '(combined from similar events): after 9s');
    assert.equal(agg.event.count, 1);
    assert.equal(agg.key, aggregateKey(ev(clock)));
    c.updateState(agg.key, agg.event);
    assert.equal(out[10]!.event.count, 2);
    assert.equal(out[10]!.event.metadata.name, agg.event.metadata.name);
    assert.deepEqual(out[11]!.patch, {
      count: 3,
      lastTimestamp: out[11]!.event.lastTimestamp,
      message: '(combined from similar events): after 11s',
    });
    // After a quiet interval a new message is reported as itself again.
    await clock.advance(600_001);
    const fresh = accepted(c.correlate(ev(clock, 'n1', 'after 99s')));
    assert.equal(fresh.event.message, 'after 99s');
  });

  test('keys: spam by source+object, aggregation adds type/reason/reporter, identity adds message', () => {
    const clock = new VirtualClock();
    const a = ev(clock, 'n1', 'x');
    const b = ev(clock, 'n1', 'y', 'Other');
    assert.equal(spamKey(a), spamKey(b));
    assert.notEqual(aggregateKey(a), aggregateKey(b));
    assert.notEqual(eventKey(a), eventKey({ ...a, message: 'z' }));
    assert.equal(aggregateKey(a), aggregateKey({ ...a, message: 'z' }));
    assert.notEqual(spamKey(a), spamKey({ ...a, involvedObject: { ...a.involvedObject, uid: 'other' } }));
  });

  test('event names are <node>.<hex nanos> and unique within a millisecond', () => {
    const names = new Set(Array.from({ length: 100 }, () => eventName('node-1', 1_767_225_600_000)));
    assert.equal(names.size, 100);
    for (const n of names) assert.match(n, /^node-1\.[0-9a-f]+$/);
  });

  test('LRU keeps the most recently used entries', () => {
    const l = new Lru<number>(2);
    l.set('a', 1);
    l.set('b', 2);
    l.get('a');
    l.set('c', 3);
    assert.equal(l.get('b'), undefined);
    assert.equal(l.get('a'), 1);
    assert.equal(l.size, 2);
  });
});
