// The openstack plug-in on the real neutron-server with `pagination_max_limit = 1`: every list
// is one item per page with a `next` link, as a cloud that limits its pages serves a router
// with more ports than one page. The router has interfaces on two networks, so at least one of
// them is only on a later page of its port list: without following the links, that network's
// node would silently get no allowed address pair. Run: scripts/neutron.sh &&
// node --test test/integration/openstack-pagination.test.ts
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import type { Node } from '../../src/core/types.ts';
import { buildOpenStackProvider } from '../../src/cloud/openstack/index.ts';
import type { OpenStackRoutes } from '../../src/cloud/openstack/routes.ts';
import { CREDENTIALS, OpenStack, neutronSkip } from '../support/openstack.ts';
import { callOptions, nodeLister, nodeRoute } from '../support/provider-calls.ts';

const NODES: Node[] = [
  ['n1', '10.0.0.11', '10.244.1.0/24'],
  ['n2', '10.1.0.12', '10.244.2.0/24'],
].map(([name, address, cidr]) => ({
  metadata: { name: name!, uid: `uid-${name}` },
  spec: { podCIDRs: [cidr!] },
  status: { addresses: [{ type: 'InternalIP', address: address! }] },
}));
const lister = nodeLister(NODES);

describe(
  'openstack plug-in on real Neutron with one item per page',
  { ...neutronSkip(), timeout: 240_000 },
  () => {
    let os: OpenStack;
    let routerId = '';
    const portIds: string[] = [];

    before(async () => {
      os = await OpenStack.start({ pageSize: 1 });
      let networkId = '';
      ({ routerId, networkId } = await os.topology());
      // A second network on the same router, with its own subnet.
      const net2 = await os.neutron<{ network: { id: string } }>('POST', '/networks', {
        network: { project_id: CREDENTIALS.projectId, name: 'k8s-2' },
      });
      const subnet = await os.neutron<{ subnet: { id: string } }>('POST', '/subnets', {
        subnet: {
          project_id: CREDENTIALS.projectId,
          network_id: net2.body.network.id,
          cidr: '10.1.0.0/24',
          ip_version: 4,
        },
      });
      const attach = await os.neutron('PUT', `/routers/${routerId}/add_router_interface`, {
        subnet_id: subnet.body.subnet.id,
      });
      assert.equal(attach.status, 200, JSON.stringify(attach.body));
      portIds.push(
        await os.port(networkId, ['10.0.0.11']),
        await os.port(net2.body.network.id, ['10.1.0.12']),
      );
    });

    after(async () => {
      await os?.stop();
    });

    test("Neutron pages the router's ports: one per page, with a next link (the premise of this file)", async () => {
      const r = await os.neutron<{ ports: unknown[]; ports_links?: { rel: string; href: string }[] }>(
        'GET',
        `/ports?device_id=${routerId}`,
      );
      assert.equal(r.status, 200);
      assert.equal(r.body.ports.length, 1);
      assert.ok(
        r.body.ports_links?.some((l) => l.rel === 'next' && l.href.includes('marker=')),
        JSON.stringify(r.body),
      );
    });

    test('both nodes get their route and allowed address pair; every page read through the catalog endpoint', async () => {
      const routes = buildOpenStackProvider(
        `[Global]\nauth-url = ${os.authUrl}\napplication-credential-id = ${CREDENTIALS.appCredentialId}\napplication-credential-secret = ${CREDENTIALS.appCredentialSecret}\nregion = RegionOne\n\n[Route]\nrouter-id = ${routerId}\n`,
        lister,
      ).routes() as OpenStackRoutes;
      const results = await routes.applyRoutes(
        'it',
        { deletes: [], creates: NODES.map(nodeRoute) },
        callOptions(),
      );
      assert.deepEqual(
        results.map((r) => (r.ok ? 'ok' : String(r.error))),
        ['ok', 'ok'],
      );
      assert.deepEqual(await os.routeList(routerId), ['10.244.1.0/24=10.0.0.11', '10.244.2.0/24=10.1.0.12']);
      assert.deepEqual(
        await Promise.all(portIds.map((p) => os.pairs(p))),
        [['10.244.1.0/24'], ['10.244.2.0/24']],
        "the pair on each node's port, whichever page its network was on",
      );
      const listed = await routes.listRoutes('it', callOptions());
      assert.deepEqual(listed.map((r) => `${r.destinationCIDR}=${r.targetNode}`).sort(), [
        '10.244.1.0/24=n1',
        '10.244.2.0/24=n2',
      ]);
      // Three interface ports (two subnets on the first network, one on the second): four pages, the last empty.
      const routerPorts = os.neutronRequests('GET', `/v2.0/ports?device_id=${routerId}`);
      assert.equal(routerPorts.length, 4, routerPorts.map((r) => r.path).join('\n'));
      assert.deepEqual(
        routerPorts.map((r) => (r.path.includes('marker=') ? 'next' : 'first')),
        ['first', 'next', 'next', 'next'],
      );
      assert.ok(routerPorts.every((r) => r.status === 200 && r.path.includes('fields=network_id')));
    });
  },
);
