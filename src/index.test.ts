import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { runExample } from '../examples/custom-provider.ts';
import * as lib from './index.ts';

describe('public API', () => {
  it('the README example runs: a custom provider gets the route and the node its condition', async () => {
    const r = await runExample();
    assert.deepEqual(r.routes, ['10.244.1.0/24 -> node-a']);
    assert.equal(r.condition, 'False/RouteCreated');
  });
  it('empty clusterCIDRs throw the upstream message (R10)', () => {
    const cluster = new lib.MemoryCluster();
    assert.throws(
      () =>
        new lib.RouteController({
          routes: new lib.MemoryRoutes(),
          nodes: cluster,
          statusWriter: cluster,
          clusterCIDRs: [],
        }),
      { message: 'RouteController: Must specify clusterCIDR.' },
    );
  });
  it('registers the built-in providers', () => {
    lib.registerBuiltinProviders();
    assert.deepEqual(lib.registeredCloudProviders(), [
      'aws',
      'azure',
      'gce',
      'hcloud',
      'linux',
      'memory',
      'openstack',
    ]);
  });
});
