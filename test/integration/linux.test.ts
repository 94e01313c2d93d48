// The linux provider against real routing tables: a router namespace and three
// node namespaces (test/support/netns.ts). Reachability between pod addresses,
// measured with ping, is the proof that the routes do what they claim.
//
// Needs root and network namespaces; run scripts/netns-prereqs.sh first. Skips
// visibly without them, except under CI=true where that is a failure.
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { errorKind } from '../../src/core/errors.ts';
import type { CallOptions, Node, NodeLister, Route } from '../../src/core/types.ts';
import { linuxProviderFactory } from '../../src/cloud/linux/index.ts';
import type { LinuxRoutes } from '../../src/cloud/linux/index.ts';
import { createTopology, netnsSupport } from '../support/netns.ts';
import type { NodeHost, Topology } from '../support/netns.ts';

const support = await netnsSupport();
const skip =
  !support.ok && process.env.CI !== 'true'
    ? `needs root and network namespaces (${support.reason}); run scripts/netns-prereqs.sh as root`
    : false;
if (skip) console.log(`# SKIP linux integration: ${skip}`);

function opts(signal: AbortSignal = new AbortController().signal): CallOptions {
  return { signal, reconcile: { id: 'it', scratch: new Map() } };
}

describe('linux provider on real network namespaces', { skip }, () => {
  let topo: Topology;
  let nodes: Node[];
  let routes: LinuxRoutes;
  let n1: NodeHost;
  let n2: NodeHost;
  let n3: NodeHost;
  const lister: NodeLister = {
    get: (name) => nodes.find((n) => n.metadata?.name === name),
    list: () => nodes,
  };

  /** The route the controller asks for (R23); withAddresses false exercises the lister fallback. */
  function podRoute(n: NodeHost, family: 4 | 6, withAddresses = true): Route {
    const node = nodes.find((x) => x.metadata?.name === n.name);
    return {
      name: '',
      targetNode: n.name,
      targetNodeAddresses: withAddresses ? (node?.status?.addresses ?? []) : [],
      enableNodeAddresses: false,
      destinationCIDR: family === 4 ? n.podCIDRv4 : n.podCIDRv6,
      blackhole: false,
    };
  }

  async function listed(): Promise<string[]> {
    const rs = await routes.listRoutes('test', opts());
    return rs.map((r) => `${r.destinationCIDR}>${r.targetNode}${r.blackhole ? ' blackhole' : ''}`).sort();
  }

  async function listedRoute(dst: string): Promise<Route> {
    const r = (await routes.listRoutes('test', opts())).find((x) => x.destinationCIDR === dst);
    assert.ok(r, `${dst} not listed`);
    return r;
  }

  /** `ip route show` in the router, both families unless told. */
  async function routerRoutes(args: string[], families: readonly (4 | 6)[] = [4, 6]): Promise<string> {
    const out = await Promise.all(
      families.map((f) => topo.ip(topo.router, [`-${f}`, 'route', 'show', ...args])),
    );
    return out.join('').trim();
  }

  before(async () => {
    if (!support.ok) throw new Error(`CI=true but network namespaces are unusable: ${support.reason}`);
    topo = await createTopology({ nodes: 3 });
    nodes = topo.k8sNodes();
    [n1, n2, n3] = topo.nodes as [NodeHost, NodeHost, NodeHost];
    const provider = await linuxProviderFactory(`netns: ${topo.router}\n`, lister);
    routes = provider.routes() as LinuxRoutes;
  });

  after(async () => {
    await topo?.teardown();
  });

  it('starts with pods unreachable and no managed routes', async () => {
    assert.deepEqual(await listed(), []);
    for (const family of [4, 6] as const) {
      assert.equal(await topo.podPing(n1, n2, family), false, `IPv${family} n1→n2`);
      assert.equal(await topo.podPing(n2, n1, family), false, `IPv${family} n2→n1`);
    }
  });

  it('IPv4: pods reach each other only once both nodes have routes', async () => {
    await routes.createRoute('test', 'uid-2', podRoute(n2, 4), opts());
    // The request gets there, the reply has no way back.
    assert.equal(await topo.podPing(n1, n2, 4), false);
    await routes.createRoute('test', 'uid-1', podRoute(n1, 4, false), opts());
    assert.equal(await topo.podPing(n1, n2, 4), true);
    assert.equal(await topo.podPing(n2, n1, 4), true);
    assert.equal(await topo.podPing(n1, n3, 4), false, 'n3 has no route yet');
    assert.deepEqual(await listed(), ['10.244.1.0/24>node-1', '10.244.2.0/24>node-2']);
    assert.match(await routerRoutes(['proto', '200'], [4]), /10\.244\.1\.0\/24 via 172\.30\.1\.2 dev vn1/);
  });

  it('IPv6: pods reach each other only once both nodes have routes', async () => {
    assert.equal(await topo.podPing(n1, n2, 6), false);
    await routes.createRoute('test', 'uid-1', podRoute(n1, 6), opts());
    assert.equal(await topo.podPing(n1, n2, 6), false);
    await routes.createRoute('test', 'uid-2', podRoute(n2, 6, false), opts());
    assert.equal(await topo.podPing(n1, n2, 6), true);
    assert.equal(await topo.podPing(n2, n1, 6), true);
    assert.equal(await topo.podPing(n1, n3, 6), false);
    assert.deepEqual(await listed(), [
      '10.244.1.0/24>node-1',
      '10.244.2.0/24>node-2',
      'fd00:244:0:1::/64>node-1',
      'fd00:244:0:2::/64>node-2',
    ]);
  });

  it('creates idempotently and replaces a route to the wrong node (R2)', async () => {
    const before = await routerRoutes(['table', 'all']);
    await routes.createRoute('test', 'uid-2', podRoute(n2, 4), opts());
    await routes.createRoute('test', 'uid-2', podRoute(n2, 6), opts());
    assert.equal(await routerRoutes(['table', 'all']), before);

    await routes.createRoute('test', 'uid-3', { ...podRoute(n3, 4), destinationCIDR: n2.podCIDRv4 }, opts());
    assert.equal(await topo.podPing(n1, n2, 4), false, 'n2 pod CIDR now points at n3');
    await routes.createRoute('test', 'uid-2', podRoute(n2, 4), opts());
    assert.equal(await topo.podPing(n1, n2, 4), true);
    assert.equal(await routerRoutes(['table', 'all']), before);
  });

  it('never lists, deletes or replaces routes of another protocol or table', async () => {
    await topo.ip(topo.router, ['route', 'add', n3.podCIDRv4, 'via', n3.internalIPv4, 'proto', 'static']);
    await topo.ip(topo.router, ['route', 'add', '10.99.0.0/24', 'via', n1.internalIPv4, 'proto', '201']);
    await topo.ip(topo.router, [
      'route',
      'add',
      n1.podCIDRv4,
      'via',
      n3.internalIPv4,
      'table',
      '100',
      'proto',
      '200',
    ]);
    await topo.ip(topo.router, ['-6', 'route', 'add', n3.podCIDRv6, 'via', n3.internalIPv6, 'proto', 'boot']);
    const foreign = (await routerRoutes(['table', 'all']))
      .split('\n')
      .filter((l) => !/proto (200|kernel)/.test(l) || / table 100 /.test(l));
    assert.equal(foreign.length, 4, `hand-made routes:\n${foreign.join('\n')}`);

    const mine = await listed();
    assert.ok(
      !mine.some((r) => r.startsWith('10.99.') || r.startsWith('10.244.3.') || r.startsWith('fd00:244:0:3:')),
    );
    assert.equal(mine.length, 4);

    // The hand-made route for n3's pod CIDR blocks ours instead of being taken over.
    await assert.rejects(routes.createRoute('test', 'uid-3', podRoute(n3, 4), opts()), (e: unknown) => {
      assert.equal(errorKind(e), 'permanent');
      assert.match((e as Error).message, /already has a route for 10\.244\.3\.0\/24 .*proto static/);
      return true;
    });
    await assert.rejects(
      routes.createRoute('test', 'uid-3', podRoute(n3, 6), opts()),
      /via fd00:30:3::2 proto boot/,
    );

    // Deleting everything we list leaves the others in place.
    for (const r of await routes.listRoutes('test', opts())) await routes.deleteRoute('test', r, opts());
    assert.deepEqual(await listed(), []);
    const left = (await routerRoutes(['table', 'all'])).split('\n');
    for (const line of foreign) assert.ok(left.includes(line), `lost foreign route: ${line}`);
    assert.match(
      await routerRoutes(['table', '100'], [4]),
      /10\.244\.1\.0\/24 via 172\.30\.3\.2 dev vn3 proto 200/,
    );

    // Another table is another container: a provider configured for it sees only that route.
    const t100 = (await linuxProviderFactory(`{"netns": "${topo.router}", "table": 100}`, lister)).routes()!;
    const in100 = await t100.listRoutes('test', opts());
    assert.deepEqual(
      in100.map((r) => [r.destinationCIDR, r.targetNode, r.blackhole]),
      [['10.244.1.0/24', 'node-3', false]],
    );

    await topo.ip(topo.router, ['route', 'del', n3.podCIDRv4, 'proto', 'static']);
    await topo.ip(topo.router, ['-6', 'route', 'del', n3.podCIDRv6, 'proto', 'boot']);
    await t100.deleteRoute('test', in100[0]!, opts());
  });

  it('deleteRoute removes reachability; deleting a missing route succeeds', async () => {
    for (const n of [n1, n2, n3]) {
      for (const family of [4, 6] as const)
        await routes.createRoute('test', 'uid', podRoute(n, family), opts());
    }
    for (const family of [4, 6] as const) {
      assert.equal(await topo.podPing(n1, n3, family), true, `IPv${family} n1→n3 with routes`);
    }
    const r3v4 = await listedRoute(n3.podCIDRv4);
    const r3v6 = await listedRoute(n3.podCIDRv6);
    assert.deepEqual(r3v4.targetNodeAddresses, [{ type: 'InternalIP', address: n3.internalIPv4 }]);
    await routes.deleteRoute('test', r3v4, opts());
    await routes.deleteRoute('test', r3v6, opts());
    for (const family of [4, 6] as const) {
      assert.equal(await topo.podPing(n1, n3, family), false, `IPv${family} n1→n3 after delete`);
      assert.equal(await topo.podPing(n1, n2, family), true, `IPv${family} n1→n2 untouched`);
    }
    await routes.deleteRoute('test', r3v4, opts());
    await routes.deleteRoute('test', r3v6, opts());
    await routes.deleteRoute('test', { ...podRoute(n3, 4), destinationCIDR: '10.244.77.0/24' }, opts());
  });

  it('deletes only the listed next hop, not a newer route to the same destination', async () => {
    const stale = await listedRoute(n2.podCIDRv4);
    await routes.createRoute('test', 'uid', { ...podRoute(n3, 4), destinationCIDR: n2.podCIDRv4 }, opts());
    await routes.deleteRoute('test', stale, opts());
    assert.match(await routerRoutes(['exact', n2.podCIDRv4], [4]), /via 172\.30\.3\.2/);
    await routes.createRoute('test', 'uid', podRoute(n2, 4), opts());
  });

  it('lists an unknown next hop and undeliverable types as blackhole, and deletes them', async () => {
    await topo.ip(topo.router, ['route', 'add', '10.244.9.0/24', 'via', '172.30.1.99', 'proto', '200']);
    await topo.ip(topo.router, ['route', 'add', 'blackhole', '10.244.8.0/24', 'proto', '200']);
    await topo.ip(topo.router, ['route', 'add', 'unreachable', '10.244.7.0/24', 'proto', '200']);
    await topo.ip(topo.router, [
      '-6',
      'route',
      'add',
      'fd00:244:0:9::/64',
      'via',
      'fd00:30:1::99',
      'proto',
      '200',
    ]);
    const all = await listed();
    for (const dst of ['10.244.9.0/24', '10.244.8.0/24', '10.244.7.0/24', 'fd00:244:0:9::/64']) {
      assert.ok(all.includes(`${dst}> blackhole`), `${dst} in ${all.join(', ')}`);
    }
    // A node leaving turns its route into a blackhole too.
    const saved = nodes;
    nodes = nodes.filter((n) => n.metadata?.name !== n2.name);
    assert.ok((await listed()).includes(`${n2.podCIDRv4}> blackhole`));
    nodes = saved;

    for (const r of await routes.listRoutes('test', opts())) {
      if (r.blackhole) await routes.deleteRoute('test', r, opts());
    }
    assert.ok(!(await listed()).some((r) => r.endsWith('blackhole')));
    assert.equal((await listed()).length, 4, 'the four routes of n1 and n2 stay');
  });

  it('maps kernel refusals to permanent errors', async () => {
    const offLink = (family: 4 | 6, address: string): Route => ({
      ...podRoute(n3, family),
      destinationCIDR: family === 4 ? '10.244.50.0/24' : 'fd00:244:0:50::/64',
      targetNodeAddresses: [{ type: 'InternalIP', address }],
    });
    for (const [family, address] of [
      [4, '192.0.2.1'],
      [6, '2001:db8::1'],
    ] as const) {
      await assert.rejects(
        routes.createRoute('test', 'uid', offLink(family, address), opts()),
        (e: unknown) => {
          assert.equal(errorKind(e), 'permanent', (e as Error).message);
          return true;
        },
      );
    }
  });

  it('does nothing once aborted', async () => {
    const before = await routerRoutes(['table', 'all']);
    const signal = AbortSignal.abort();
    await assert.rejects(routes.createRoute('test', 'uid', podRoute(n3, 4), opts(signal)), {
      name: 'AbortError',
    });
    const listedN1 = await listedRoute(n1.podCIDRv4);
    await assert.rejects(routes.deleteRoute('test', listedN1, opts(signal)), { name: 'AbortError' });
    assert.equal(await routerRoutes(['table', 'all']), before);
  });
});
