import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import fc from 'fast-check';
import type { Node, NodeLister, Route } from '../../core/types.ts';
import { extraRouteOf, nodesByAddress, routeName, toRoute } from './targets.ts';
import { httpError } from './errors.ts';

function nodes(list: Node[]): NodeLister {
  return { get: (n) => list.find((x) => x.metadata?.name === n), list: () => list };
}

describe('openstack targets', () => {
  test('the route name carries the next hop; any (CIDR, IP) pair round-trips', () => {
    const seed = Number(process.env['SEED'] ?? Date.now() % 2 ** 31);
    console.log(`openstack targets property seed=${seed} (SEED=${seed} to repeat)`);
    fc.assert(
      fc.property(
        fc.oneof(fc.ipV4(), fc.ipV6()),
        fc.ipV4(),
        fc.integer({ min: 8, max: 32 }),
        (hop, net, len) => {
          const destination = `${net}/${len}`;
          const route = {
            ...toRoute({ destination, nexthop: hop }, new Map()),
            destinationCIDR: destination,
          };
          assert.deepEqual(extraRouteOf(route), { destination, nexthop: hop });
        },
      ),
      { seed },
    );
  });

  test('a name that is not "<destination> via <ip>" or names another destination is not ours', () => {
    const base: Route = {
      name: '',
      targetNode: '',
      targetNodeAddresses: [],
      enableNodeAddresses: false,
      destinationCIDR: '10.244.1.0/24',
      blackhole: false,
    };
    assert.equal(extraRouteOf({ ...base, name: '10.244.1.0/24' }), undefined);
    assert.equal(extraRouteOf({ ...base, name: '10.244.2.0/24 via 10.0.0.1' }), undefined);
    assert.equal(extraRouteOf({ ...base, name: '10.244.1.0/24 via node-a' }), undefined);
    assert.equal(routeName({ destination: 'fd00::/64', nexthop: 'fd00::1' }), 'fd00::/64 via fd00::1');
  });

  test('next hops map to nodes by address, InternalIP first; a stale or unknown next hop is a blackhole', () => {
    const byAddress = nodesByAddress(
      nodes([
        {
          metadata: { name: 'a' },
          status: {
            addresses: [
              { type: 'ExternalIP', address: '203.0.113.5' },
              { type: 'InternalIP', address: '10.0.0.1' },
              { type: 'InternalIP', address: '10.0.0.2' },
            ],
          },
        },
        {
          metadata: { name: 'nat' },
          status: { addresses: [{ type: 'InternalIP', address: '203.0.113.5' }] },
        },
      ]),
    );
    const r = (nexthop: string) => {
      const x = toRoute({ destination: '10.244.1.0/24', nexthop }, byAddress);
      return `${x.targetNode || '-'}${x.blackhole ? '!' : ''}`;
    };
    assert.equal(r('10.0.0.1'), 'a');
    assert.equal(r('10.0.0.2'), 'a!', "a's address, but not its next hop: replaced (R20)");
    assert.equal(r('203.0.113.5'), 'nat', "InternalIP wins over another node's ExternalIP");
    assert.equal(r('10.0.0.99'), '-!');
  });

  test('errors: quota, conflict, throttling and bad requests by type and status', () => {
    const k = (status: number, type: string, retry?: number) =>
      httpError('x', status, JSON.stringify({ NeutronError: { type, message: 'm', detail: '' } }), retry)
        .kind;
    assert.equal(k(400, 'RoutesExhausted'), 'quota_exceeded');
    assert.equal(k(409, 'OverQuota'), 'quota_exceeded');
    assert.equal(k(412, 'RevisionNumberConstraintFailed'), 'conflict');
    assert.equal(k(409, 'RouterInUse'), 'conflict');
    assert.equal(k(429, ''), 'throttled');
    assert.equal(k(503, '', 1000), 'throttled');
    assert.equal(k(503, ''), 'retryable');
    assert.equal(k(400, 'InvalidRoutes'), 'permanent');
    assert.equal(k(404, 'RouterNotFound'), 'permanent');
    assert.match(
      httpError('get router r', 502, '<html>Bad  Gateway</html>').message,
      /^get router r: HTTP 502: <html>Bad Gateway<\/html>$/,
    );
  });
});
