import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import type { Node } from '../../core/types.ts';
import {
  canonicalIP,
  cidrToRfc1035,
  isDualStack,
  nextHopFor,
  nodesByLowerName,
  routeName,
  routeOwner,
  sameName,
} from './targets.ts';

function node(name: string, podCIDRs: string[], addresses: string[]): Node {
  return {
    metadata: { name },
    spec: { podCIDRs },
    status: { addresses: addresses.map((address) => ({ type: 'InternalIP', address })) },
  };
}

describe('azure route names (cloud-provider-azure azure_routes.go)', () => {
  test('cidrToRfc1035 removes ":", "." and "/" as upstream does', () => {
    assert.equal(cidrToRfc1035('10.244.1.0/24'), '102441024');
    assert.equal(cidrToRfc1035('fd00:10:244:1::/64'), 'fd0010244164');
  });

  test('single stack: the node name; dual stack: <node>____<cidr>', () => {
    assert.equal(routeName('node1', '10.244.1.0/24', false), 'node1');
    assert.equal(routeName('node1', '10.244.1.0/24', true), 'node1____102441024');
    assert.equal(routeName('node1', 'fd00:10:244:1::/64', true), 'node1____fd0010244164');
  });

  test('a name maps to exactly one node: node1 never owns node10 routes', () => {
    assert.equal(routeOwner('node1', '10.244.1.0/24'), 'node1');
    assert.equal(routeOwner('node10', '10.244.10.0/24'), 'node10');
    assert.equal(routeOwner('node10____1024410024', '10.244.10.0/24'), 'node10');
    assert.equal(routeOwner('node1____102441024', '10.244.1.0/24'), 'node1');
    for (const n of ['node10', 'node10____1024410024', 'node1-a', 'node1.example']) {
      assert.notEqual(routeOwner(n, '10.244.10.0/24'), 'node1', n);
    }
  });

  test('names are case-insensitive; the owner is lowercased', () => {
    assert.equal(routeOwner('Node1', '10.244.1.0/24'), 'node1');
    assert.equal(routeOwner('NODE1____FD0010244164', 'fd00:10:244:1::/64'), 'node1');
    assert.ok(sameName('Node1', 'node1'));
    assert.ok(!sameName('node1', 'node10'));
    assert.ok(!sameName(undefined, 'node1'));
  });

  test('a dual-stack suffix matches the prefix as written or in canonical form', () => {
    assert.equal(routeOwner('ds____fd00102442064', 'fd00:10:244:2:0::/64'), 'ds');
    assert.equal(routeOwner('ds____fd0010244264', 'FD00:10:244:2:0::/64'), 'ds');
    assert.equal(routeOwner('ds____fd0010244364', 'fd00:10:244:2::/64'), undefined);
  });

  test("foreign names are no one's: wrong suffix, not a node name, too many separators", () => {
    assert.equal(routeOwner('node1____102441024', '10.244.5.0/24'), undefined, 'suffix of another prefix');
    assert.equal(routeOwner('to_firewall', '0.0.0.0/0'), undefined);
    assert.equal(routeOwner('a____b____c', '10.244.1.0/24'), undefined);
    assert.equal(routeOwner('-bad', '10.244.1.0/24'), undefined);
    assert.equal(routeOwner('', '10.244.1.0/24'), undefined);
  });

  test('next hop: the first InternalIP of the route family', () => {
    const n = node('a', ['10.244.1.0/24', 'fd00:10:244:1::/64'], ['fd00::1', '10.0.0.1', '10.0.0.2']);
    n.status!.addresses!.unshift({ type: 'ExternalIP', address: '203.0.113.1' });
    assert.equal(nextHopFor(n, 4), '10.0.0.1');
    assert.equal(nextHopFor(n, 6), 'fd00::1');
    assert.equal(nextHopFor(node('b', [], ['10.0.0.1']), 6), undefined);
  });

  test('dual stack means pod CIDRs of both families on the node', () => {
    assert.ok(isDualStack(node('a', ['10.244.1.0/24', 'fd00:10:244:1::/64'], [])));
    assert.ok(!isDualStack(node('a', ['10.244.1.0/24'], [])));
    assert.ok(!isDualStack(node('a', ['fd00:10:244:1::/64'], [])));
    assert.ok(!isDualStack({ metadata: { name: 'x' } }));
  });

  test('canonical IPs and the lowercase node map', () => {
    assert.equal(canonicalIP('FD00:0:0::1'), 'fd00::1');
    assert.equal(canonicalIP('nope'), undefined);
    const nodes = [node('Mixed', [], []), node('b', [], [])];
    const map = nodesByLowerName({ get: () => undefined, list: () => nodes });
    assert.equal(map.get('mixed')?.metadata?.name, 'Mixed');
  });
});
