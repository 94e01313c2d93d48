import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import type { Node } from '../../core/types.ts';
import { destinationOf, instanceIdFromProviderID, instanceNodeMap, sameDestination } from './targets.ts';

describe('aws targets', () => {
  test('instance IDs from providerIDs', () => {
    assert.equal(instanceIdFromProviderID('aws:///us-east-1a/i-0123456789abcdef0'), 'i-0123456789abcdef0');
    assert.equal(instanceIdFromProviderID('aws:////i-0abc'), 'i-0abc');
    assert.equal(instanceIdFromProviderID('aws://us-east-1a/i-0abc'), 'i-0abc');
    assert.equal(instanceIdFromProviderID('i-0abc'), 'i-0abc');
    assert.equal(instanceIdFromProviderID('aws:///us-east-1a/fargate-ip-10-0-1-5.ec2.internal'), undefined);
    assert.equal(instanceIdFromProviderID('gce://project/zone/vm-1'), undefined);
    assert.equal(instanceIdFromProviderID(''), undefined);
    assert.equal(instanceIdFromProviderID(undefined), undefined);
  });

  test('instance → node map skips nodes without an instance', () => {
    const nodes: Node[] = [
      { metadata: { name: 'a' }, spec: { providerID: 'aws:///us-east-1a/i-aaa' } },
      { metadata: { name: 'b' }, spec: {} },
      { metadata: { name: 'c' }, spec: { providerID: 'kind://docker/c' } },
      { metadata: { name: 'd' }, spec: { providerID: 'aws:///us-east-1b/i-ddd' } },
    ];
    const map = instanceNodeMap({ get: () => undefined, list: () => nodes });
    assert.deepEqual(
      [...map],
      [
        ['i-aaa', 'a'],
        ['i-ddd', 'd'],
      ],
    );
  });

  test('destination field by family', () => {
    assert.deepEqual(destinationOf('10.244.1.0/24'), { DestinationCidrBlock: '10.244.1.0/24' });
    assert.deepEqual(destinationOf('fd00:10:244:1::/64'), { DestinationIpv6CidrBlock: 'fd00:10:244:1::/64' });
    for (const bad of ['10.244.1.0', '10.244.1.0/33', 'fd00::/129', 'bogus/24', '', '10.0.0.0/x']) {
      assert.throws(() => destinationOf(bad), {
        name: 'PermanentError',
        message: /not an IPv4 or IPv6 CIDR/,
      });
    }
  });

  test('IPv6 destinations compare by value', () => {
    assert.ok(sameDestination('10.244.1.0/24', '10.244.1.0/24'));
    assert.ok(!sameDestination('10.244.1.0/24', '10.244.2.0/24'));
    assert.ok(sameDestination('FD00:0:0:1::/64', 'fd00::1:0:0:0:0/64'));
    assert.ok(!sameDestination('fd00::/64', 'fd00::/56'));
  });
});
