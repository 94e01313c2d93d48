// The openstack plug-in against the real neutron-server (PyPI `neutron`, ML2 + the L3 router
// plugin on SQLite) behind the Keystone stand-in (test/support/openstack.ts), in both of
// Neutron's extra-route flavours: `extraroute-atomic` (add/remove_extraroutes) and
// `extraroute` alone (the whole list, If-Match revision_number). Run: scripts/neutron.sh &&
// node --test test/integration/openstack.test.ts
import assert from 'node:assert/strict';
import * as fs from 'node:fs';
import { after, before, describe, test } from 'node:test';
import type {
  CallOptions,
  Node,
  NodeLister,
  OperationResult,
  Route,
  RoutePlan,
} from '../../src/core/types.ts';
import { buildOpenStackProvider } from '../../src/cloud/openstack/index.ts';
import type { OpenStackRoutes } from '../../src/cloud/openstack/routes.ts';
import { CREDENTIALS, OpenStack, neutronSkip } from '../support/openstack.ts';
import { getPki } from '../support/pki.ts';

const MAX_ROUTES = 10;

class Nodes implements NodeLister {
  readonly nodes = new Map<string, Node>();
  set(name: string, addresses: string[], podCIDRs: string[] = []): Node {
    const node: Node = {
      metadata: { name, uid: `uid-${name}` },
      spec: { podCIDRs },
      status: { addresses: addresses.map((address) => ({ type: 'InternalIP', address })) },
    };
    this.nodes.set(name, node);
    return node;
  }
  get(name: string): Node | undefined {
    return this.nodes.get(name);
  }
  list(): readonly Node[] {
    return [...this.nodes.values()];
  }
}

function call(): CallOptions {
  return { signal: new AbortController().signal, reconcile: { id: 'r', scratch: new Map() } };
}

function want(nodes: Nodes, name: string, cidr: string): { nameHint: string; route: Route } {
  const n = nodes.get(name)!;
  return {
    nameHint: n.metadata!.uid!,
    route: {
      name: '',
      targetNode: name,
      targetNodeAddresses: n.status!.addresses!,
      enableNodeAddresses: false,
      destinationCIDR: cidr,
      blackhole: false,
    },
  };
}

function cloudConf(os: OpenStack, routerId: string, auth: 'password' | 'appcred' = 'password'): string {
  const c = CREDENTIALS;
  const credentials =
    auth === 'password'
      ? `username = ${c.username}\npassword = "${c.password.replace(/["\\]/g, (m) => `\\${m}`)}"\nuser-domain-name = ${c.domain}\ntenant-id = ${c.projectId}`
      : `application-credential-id = ${c.appCredentialId}\napplication-credential-secret = ${c.appCredentialSecret}`;
  return `[Global]\nauth-url = ${os.authUrl}\n${credentials}\nregion = RegionOne\n\n[LoadBalancer]\nenabled = false\n\n[Route]\nrouter-id = ${routerId}\n`;
}

function listed(routes: Route[]): string[] {
  return routes
    .map((r) => `${r.destinationCIDR}=${r.targetNode || '-'}${r.blackhole ? ' blackhole' : ''}`)
    .sort();
}

function kinds(results: OperationResult[]): string[] {
  return results.map((r) => (r.ok ? 'ok' : ((r.error as { kind?: string }).kind ?? 'untyped')));
}

