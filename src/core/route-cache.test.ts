// The route cache on its own (SPEC R65–R67): validity, expiry, write-through.
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { RouteCache } from './route-cache.ts';
import type { Node, Route } from './types.ts';

const node = (name: string, uid = `uid-${name}`, address = '10.0.0.1', providerID = `p://${name}`): Node => ({
  metadata: { name, uid },
  spec: { providerID },
  status: { addresses: [{ type: 'InternalIP', address }] },
});

const route = (dest: string, target: string, name = `r-${dest}`): Route => ({
  name,
  targetNode: target,
  targetNodeAddresses: [],
  enableNodeAddresses: false,
  destinationCIDR: dest,
  blackhole: false,
});

describe('RouteCache (R65–R67)', () => {
  it('is invalid until the first list, and after invalidate()', () => {
    const c = new RouteCache(60_000);
    assert.equal(c.isValid(0), false);
    assert.equal(c.snapshot(0), undefined);
    c.fill([route('10.0.0.0/24', 'a')], 0, []);
    assert.equal(c.isValid(0), true);
    c.invalidate();
    assert.equal(c.isValid(1), false);
    assert.equal(c.snapshot(1), undefined);
  });

  it('expires at its maximum age (R65), measured from the list', () => {
    const c = new RouteCache(60_000);
    c.fill([], 1000, []);
    assert.equal(c.isValid(60_999), true);
    assert.equal(c.isValid(61_000), false, 'exactly the maximum age is too old');
    c.fill([], 61_000, []);
    assert.equal(c.isValid(61_000), true, 'a new list renews it');
  });

  it('a confirmed delete drops that very route object, not another one for the same destination', () => {
    const a = route('10.0.0.0/24', 'a');
    const b = route('10.0.0.0/24', 'b', 'other');
    const c = new RouteCache(60_000);
    c.fill([a, b], 0, []);
    c.deleted({ ...a });
    assert.equal(c.snapshot(0)!.length, 2, 'an equal copy is not the listed route');
    c.deleted(a);
    assert.deepEqual(
      c.snapshot(0)!.map((e) => e.route),
      [b],
    );
  });

  it('a confirmed create is kept as the provider lists it, or as requested and marked unlisted (R66)', () => {
    const c = new RouteCache(60_000);
    c.fill([], 0, []);
    const requested = { ...route('10.0.1.0/24', 'n1'), name: '' };
    const listed = route('10.0.1.0/24', 'n1', 'cloud-name');
    c.created(requested, listed, node('n1'));
    c.created(route('10.0.2.0/24', 'n2', ''), undefined, node('n2'));
    const snap = c.snapshot(0)!;
    assert.deepEqual(
      snap.map((e) => [e.route.name, e.listed]),
      [
        ['cloud-name', true],
        ['', false],
      ],
    );
    assert.notEqual(snap[1]!.route, requested, 'a copy, so later edits of the request do not leak in');
  });

  it('writes through to nothing while invalid: a later fill is the only source', () => {
    const c = new RouteCache(60_000);
    c.created(route('10.0.1.0/24', 'n1'), undefined, node('n1'));
    c.deleted(route('10.0.1.0/24', 'n1'));
    assert.equal(c.snapshot(0), undefined);
    c.fill([], 0, []);
    assert.deepEqual(c.snapshot(0), []);
  });

  it('a snapshot is a copy: planning against it cannot change the cache', () => {
    const c = new RouteCache(60_000);
    c.fill([route('10.0.0.0/24', 'a')], 0, []);
    c.snapshot(0)!.pop();
    assert.equal(c.snapshot(0)!.length, 1);
  });

  it('R67: a node whose UID, provider ID or addresses changed since its routes were seen is reported', () => {
    const c = new RouteCache(60_000);
    c.fill([route('10.0.0.0/24', 'a')], 0, [node('a'), node('b')]);
    assert.equal(c.changedTarget([node('a'), node('b'), node('new')]), undefined, 'a new name is no change');
    assert.equal(c.changedTarget([node('b')]), undefined, 'a deleted node is no change');
    assert.equal(c.changedTarget([node('a', 'uid-2')]), 'a', 're-created');
    assert.equal(c.changedTarget([node('a', 'uid-a', '10.0.0.2')]), 'a', 'new address');
    assert.equal(c.changedTarget([node('a', 'uid-a', '10.0.0.1', 'p://other')]), 'a', 'new instance');
    const reordered: Node = {
      ...node('a'),
      status: {
        addresses: [
          { type: 'Hostname', address: 'a' },
          { type: 'InternalIP', address: '10.0.0.1' },
        ],
      },
    };
    c.fill([], 0, [reordered]);
    assert.equal(
      c.changedTarget([{ ...reordered, status: { addresses: [...reordered.status!.addresses!].reverse() } }]),
      undefined,
      'order is no change',
    );
    c.created(route('10.0.9.0/24', 'n'), undefined, node('n'));
    assert.equal(c.changedTarget([node('n', 'uid-new')]), 'n', 'a created route remembers its node');
  });

  it('R67: only the fields the provider maps targets by count (routeTargetKeys)', () => {
    const c = new RouteCache(60_000, ['uid']);
    c.fill([], 0, [node('a')]);
    assert.equal(c.changedTarget([node('a', 'uid-a', '10.9.9.9', 'p://moved')]), undefined);
    assert.equal(c.changedTarget([node('a', 'uid-2')]), 'a');
  });
});
