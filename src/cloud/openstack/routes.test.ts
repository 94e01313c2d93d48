// OpenStackRoutes against an in-memory Neutron (the NeutronApi port): batching, splitting,
// R2/R3 and address pairs. The real Neutron runs in test/integration/openstack.test.ts.
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import fc from 'fast-check';
import { ConflictError, PermanentError, QuotaExceededError } from '../../core/errors.ts';
import type { CallOptions, Node, NodeLister, OperationResult, Route } from '../../core/types.ts';
import type { AddressPair, ExtraRoute, NeutronApi, Port, Router } from './neutron.ts';
import { OpenStackRoutes } from './routes.ts';
import { canonicalIP } from './targets.ts';

class MemoryNeutron implements NeutronApi {
  routes: ExtraRoute[] = [];
  revision = 1;
  ext = new Set(['extraroute', 'extraroute-atomic', 'allowed-address-pairs']);
  /** Next hops Neutron refuses (not on a router subnet). */
  unroutable = new Set<string>();
  maxRoutes = 100;
  ports: (Port & { pairs: AddressPair[] })[] = [];
  calls: string[] = [];
  /** Runs before the next setRoutes: "another writer". */
  beforeSet: (() => void) | undefined;

  private check(routes: readonly ExtraRoute[]): void {
    const bad = routes.find((r) => this.unroutable.has(r.nexthop));
    if (bad) throw new PermanentError(`HTTP 400 InvalidRoutes: ${bad.nexthop} is not connected with router`);
    if (routes.length > this.maxRoutes) throw new QuotaExceededError('HTTP 409 OverQuota');
  }
  private router(): Router {
    return { id: 'r', routes: [...this.routes], revision: this.revision };
  }
  extensions(): Promise<Set<string>> {
    this.calls.push('extensions');
    return Promise.resolve(this.ext);
  }
  getRouter(): Promise<Router> {
    this.calls.push('get');
    return Promise.resolve(this.router());
  }
  async setRoutes(_id: string, routes: readonly ExtraRoute[], revision: number | undefined): Promise<Router> {
    this.calls.push('set');
    this.beforeSet?.();
    this.beforeSet = undefined;
    if (revision !== undefined && revision !== this.revision) throw new ConflictError('HTTP 412');
    this.check(routes);
    this.routes = [...routes];
    this.revision++;
    return this.router();
  }
  async addExtraRoutes(_id: string, add: readonly ExtraRoute[]): Promise<Router> {
    this.calls.push(`add ${add.length}`);
    const next = [
      ...this.routes,
      ...add.filter(
        (a) => !this.routes.some((r) => r.destination === a.destination && r.nexthop === a.nexthop),
      ),
    ];
    this.check(next);
    this.routes = next;
    this.revision++;
    return this.router();
  }
  async removeExtraRoutes(_id: string, remove: readonly ExtraRoute[]): Promise<Router> {
    this.calls.push(`remove ${remove.length}`);
    this.routes = this.routes.filter(
      (r) => !remove.some((x) => x.destination === r.destination && x.nexthop === r.nexthop),
    );
    this.revision++;
    return this.router();
  }
  routerNetworkIds(): Promise<string[]> {
    this.calls.push('networks');
    return Promise.resolve(['net']);
  }
  portsByIp(ip: string): Promise<Port[]> {
    return Promise.resolve(
      this.ports.filter((p) => p.fixedIps.some((f) => canonicalIP(f) === canonicalIP(ip))),
    );
  }
  async setAddressPairs(port: Port, pairs: readonly AddressPair[]): Promise<void> {
    this.calls.push(`pairs ${port.id}`);
    const p = this.ports.find((x) => x.id === port.id)!;
    p.pairs = [...pairs];
  }
  list(): string[] {
    return this.routes.map((r) => `${r.destination}=${r.nexthop}`).sort();
  }
}

