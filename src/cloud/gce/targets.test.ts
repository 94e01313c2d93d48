import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import fc from 'fast-check';
import { TEST_SEED } from '../../../test/support/seed.ts';
import { parseInstanceURL, parseProviderID, routeName, sameNetwork, truncateClusterName } from './targets.ts';

const UID = '0b3a9c7e-1111-4d7e-9a57-0000000000a1';

describe('gce route names and instances', () => {
  test("upstream's names for IPv4: the cluster name cut to 26, a hyphen, the hint (63 characters at most)", () => {
    assert.equal(routeName('kubernetes', UID, '10.244.1.0/24'), `kubernetes-${UID}`);
    const long = 'a-very-long-cluster-name-that-goes-on';
    assert.equal(truncateClusterName(long), 'a-very-long-cluster-name-t');
    assert.equal(routeName(long, UID, '10.244.1.0/24'), `a-very-long-cluster-name-t-${UID}`);
    assert.equal(routeName(long, UID, '10.244.1.0/24').length, 63);
  });

  test('IPv6 gets its own name, never an IPv4 one', () => {
    const v6 = routeName('kubernetes', UID, 'fd00:10:244:2::/64');
    assert.equal(v6, `kubernetes-${UID.replace(/-/g, '')}-v6`);
    assert.notEqual(v6, routeName('kubernetes', UID, '10.244.2.0/24'));
    assert.ok(routeName('a-very-long-cluster-name-that-goes-on', UID, 'fd00::/64').length <= 63);
  });

  test('a name Compute Engine would refuse is a permanent error naming cluster and hint', () => {
    assert.throws(() => routeName('Kubernetes', UID, '10.244.1.0/24'), {
      name: 'PermanentError',
      message: /cluster name "Kubernetes", name hint .* is not a valid Compute Engine name/,
    });
    assert.throws(() => routeName('kubernetes', 'x'.repeat(60), '10.244.1.0/24'), { name: 'PermanentError' });
  });

  test('property: for UID hints, dual-stack names differ, are valid and 63 characters at most', () => {
    fc.assert(
      fc.property(fc.stringMatching(/^[a-z][-a-z0-9]{0,40}$/), fc.uuid(), (cluster, uid) => {
        const a = routeName(cluster, uid, '10.0.0.0/24');
        const b = routeName(cluster, uid, 'fd00::/64');
        return a !== b && a.length <= 63 && b.length <= 63;
      }),
      { seed: TEST_SEED, numRuns: 200 },
    );
  });

  test('providerIDs and instance URLs in every form', () => {
    assert.deepEqual(parseProviderID('gce://my-project/europe-west1-b/node-1'), {
      project: 'my-project',
      zone: 'europe-west1-b',
      name: 'node-1',
    });
    assert.equal(parseProviderID('aws:///eu-central-1a/i-0123'), undefined);
    assert.equal(parseProviderID(undefined), undefined);
    const ref = { project: 'p-1', zone: 'us-central1-a', name: 'vm' };
    assert.deepEqual(
      parseInstanceURL('https://www.googleapis.com/compute/v1/projects/p-1/zones/us-central1-a/instances/vm'),
      ref,
    );
    assert.deepEqual(parseInstanceURL('projects/p-1/zones/us-central1-a/instances/vm'), ref);
    assert.equal(parseInstanceURL('zones/us-central1-a/instances/vm'), undefined);
    assert.ok(
      sameNetwork('https://compute.googleapis.com/compute/v1/projects/p-1/global/networks/n', 'p-1', 'n'),
    );
    assert.ok(
      !sameNetwork('https://www.googleapis.com/compute/v1/projects/p-2/global/networks/n', 'p-1', 'n'),
    );
    assert.ok(!sameNetwork(undefined, 'p-1', 'n'));
  });
});
