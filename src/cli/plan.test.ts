// R119: `plan` prints the route table's room now and after the plan.
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import type { ReconcilePlan } from '../core/plan.ts';
import { formatRoom } from './plan.ts';

const plan = (creates: number, deletes: number): ReconcilePlan =>
  ({
    creates: new Array(creates).fill({}),
    deletes: new Array(deletes).fill({}),
  }) as unknown as ReconcilePlan;

const room = {
  container: 'route table rtb-0abc',
  limit: 50,
  used: 47,
  cluster: 45,
  others: 2,
  left: 3,
  raise: 'request an increase',
};

describe('plan: route table room (R119)', () => {
  it('prints what the table holds, what is left and what is left after the plan', () => {
    assert.equal(
      formatRoom(room, plan(2, 1)),
      'Route table room: route table rtb-0abc holds 47 of its limit of 50 routes (45 of this cluster, 2 others): 3 left, 2 after this plan\n',
    );
  });

  it('names the creates the cloud would refuse and how to raise the limit', () => {
    assert.match(
      formatRoom(room, plan(5, 0)),
      /0 after this plan \(2 create\(s\) would be refused: request an increase\)\n$/,
    );
  });

  it('says so when the provider cannot tell', () => {
    assert.match(formatRoom(undefined, plan(1, 0)), /^Route table room: unknown/);
  });
});