function lister(...nodes: [string, ...string[]][]): NodeLister {
  const all: Node[] = nodes.map(([name, ...ips]) => ({
    metadata: { name, uid: `u-${name}` },
    status: { addresses: ips.map((address) => ({ type: 'InternalIP', address })) },
  }));
  return { get: (n) => all.find((x) => x.metadata?.name === n), list: () => all };
}

function opts(): CallOptions {
  return { signal: new AbortController().signal, reconcile: { id: 'r', scratch: new Map() } };
}

function create(nodes: NodeLister, node: string, cidr: string): { nameHint: string; route: Route } {
  return {
    nameHint: `u-${node}`,
    route: {
      name: '',
      targetNode: node,
      targetNodeAddresses: nodes.get(node)?.status?.addresses ?? [],
      enableNodeAddresses: false,
      destinationCIDR: cidr,
      blackhole: false,
    },
  };
}

const kinds = (r: OperationResult[]): string[] =>
  r.map((x) => (x.ok ? 'ok' : String((x.error as { kind?: string }).kind)));

for (const atomic of [true, false]) {
  describe(`OpenStackRoutes (${atomic ? 'extraroute-atomic' : 'If-Match read-modify-write'})`, () => {
    const setup = (...nodes: [string, ...string[]][]) => {
      const neutron = new MemoryNeutron();
      if (!atomic) neutron.ext.delete('extraroute-atomic');
      const n = lister(...nodes);
      return { neutron, nodes: n, routes: new OpenStackRoutes({ neutron, routerId: 'r', nodes: n }) };
    };

    test('a plan is one write (or one per kind), and every create returns its listed route (R66)', async () => {
      const { neutron, nodes, routes } = setup(['a', '10.0.0.1', 'fd00::1'], ['b', '10.0.0.2']);
      neutron.routes = [{ destination: '10.244.9.0/24', nexthop: '10.0.0.9' }];
      const o = opts();
      const [stale] = await routes.listRoutes('c', o);
      assert.equal(stale!.blackhole, true);
      const r = await routes.applyRoutes(
        'c',
        {
          deletes: [stale!],
          creates: [
            create(nodes, 'a', '10.244.1.0/24'),
            create(nodes, 'a', 'fd00:10:244:1::/64'),
            create(nodes, 'b', '10.244.2.0/24'),
          ],
        },
        o,
      );
      assert.deepEqual(kinds(r), ['ok', 'ok', 'ok', 'ok']);
      assert.deepEqual(neutron.list(), [
        '10.244.1.0/24=10.0.0.1',
        '10.244.2.0/24=10.0.0.2',
        'fd00:10:244:1::/64=fd00::1',
      ]);
      const writes = neutron.calls.filter((c) => !['extensions', 'get', 'networks'].includes(c));
      assert.deepEqual(
        writes,
        atomic ? ['remove 1', 'add 3'] : ['set'],
        'the listed router is reused, not read again',
      );
      assert.deepEqual(
        r.slice(1).map((x) => (x.ok ? x.route?.name : '')),
        ['10.244.1.0/24 via 10.0.0.1', 'fd00:10:244:1::/64 via fd00::1', '10.244.2.0/24 via 10.0.0.2'],
      );
      assert.deepEqual(
        (await routes.listRoutes('c', opts())).map(
          (x) => `${x.destinationCIDR}=${x.targetNode}${x.blackhole ? '!' : ''}`,
        ),
        ['10.244.1.0/24=a', 'fd00:10:244:1::/64=a', '10.244.2.0/24=b'],
      );
    });

    test('one unroutable node: its create fails permanently, the others land', async () => {
      const { neutron, nodes, routes } = setup(['a', '10.0.0.1'], ['far', '10.9.9.9'], ['b', '10.0.0.2']);
      neutron.unroutable.add('10.9.9.9');
      const r = await routes.applyRoutes(
        'c',
        {
          deletes: [],
          creates: [
            create(nodes, 'a', '10.244.1.0/24'),
            create(nodes, 'far', '10.244.5.0/24'),
            create(nodes, 'b', '10.244.2.0/24'),
          ],
        },
        opts(),
      );
      assert.deepEqual(kinds(r), ['ok', 'permanent', 'ok']);
      assert.deepEqual(neutron.list(), ['10.244.1.0/24=10.0.0.1', '10.244.2.0/24=10.0.0.2']);
    });

    test('R3: a delete removes only the listed (destination, next hop); R2: a create replaces another next hop', async () => {
      const { neutron, nodes, routes } = setup(['a', '10.0.0.1']);
      neutron.routes = [
        { destination: '10.244.1.0/24', nexthop: '10.0.0.7' },
        { destination: '10.244.3.0/24', nexthop: '10.0.0.8' },
      ];
      const gone: Route = {
        name: '10.244.3.0/24 via 10.0.0.99',
        targetNode: '',
        targetNodeAddresses: [],
        enableNodeAddresses: false,
        destinationCIDR: '10.244.3.0/24',
        blackhole: true,
      };
      const r = await routes.applyRoutes(
        'c',
        { deletes: [gone], creates: [create(nodes, 'a', '10.244.1.0/24')] },
        opts(),
      );
      assert.deepEqual(kinds(r), ['ok', 'ok']);
      assert.deepEqual(neutron.list(), ['10.244.1.0/24=10.0.0.1', '10.244.3.0/24=10.0.0.8']);
    });

    test('E6: a node without an InternalIP of the family costs no call', async () => {
      const { neutron, nodes, routes } = setup(['v4', '10.0.0.1']);
      const r = await routes.applyRoutes(
        'c',
        { deletes: [], creates: [create(nodes, 'v4', 'fd00:1::/64')] },
        opts(),
      );
      assert.deepEqual(kinds(r), ['permanent']);
      assert.deepEqual(neutron.calls, ['extensions']);
    });

    test('port security: the pod CIDR is allowed before the route and revoked after its delete; port security off is left alone', async () => {
      const { neutron, nodes, routes } = setup(['a', '10.0.0.1'], ['b', '10.0.0.2']);
      neutron.ports = [
        {
          id: 'pa',
          networkId: 'net',
          fixedIps: ['10.0.0.1'],
          portSecurity: true,
          pairs: [{ ip_address: '192.0.2.1' }],
          revision: 1,
        },
        { id: 'pb', networkId: 'net', fixedIps: ['10.0.0.2'], portSecurity: false, pairs: [], revision: 1 },
      ];
      await routes.applyRoutes(
        'c',
        { deletes: [], creates: [create(nodes, 'a', '10.244.1.0/24'), create(nodes, 'b', '10.244.2.0/24')] },
        opts(),
      );
      assert.deepEqual(
        neutron.ports[0]!.pairs.map((p) => p.ip_address),
        ['192.0.2.1', '10.244.1.0/24'],
      );
      assert.deepEqual(neutron.ports[1]!.pairs, []);
      const pairsAt = neutron.calls.indexOf('pairs pa');
      assert.ok(
        pairsAt >= 0 && pairsAt < neutron.calls.findIndex((c) => c.startsWith('add') || c === 'set'),
        'pair before route',
      );
      const listed = (await routes.listRoutes('c', opts())).filter((r) => r.targetNode === 'a');
      await routes.applyRoutes('c', { deletes: listed, creates: [] }, opts());
      assert.deepEqual(
        neutron.ports[0]!.pairs.map((p) => p.ip_address),
        ['192.0.2.1'],
      );
    });

    test('a node re-addressed on the same port: the route moves, the port keeps its pair', async () => {
      const { neutron, nodes, routes } = setup(['a', '10.0.0.2']);
      neutron.routes = [{ destination: '10.244.1.0/24', nexthop: '10.0.0.1' }];
      neutron.ports = [
        {
          id: 'pa',
          networkId: 'net',
          fixedIps: ['10.0.0.1', '10.0.0.2'],
          portSecurity: true,
          pairs: [{ ip_address: '10.244.1.0/24' }],
          revision: 1,
        },
      ];
      const o = opts();
      const [stale] = await routes.listRoutes('c', o);
      assert.equal(stale!.blackhole, true, "10.0.0.1 is no longer a's address");
      const r = await routes.applyRoutes(
        'c',
        { deletes: [stale!], creates: [create(nodes, 'a', '10.244.1.0/24')] },
        o,
      );
      assert.deepEqual(kinds(r), ['ok', 'ok']);
      assert.deepEqual(neutron.list(), ['10.244.1.0/24=10.0.0.2']);
      assert.deepEqual(
        neutron.ports[0]!.pairs.map((p) => p.ip_address),
        ['10.244.1.0/24'],
      );
    });

    test('without the extraroute extensions every call fails permanently', async () => {
      const { neutron, routes } = setup();
      neutron.ext = new Set(['router']);
      await assert.rejects(
        routes.listRoutes('c', opts()),
        (e: Error) => e instanceof PermanentError && /extraroute/.test(e.message),
      );
    });

    if (!atomic) {
      test('another writer between read and write: conflict for the batch, their route kept on the retry', async () => {
        const { neutron, nodes, routes } = setup(['a', '10.0.0.1']);
        const o = opts();
        await routes.listRoutes('c', o);
        neutron.beforeSet = () => {
          neutron.routes.push({ destination: '172.16.0.0/16', nexthop: '10.0.0.250' });
          neutron.revision++;
        };
        assert.deepEqual(
          kinds(
            await routes.applyRoutes('c', { deletes: [], creates: [create(nodes, 'a', '10.244.1.0/24')] }, o),
          ),
          ['conflict'],
        );
        assert.deepEqual(
          kinds(
            await routes.applyRoutes('c', { deletes: [], creates: [create(nodes, 'a', '10.244.1.0/24')] }, o),
          ),
          ['ok'],
        );
        assert.deepEqual(neutron.list(), ['10.244.1.0/24=10.0.0.1', '172.16.0.0/16=10.0.0.250']);
      });
    }

    test('property: any interleaving of plans never removes a route the plans did not name', async () => {
      const seed = Number(process.env['SEED'] ?? Date.now() % 2 ** 31);
      console.log(`openstack routes property seed=${seed} (SEED=${seed} to repeat)`);
      await fc.assert(
        fc.asyncProperty(
          fc.array(
            fc.record({
              node: fc.integer({ min: 0, max: 5 }),
              cidr: fc.integer({ min: 0, max: 7 }),
              del: fc.boolean(),
            }),
            { maxLength: 20 },
          ),
          async (steps) => {
            const names = [0, 1, 2, 3, 4, 5].map((i): [string, string] => [`n${i}`, `10.0.0.${10 + i}`]);
            const { neutron, nodes, routes } = setup(...names);
            const foreign = { destination: '192.168.0.0/16', nexthop: '10.0.0.250' };
            neutron.routes = [foreign];
            for (const s of steps) {
              const cidr = `10.244.${s.cidr}.0/24`;
              if (s.del) {
                const listed = (await routes.listRoutes('c', opts())).filter(
                  (r) => r.destinationCIDR === cidr,
                );
                await routes.applyRoutes('c', { deletes: listed, creates: [] }, opts());
                assert.ok(!neutron.routes.some((r) => r.destination === cidr));
              } else {
                await routes.applyRoutes(
                  'c',
                  { deletes: [], creates: [create(nodes, `n${s.node}`, cidr)] },
                  opts(),
                );
                assert.deepEqual(
                  neutron.routes.filter((r) => r.destination === cidr).map((r) => r.nexthop),
                  [`10.0.0.${10 + s.node}`],
                );
              }
              assert.ok(
                neutron.routes.some((r) => r.destination === foreign.destination),
                'the foreign route survives',
              );
            }
          },
        ),
        { seed, numRuns: 50 },
      );
    });
  });
}