for (const atomic of [true, false]) {
  const flavour = atomic ? 'extraroute-atomic' : 'extraroute only (If-Match read-modify-write)';
  describe(`openstack plug-in on real Neutron: ${flavour}`, { ...neutronSkip(), timeout: 240_000 }, () => {
    let os: OpenStack;
    let routerId = '';
    let networkId = '';
    let nodes: Nodes;
    let routes: OpenStackRoutes;

    const apply = (plan: Partial<RoutePlan>, opts = call()): Promise<OperationResult[]> =>
      routes.applyRoutes('it', { deletes: plan.deletes ?? [], creates: plan.creates ?? [] }, opts);

    before(async () => {
      os = await OpenStack.start({ noAtomic: !atomic, maxRoutes: MAX_ROUTES });
      ({ routerId, networkId } = await os.topology());
      nodes = new Nodes();
      const provider = buildOpenStackProvider(
        cloudConf(os, routerId, atomic ? 'password' : 'appcred'),
        nodes,
      );
      assert.equal(provider.name, 'openstack');
      routes = provider.routes() as OpenStackRoutes;
    });

    after(async () => {
      await os?.stop();
    });

    test('creates dual-stack routes (nexthop = InternalIP of the family); lists them by node address', async () => {
      nodes.set('n1', ['10.0.0.11', 'fd00::11']);
      nodes.set('n2', ['10.0.0.12']);
      // Someone else's route on the same router: never touched.
      await os.setRoutes(routerId, [{ destination: '192.168.50.0/24', nexthop: '10.0.0.250' }]);
      const before = os.neutronRequests('PUT').length;
      const results = await apply({
        creates: [
          want(nodes, 'n1', '10.244.1.0/24'),
          want(nodes, 'n1', 'fd00:10:244:1::/64'),
          want(nodes, 'n2', '10.244.2.0/24'),
        ],
      });
      assert.deepEqual(kinds(results), ['ok', 'ok', 'ok']);
      assert.deepEqual(await os.routeList(routerId), [
        '10.244.1.0/24=10.0.0.11',
        '10.244.2.0/24=10.0.0.12',
        '192.168.50.0/24=10.0.0.250',
        'fd00:10:244:1::/64=fd00::11',
      ]);
      const writes = os
        .neutronRequests('PUT')
        .slice(before)
        .filter((r) => r.path.includes('/routers/'));
      if (atomic) {
        assert.deepEqual(
          writes.map((w) => w.path.replace(routerId, 'R')),
          ['/v2.0/routers/R/add_extraroutes'],
        );
      } else {
        assert.equal(writes.length, 1, 'one PUT of the whole list for the batch');
        assert.match(writes[0]!.ifMatch ?? '', /^revision_number=\d+$/);
      }
      assert.deepEqual(listed(await routes.listRoutes('it', call())), [
        '10.244.1.0/24=n1',
        '10.244.2.0/24=n2',
        '192.168.50.0/24=- blackhole',
        'fd00:10:244:1::/64=n1',
      ]);
    });

    test('create is idempotent; delete removes exactly the listed route and tolerates a missing one', async () => {
      assert.deepEqual(kinds(await apply({ creates: [want(nodes, 'n2', '10.244.2.0/24')] })), ['ok']);
      const list = await routes.listRoutes('it', call());
      const n2 = list.find((r) => r.targetNode === 'n2')!;
      assert.equal(n2.name, '10.244.2.0/24 via 10.0.0.12');
      assert.deepEqual(kinds(await apply({ deletes: [n2] })), ['ok']);
      assert.deepEqual(kinds(await apply({ deletes: [n2] })), ['ok'], 'already gone is success (R3)');
      assert.ok(!(await os.routeList(routerId)).includes('10.244.2.0/24=10.0.0.12'));
      assert.ok((await os.routeList(routerId)).includes('192.168.50.0/24=10.0.0.250'));
    });

    test('a next hop that no node has is a blackhole; a changed InternalIP makes the old route one', async () => {
      await os.setRoutes(routerId, [
        ...(await os.routes(routerId)),
        { destination: '10.244.9.0/24', nexthop: '10.0.0.99' },
      ]);
      nodes.set('n1', ['10.0.0.21', 'fd00::11']); // n1 moved; its old address is still a fixed IP of nothing
      const list = listed(await routes.listRoutes('it', call()));
      assert.ok(list.includes('10.244.9.0/24=- blackhole'), list.join());
      assert.ok(list.includes('10.244.1.0/24=- blackhole'), 'the old next hop maps to no node now');
      nodes.set('n1', ['10.0.0.11', 'fd00::11']);
      nodes.set('n3', ['10.0.0.13', '10.0.0.99']); // 10.0.0.99 is n3's, but not its first InternalIP
      const again = listed(await routes.listRoutes('it', call()));
      assert.ok(again.includes('10.244.9.0/24=n3 blackhole'), again.join());
      const stale = (await routes.listRoutes('it', call())).find(
        (r) => r.destinationCIDR === '10.244.9.0/24',
      )!;
      assert.deepEqual(kinds(await apply({ deletes: [stale] })), ['ok']);
    });

    test("one node's unroutable address does not cost another node its route (batch split)", async () => {
      nodes.set('far', ['10.9.9.9']); // on no subnet of the router
      nodes.set('n4', ['10.0.0.14']);
      const results = await apply({
        creates: [want(nodes, 'far', '10.244.20.0/24'), want(nodes, 'n4', '10.244.4.0/24')],
      });
      assert.deepEqual(kinds(results), ['permanent', 'ok']);
      assert.match(
        String((results[0] as { error: Error }).error.message),
        /InvalidRoutes|nexthop is not connected/,
      );
      assert.ok((await os.routeList(routerId)).includes('10.244.4.0/24=10.0.0.14'));
      assert.ok(!(await os.routeList(routerId)).some((r) => r.startsWith('10.244.20.0/24')));
    });

    test('a node without an InternalIP of the family: PermanentError, no call for it', async () => {
      nodes.set('v4only', ['10.0.0.15']);
      const before = os.neutronRequests('PUT').length;
      const results = await apply({ creates: [want(nodes, 'v4only', 'fd00:10:244:15::/64')] });
      assert.deepEqual(kinds(results), ['permanent']);
      assert.match(String((results[0] as { error: Error }).error.message), /no IPv6 InternalIP/);
      assert.equal(os.neutronRequests('PUT').length, before);
    });

    test('R2: a destination another next hop holds (out of band) moves to the node', async () => {
      await os.setRoutes(routerId, [
        ...(await os.routes(routerId)),
        { destination: '10.244.5.0/24', nexthop: '10.0.0.250' },
      ]);
      nodes.set('n5', ['10.0.0.16']);
      assert.deepEqual(kinds(await apply({ creates: [want(nodes, 'n5', '10.244.5.0/24')] })), ['ok']);
      const five = (await os.routeList(routerId)).filter((r) => r.startsWith('10.244.5.0/24'));
      assert.deepEqual(five, ['10.244.5.0/24=10.0.0.16']);
    });

    test('the route quota (quota_router_route, formerly max_routes) is a quota error, not a retryable one', async () => {
      const have = (await os.routes(routerId)).length;
      const creates = [];
      for (let i = 0; i < MAX_ROUTES + 2 - have; i++) {
        nodes.set(`q${i}`, [`10.0.0.${100 + i}`]);
        creates.push(want(nodes, `q${i}`, `10.244.${100 + i}.0/24`));
      }
      const results = kinds(await apply({ creates }));
      assert.ok(results.includes('quota_exceeded'), results.join());
      assert.equal((await os.routes(routerId)).length, MAX_ROUTES, 'filled up to max_routes, nothing beyond');
      assert.equal(results.filter((k) => k === 'ok').length, MAX_ROUTES - have);
      const extra = (await routes.listRoutes('it', call())).filter((r) => r.targetNode.startsWith('q'));
      assert.deepEqual(
        kinds(await apply({ deletes: extra })),
        extra.map(() => 'ok'),
      );
    });

    test("port security: the pod CIDR enters the port's allowed address pairs and leaves it on delete", async () => {
      const secured = await os.port(networkId, ['10.0.0.31']);
      const open = await os.port(networkId, ['10.0.0.32'], false);
      nodes.set('ps', ['10.0.0.31']);
      nodes.set('nops', ['10.0.0.32']);
      assert.deepEqual(
        kinds(
          await apply({
            creates: [want(nodes, 'ps', '10.244.31.0/24'), want(nodes, 'nops', '10.244.32.0/24')],
          }),
        ),
        ['ok', 'ok'],
      );
      assert.deepEqual(await os.pairs(secured), ['10.244.31.0/24']);
      assert.deepEqual(await os.pairs(open), [], 'port security off: the port is left alone');
      const list = (await routes.listRoutes('it', call())).filter(
        (r) => r.targetNode === 'ps' || r.targetNode === 'nops',
      );
      assert.deepEqual(kinds(await apply({ deletes: list })), ['ok', 'ok']);
      assert.deepEqual(await os.pairs(secured), []);
    });

    test('errors: 429 with Retry-After is throttling, 409 a conflict, 503 retryable, an unknown router permanent', async () => {
      nodes.set('e1', ['10.0.0.41']);
      os.faults.push({ method: 'PUT', path: '/routers/', status: 429, retryAfter: '7' });
      const throttled = await apply({ creates: [want(nodes, 'e1', '10.244.41.0/24')] });
      assert.deepEqual(kinds(throttled), ['throttled']);
      assert.equal((throttled[0] as { error: { retryAfterMs?: number } }).error.retryAfterMs, 7000);
      os.faults.push({ method: 'PUT', path: '/routers/', status: 409, type: 'RouterInUse' });
      assert.deepEqual(kinds(await apply({ creates: [want(nodes, 'e1', '10.244.41.0/24')] })), ['conflict']);
      os.faults.push({ method: 'GET', path: '/routers/', status: 503 });
      await assert.rejects(routes.listRoutes('it', call()), (e: { kind?: string }) => e.kind === 'retryable');
      const bad = buildOpenStackProvider(
        cloudConf(os, '00000000-0000-0000-0000-000000000000'),
        nodes,
      ).routes()!;
      await assert.rejects(
        bad.listRoutes('it', call()),
        (e: { kind?: string; message: string }) =>
          e.kind === 'permanent' && /404 RouterNotFound/.test(e.message),
      );
    });

    test('wrong credentials: PermanentError from Keystone, no Neutron call', async () => {
      const before = os.neutronRequests().length;
      const conf = cloudConf(os, routerId).replace(/password = .*/, 'password = wrong');
      const bad = buildOpenStackProvider(conf, nodes).routes()!;
      await assert.rejects(
        bad.listRoutes('it', call()),
        (e: { kind?: string; message: string }) =>
          e.kind === 'permanent' && /auth\/tokens.*HTTP 401/.test(e.message) && !e.message.includes('wrong'),
      );
      assert.equal(os.neutronRequests().length, before);
    });

    test('a revoked token: 401 from the middleware, one new token, the call goes through', async () => {
      await routes.listRoutes('it', call());
      const issued = os.tokensIssued;
      await os.revokeTokens();
      await routes.listRoutes('it', call());
      assert.equal(os.tokensIssued, issued + 1);
      const last = os.requests
        .slice(-4)
        .map((r) => `${r.method} ${r.path.replace(routerId, 'R')} ${r.status}`);
      assert.deepEqual(last.slice(-3), [
        'GET /v2.0/routers/R 401',
        'POST /v3/auth/tokens 201',
        'GET /v2.0/routers/R 200',
      ]);
    });

    test('a token close to expiry is renewed before use, without a 401', async () => {
      // The plug-in's clock is moved, not waited for: its token is due while Keystone still takes it.
      let skewMs = 0;
      const clocked = buildOpenStackProvider(
        cloudConf(os, routerId, atomic ? 'password' : 'appcred'),
        nodes,
        {
          now: () => Date.now() + skewMs,
        },
      ).routes()!;
      os.tokenLifetimeMs = 600_000;
      await clocked.listRoutes('it', call()); // a 10-minute token
      const issued = os.tokensIssued;
      const unauthorized = os.requests.filter((r) => r.status === 401).length;
      skewMs = 8 * 60_000; // 2 minutes left: inside the renewal margin (min(5 min, a quarter: 2.5))
      await clocked.listRoutes('it', call());
      await clocked.listRoutes('it', call());
      assert.equal(os.tokensIssued, issued + 1, 'renewed once, ahead of expiry');
      assert.equal(
        os.requests.filter((r) => r.status === 401).length,
        unauthorized,
        'no request was refused',
      );
      os.tokenLifetimeMs = 3_600_000;
    });

    if (!atomic) {
      test('another writer between read and write: 412, a conflict; the retry keeps their route and adds ours', async () => {
        nodes.set('c1', ['10.0.0.51']);
        const opts = call();
        await routes.listRoutes('it', opts); // the reconcile's read (revision N)
        os.faults.push({
          method: 'PUT',
          path: `/routers/${routerId}`,
          before: async () => {
            const current = await os.routes(routerId);
            await os.setRoutes(routerId, [
              ...current,
              { destination: '172.16.0.0/16', nexthop: '10.0.0.250' },
            ]);
          },
        });
        const first = await apply({ creates: [want(nodes, 'c1', '10.244.51.0/24')] }, opts);
        assert.deepEqual(kinds(first), ['conflict']);
        const puts = os.neutronRequests('PUT', `/routers/${routerId}`);
        assert.equal(puts.at(-1)?.status, 412);
        assert.deepEqual(kinds(await apply({ creates: [want(nodes, 'c1', '10.244.51.0/24')] }, opts)), [
          'ok',
        ]);
        const list = await os.routeList(routerId);
        assert.ok(list.includes('172.16.0.0/16=10.0.0.250'), "the other writer's route survived");
        assert.ok(list.includes('10.244.51.0/24=10.0.0.51'));
      });
    } else {
      test('concurrent createRoute calls take turns: all land, none lost', async () => {
        const extra = (await routes.listRoutes('it', call())).filter((r) =>
          r.destinationCIDR.startsWith('10.244.'),
        );
        await apply({ deletes: extra });
        const made = [];
        for (let i = 0; i < 6; i++) {
          nodes.set(`p${i}`, [`10.0.0.${60 + i}`]);
          made.push(
            routes.createRoute(
              'it',
              `uid-p${i}`,
              want(nodes, `p${i}`, `10.244.${60 + i}.0/24`).route,
              call(),
            ),
          );
        }
        const created = await Promise.all(made);
        assert.deepEqual(
          created.map((r) => r.name),
          [0, 1, 2, 3, 4, 5].map((i) => `10.244.${60 + i}.0/24 via 10.0.0.${60 + i}`),
        );
        const list = await os.routeList(routerId);
        for (let i = 0; i < 6; i++) assert.ok(list.includes(`10.244.${60 + i}.0/24=10.0.0.${60 + i}`));
      });
    }
  });
}

