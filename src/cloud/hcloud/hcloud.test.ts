import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import type { Node } from '../../core/types.ts';
import { HcloudRoutes } from './index.ts';
import { callOpts, lister, NET, node, paths, rejectsWithKind, route, setup } from './testing/helpers.ts';

describe('HcloudRoutes: list, create, delete', () => {
  it('lists every route, mapping gateways to nodes; unknown gateways are blackholes (R1)', async (t) => {
    const { fake, routes } = await setup(t);
    fake.addNetwork({
      id: NET,
      name: 'k8s',
      ipRange: '10.0.0.0/16',
      routes: [
        { destination: '10.244.1.0/24', gateway: '10.0.1.1' },
        { destination: '10.244.3.0/24', gateway: '10.0.3.1' },
        { destination: '10.244.9.0/24', gateway: '10.0.9.9' },
        { destination: '0.0.0.0/0', gateway: '10.0.2.1' },
      ],
    });
    const got = await routes.listRoutes('c', callOpts());
    assert.deepEqual(
      got.map((r) => [r.destinationCIDR, r.targetNode, r.blackhole, r.name]),
      [
        ['10.244.1.0/24', 'node-1', false, '10.0.1.1-10.244.1.0/24'],
        ['10.244.3.0/24', '', true, '10.0.3.1-10.244.3.0/24'],
        ['10.244.9.0/24', '', true, '10.0.9.9-10.244.9.0/24'],
        ['0.0.0.0/0', 'node-2', false, '10.0.2.1-0.0.0.0/0'],
      ],
    );
    assert.ok(got.every((r) => !r.enableNodeAddresses && r.targetNodeAddresses.length === 0));
  });

  it('creates a route and polls its action until success', async (t) => {
    const { fake, routes } = await setup(t, { actionDurationMs: 30 });
    const created = await routes.createRoute('c', 'uid-1', route('node-1', '10.244.1.0/24'), callOpts());
    assert.deepEqual(fake.routes(NET), [{ destination: '10.244.1.0/24', gateway: '10.0.1.1' }]);
    assert.deepEqual(paths(fake, 'POST'), [`/v1/networks/${NET}/actions/add_route`]);
    assert.ok(paths(fake, 'GET').some((p) => p.startsWith('/v1/actions/')));
    const listed = await routes.listRoutes('c', callOpts());
    assert.deepEqual(
      listed.map((r) => [r.destinationCIDR, r.targetNode]),
      [['10.244.1.0/24', 'node-1']],
    );
    assert.deepEqual(created, listed[0], 'R66: createRoute returns the route as listRoutes lists it');
  });

  it('createRoute is idempotent: same destination and gateway is success without a mutation (R2)', async (t) => {
    const { fake, routes } = await setup(t);
    fake.addNetwork({
      id: NET,
      name: 'k8s',
      ipRange: '10.0.0.0/16',
      routes: [{ destination: '10.244.1.0/24', gateway: '10.0.1.1' }],
    });
    // Host bits set on the node's CIDR still match the cloud's canonical form.
    await routes.createRoute('c', 'uid-1', route('node-1', '10.244.1.7/24'), callOpts());
    await routes.createRoute('c', 'uid-1', route('node-1', '10.244.1.0/24'), callOpts());
    assert.equal(fake.mutations().length, 0);
  });

  it('replaces a route to another gateway: delete_route, then add_route (R2)', async (t) => {
    const { fake, routes } = await setup(t);
    fake.addNetwork({
      id: NET,
      name: 'k8s',
      ipRange: '10.0.0.0/16',
      routes: [{ destination: '10.244.1.0/24', gateway: '10.0.2.1' }],
    });
    await routes.createRoute('c', 'uid-1', route('node-1', '10.244.1.0/24'), callOpts());
    assert.deepEqual(
      fake.mutations().map((r) => [r.path.split('/').pop(), r.body]),
      [
        ['delete_route', { destination: '10.244.1.0/24', gateway: '10.0.2.1' }],
        ['add_route', { destination: '10.244.1.0/24', gateway: '10.0.1.1' }],
      ],
    );
    assert.deepEqual(fake.routes(NET), [{ destination: '10.244.1.0/24', gateway: '10.0.1.1' }]);
  });

  it('deletes a listed route; a missing one, or one replaced since listing, is success (R3)', async (t) => {
    const { fake, routes } = await setup(t);
    fake.addNetwork({
      id: NET,
      name: 'k8s',
      ipRange: '10.0.0.0/16',
      routes: [
        { destination: '10.244.1.0/24', gateway: '10.0.1.1' },
        { destination: '10.244.9.0/24', gateway: '10.0.9.9' },
      ],
    });
    const listed = await routes.listRoutes('c', callOpts());
    await routes.deleteRoute('c', listed[1]!, callOpts());
    assert.deepEqual(fake.routes(NET), [{ destination: '10.244.1.0/24', gateway: '10.0.1.1' }]);
    await routes.deleteRoute('c', listed[1]!, callOpts());
    assert.equal(fake.mutations().length, 1);

    // Replaced by node-2's route after listing: the listed route is gone, the new one stays.
    await routes.createRoute('c', 'uid-2', route('node-2', '10.244.1.0/24'), callOpts());
    const before = fake.mutations().length;
    await routes.deleteRoute('c', listed[0]!, callOpts());
    assert.equal(fake.mutations().length, before);
    assert.deepEqual(fake.routes(NET), [{ destination: '10.244.1.0/24', gateway: '10.0.2.1' }]);
    // IPv6 can never be present on a Hetzner network.
    await routes.deleteRoute('c', { ...route('node-1', 'fd00::/64'), name: 'x' }, callOpts());
  });

  it('looks up private IPs once per reconcile via opts.reconcile.scratch', async (t) => {
    const { fake, routes } = await setup(t);
    const scratch = new Map<string, unknown>();
    await routes.createRoute('c', 'u', route('node-1', '10.244.1.0/24'), callOpts(undefined, scratch));
    await routes.createRoute('c', 'u', route('node-1', '10.244.11.0/24'), callOpts(undefined, scratch));
    assert.deepEqual(
      paths(fake, 'GET').filter((p) => p.startsWith('/v1/servers')),
      ['/v1/servers/101'],
    );
    // After a list in the same reconcile, creates need no server lookups at all.
    const scratch2 = new Map<string, unknown>();
    await routes.listRoutes('c', callOpts(undefined, scratch2));
    const n = fake.requests.length;
    await routes.createRoute('c', 'u', route('node-2', '10.244.2.0/24'), callOpts(undefined, scratch2));
    assert.ok(!fake.requests.slice(n).some((r) => r.path.startsWith('/v1/servers')));
  });

  it('pages through all servers to map gateways', async (t) => {
    const { fake, client } = await setup(t);
    const nodes: Node[] = [];
    for (let i = 1; i <= 120; i++) {
      const id = 1000 + i;
      fake.addServer({ id, name: `w-${i}`, privateNet: [{ network: NET, ip: `10.0.100.${i}` }] });
      nodes.push(node(`w-${i}`, `hcloud://${id}`));
    }
    fake.addNetwork({
      id: NET,
      name: 'k8s',
      ipRange: '10.0.0.0/16',
      routes: [{ destination: '10.244.120.0/24', gateway: '10.0.100.120' }],
    });
    const routes = new HcloudRoutes({ client, network: NET, nodes: lister(nodes) });
    const got = await routes.listRoutes('c', callOpts());
    assert.equal(got[0]?.targetNode, 'w-120');
    assert.deepEqual(
      paths(fake, 'GET').filter((p) => p.startsWith('/v1/servers')),
      ['/v1/servers?page=1&per_page=50', '/v1/servers?page=2&per_page=50', '/v1/servers?page=3&per_page=50'],
    );
  });

  it('resolves the network by name once', async (t) => {
    const { fake, routes } = await setup(t, {}, 'k8s');
    await routes.createRoute('c', 'u', route('node-1', '10.244.1.0/24'), callOpts());
    await routes.listRoutes('c', callOpts());
    assert.deepEqual(
      paths(fake, 'GET').filter((p) => p.startsWith('/v1/networks?')),
      ['/v1/networks?name=k8s'],
    );
    const { routes: missing } = await setup(t, {}, 'nope');
    await rejectsWithKind(missing.listRoutes('c', callOpts()), 'permanent', /network "nope" not found/);
  });

  it('serialises concurrent mutations on the network (R5)', async (t) => {
    const { fake, routes } = await setup(t, { actionDurationMs: 3 });
    const creates = Array.from({ length: 25 }, (_, i) =>
      routes.createRoute('c', 'u', route(i % 2 ? 'node-1' : 'node-2', `10.244.${i}.0/24`), callOpts()),
    );
    await Promise.all(creates);
    assert.equal(fake.routes(NET).length, 25);
    assert.ok(fake.requests.every((r) => r.status < 400));
  });
});
