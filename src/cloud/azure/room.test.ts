// R115, R118: the azure plug-in's route table room, and creates beyond the limit refused alone.
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import type { RouteTable } from '@azure/arm-network';
import { errorKind } from '../../core/errors.ts';
import type { CallOptions, Node, Route } from '../../core/types.ts';
import type { PutOptions, RouteTableApi } from './client.ts';
import { AZURE_DEFAULT_ROUTE_LIMIT } from './room.ts';
import { AzureRoutes } from './routes.ts';
import { parseAzureCloudConfig } from './config.ts';

class Table implements RouteTableApi {
  table: RouteTable | undefined;
  calls: string[] = [];
  async get(): Promise<RouteTable | undefined> {
    this.calls.push('GET');
    return this.table === undefined ? undefined : structuredClone(this.table);
  }
  async put(_rg: string, _name: string, table: RouteTable, _opts: PutOptions): Promise<RouteTable> {
    this.calls.push('PUT');
    this.table = structuredClone(table);
    return table;
  }
}

const nodes: Node[] = [1, 2, 3].map((i) => ({
  metadata: { name: `n${i}` },
  spec: { podCIDRs: [`10.244.${i}.0/24`] },
  status: { addresses: [{ type: 'InternalIP', address: `10.0.0.${i}` }] },
}));
const lister = { get: (n: string) => nodes.find((x) => x.metadata?.name === n), list: () => nodes };
const opts = (): CallOptions => ({
  signal: new AbortController().signal,
  reconcile: { id: 'r', scratch: new Map() },
});
const want = (i: number): { nameHint: string; route: Route } => ({
  nameHint: `uid-${i}`,
  route: {
    name: '',
    targetNode: `n${i}`,
    targetNodeAddresses: [],
    enableNodeAddresses: false,
    destinationCIDR: `10.244.${i}.0/24`,
    blackhole: false,
  },
});

describe('azure: route table room (R115, R118)', () => {
  test('reports the listed table against its limit (default 1,000), with no call of its own', async () => {
    const api = new Table();
    api.table = {
      location: 'x',
      routes: [{ name: 'vpn', addressPrefix: '192.168.0.0/16', nextHopType: 'VirtualNetworkGateway' }],
    };
    const routes = new AzureRoutes(api, { resourceGroup: 'rg', routeTableName: 'rt', location: 'x' }, lister);
    const o = opts();
    await routes.listRoutes('c', o);
    const room = await routes.routeTableRoom('c', o);
    assert.deepEqual(api.calls, ['GET']);
    assert.equal(AZURE_DEFAULT_ROUTE_LIMIT, 1000);
    assert.deepEqual(
      [room?.container, room?.limit, room?.used],
      ['route table rt in resource group rg', 1000, 1],
    );
  });

  test('a table not created yet has all its room', async () => {
    const api = new Table();
    const routes = new AzureRoutes(
      api,
      { resourceGroup: 'rg', routeTableName: 'rt', location: 'x', routeLimit: 5 },
      lister,
    );
    const o = opts();
    await routes.listRoutes('c', o);
    assert.deepEqual([(await routes.routeTableRoom('c', o))?.used], [0]);
  });

  test('creates beyond the limit are refused alone as quota_exceeded; the others go out in the one PUT', async () => {
    const api = new Table();
    api.table = {
      location: 'x',
      routes: [{ name: 'vpn', addressPrefix: '192.168.0.0/16', nextHopType: 'VirtualNetworkGateway' }],
    };
    const routes = new AzureRoutes(
      api,
      { resourceGroup: 'rg', routeTableName: 'rt', location: 'x', routeLimit: 3 },
      lister,
    );
    const o = opts();
    await routes.listRoutes('c', o);
    const results = await routes.applyRoutes('c', { deletes: [], creates: [want(1), want(2), want(3)] }, o);
    assert.deepEqual(
      results.map((r) => (r.ok ? 'ok' : errorKind(r.error))),
      ['ok', 'ok', 'quota_exceeded'],
    );
    assert.match(
      String((results[2] as { error: Error }).error.message),
      /^route table rt in resource group rg holds 3 routes, its limit is 3: no room for 10\.244\.3\.0\/24 \(node n3\)$/,
    );
    assert.deepEqual(api.calls, ['GET', 'PUT']);
    assert.equal(api.table?.routes?.length, 3);
  });

  test("routeTableRouteLimit in azure.json (this project's key): a whole number of at least 1", () => {
    const base = {
      subscriptionId: '11111111-2222-3333-4444-555555555555',
      resourceGroup: 'rg',
      location: 'westeurope',
      routeTableName: 'rt',
      useManagedIdentityExtension: true,
    };
    assert.equal(
      parseAzureCloudConfig(JSON.stringify({ ...base, routeTableRouteLimit: 400 }), {}).routeTableRouteLimit,
      400,
    );
    assert.equal(parseAzureCloudConfig(JSON.stringify(base), {}).routeTableRouteLimit, undefined);
    assert.throws(
      () => parseAzureCloudConfig(JSON.stringify({ ...base, routeTableRouteLimit: 0 }), {}),
      /"routeTableRouteLimit" must be a whole number of at least 1/,
    );
  });
});