describe(
  'openstack plug-in over HTTPS: ca-file and tls-insecure',
  { ...neutronSkip(), timeout: 120_000 },
  () => {
    let os: OpenStack;
    let routerId = '';
    let caFile = '';

    before(async () => {
      const pki = await getPki(); // a test CA and a 127.0.0.1 server certificate signed by it
      caFile = pki.caCrt;
      os = await OpenStack.start({
        tls: {
          cert: fs.readFileSync(pki.apiserverCrt, 'utf8'),
          key: fs.readFileSync(pki.apiserverKey, 'utf8'),
        },
      });
      ({ routerId } = await os.topology());
    });

    after(async () => {
      await os?.stop();
    });

    test('with the CA in ca-file Keystone and Neutron are trusted; without it the call fails permanently', async () => {
      assert.match(os.authUrl, /^https:/);
      const nodes = new Nodes();
      const conf = cloudConf(os, routerId, 'appcred');
      const withCa = buildOpenStackProvider(
        conf.replace('region = RegionOne', `region = RegionOne\nca-file = ${caFile}`),
        nodes,
      );
      assert.deepEqual(await withCa.routes()!.listRoutes('it', call()), []);
      const untrusted = buildOpenStackProvider(conf, nodes);
      await assert.rejects(
        untrusted.routes()!.listRoutes('it', call()),
        (e: { kind?: string; message: string }) => e.kind === 'permanent' && /ca-file/.test(e.message),
      );
      const insecure = buildOpenStackProvider(
        conf.replace('region = RegionOne', 'region = RegionOne\ntls-insecure = true'),
        nodes,
      );
      assert.deepEqual(await insecure.routes()!.listRoutes('it', call()), []);
    });
  },
);
