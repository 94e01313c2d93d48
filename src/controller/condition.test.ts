// SPEC §9.2 TestUpdateNetworkingCondition (8 cases) + the Calico scenario.
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { PermanentError } from '../core/errors.ts';
import type { NodeCondition } from '../core/types.ts';
import { harness, ip } from '../testing/harness.ts';

const cond = (status: string, reason: string): NodeCondition => ({
  type: 'NetworkUnavailable',
  status,
  reason,
  message: 'set by someone',
  lastTransitionTime: new Date(0),
  lastHeartbeatTime: new Date(0),
});

function setup(existing: NodeCondition | undefined, routesCreated: boolean) {
  const h = harness({
    nodes: [
      {
        name: 'node-1',
        uid: '01',
        podCIDRs: ['10.120.0.0/24'],
        addresses: ip('10.0.1.1'),
        conditions: [
          { type: 'Ready', status: 'True', reason: 'KubeletReady' },
          ...(existing ? [existing] : []),
        ],
      },
    ],
  });
  if (!routesCreated) h.cloud.failNext(1, ['create'], () => new PermanentError('unsupported'));
  return h;
}

const cases: [string, NodeCondition | undefined, boolean, string | undefined][] = [
  ['TC1', undefined, true, 'False/RouteCreated'],
  ['TC2', undefined, false, 'True/NoRouteCreated'],
  ['TC3', cond('False', 'RouteCreated'), true, undefined],
  ['TC4', cond('False', 'CalicoIsUp'), true, 'False/RouteCreated'],
  ['TC5', cond('False', 'ExternalCNI'), true, 'False/RouteCreated'],
  ['TC6', cond('True', 'SomeOtherReason'), false, 'True/NoRouteCreated'],
  ['TC7', cond('False', 'RouteCreated'), false, 'True/NoRouteCreated'],
  ['TC8', cond('True', 'NoRouteCreated'), false, undefined],
];

const MESSAGE: Record<string, string> = {
  'False/RouteCreated': 'RouteController created a route',
  'True/NoRouteCreated': 'RouteController failed to create a route',
};

describe('TestUpdateNetworkingCondition (SPEC §9.2)', () => {
  for (const [t, existing, created, expected] of cases) {
    it(`${t} existing ${existing ? `${existing.status}/${existing.reason}` : 'none'}, routesCreated=${created} → ${expected ?? 'no patch'}`, async () => {
      const h = setup(existing, created);
      await h.reconcile();
      if (expected === undefined) {
        assert.equal(h.cluster.patches.length, 0);
        return;
      }
      assert.equal(h.cluster.patches.length, 1);
      const c = h.cluster.patches[0]!.condition;
      assert.equal(`${c.status}/${c.reason}`, expected);
      assert.equal(c.message, MESSAGE[expected]);
      assert.equal((c.lastTransitionTime as Date).getTime(), h.clock.now(), 'R31: transition time is now');
      assert.equal((c.lastHeartbeatTime as Date).getTime(), h.clock.now());
    });
  }

  it('TC9 TestUpdateNetworkingConditionWithCalicoScenario: one patch replaces CalicoIsUp, Ready untouched', async () => {
    const h = setup(cond('False', 'CalicoIsUp'), true);
    await h.reconcile();
    assert.equal(h.cluster.patches.length, 1);
    const node = h.cluster.get('node-1')!;
    const nu = node.status!.conditions!.filter((c) => c.type === 'NetworkUnavailable');
    assert.equal(nu.length, 1);
    assert.equal(nu[0]!.status, 'False');
    assert.equal(nu[0]!.reason, 'RouteCreated');
    assert.equal(nu[0]!.message, 'RouteController created a route');
    assert.equal(node.status!.conditions!.find((c) => c.type === 'Ready')?.reason, 'KubeletReady');
  });

  it('R32: a 409 is retried in place, a 404 is ignored, other errors make the outcome error', async () => {
    const h = setup(undefined, true);
    h.cluster.failPatches(2, 409);
    const r = await h.reconcile();
    assert.equal(r.outcome, 'changed');
    assert.equal(h.cluster.patches.length, 1);
    assert.equal(h.conditions()['node-1'], 'False/RouteCreated');

    const g = setup(undefined, true);
    g.cluster.failPatches(1, 404);
    assert.equal((await g.reconcile()).outcome, 'changed');
    assert.equal(g.logger.messages().filter((m) => m.startsWith('Error updating node')).length, 0);

    const e = setup(undefined, true);
    e.cluster.failPatches(1, 500);
    assert.equal((await e.reconcile()).outcome, 'error');
    assert.ok(e.logger.messages().includes('Error updating node node-1: injected status 500'));
  });
});
