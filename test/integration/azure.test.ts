// The azure plug-in against Microsoft's generated fake servers (armnetwork/v9
// fake, served over HTTP by testenv/azure-fake): first the provider alone, then
// the real executable on a real kube-apiserver in both modes.
// Run: scripts/azure-fake.sh build && npx node --test test/integration/azure.test.ts
import assert from 'node:assert/strict';
import { after, before, beforeEach, describe, test } from 'node:test';
import { errorKind, retryAfterMs } from '../../src/core/errors.ts';
import type { Node, OperationResult, Route } from '../../src/core/types.ts';
import { buildAzureProvider, type AzureRoutes } from '../../src/cloud/azure/index.ts';
import { azureFakeSkip, FIREWALL_ROUTE, startAzureFake } from '../support/azure-fake.ts';
import type { AzureFake, FakeRoute } from '../support/azure-fake.ts';
import { azureRoutesOn, STATIC_TOKEN } from '../support/azure-plugin.ts';
import { callOptions, nodeLister, wantRoute } from '../support/provider-calls.ts';

const SUB = '00000000-0000-0000-0000-0000000000a1';
const RG = 'k8s-rg';
const TABLE = 'k8s-routes';

function node(name: string, podCIDRs: string[], ...ips: string[]): Node {
  return {
    metadata: { name },
    spec: { podCIDRs },
    status: { addresses: ips.map((address) => ({ type: 'InternalIP', address })) },
  };
}

const NODES = [
  node('node1', ['10.244.1.0/24'], '10.0.0.1'),
  node('node10', ['10.244.10.0/24'], '10.0.0.10'),
  node('ds', ['10.244.2.0/24', 'fd00:10:244:2::/64'], '10.0.0.2', 'fd00::2'),
];

const creates = (...rs: Route[]) => ({
  deletes: [],
  creates: rs.map((route) => ({ nameHint: 'uid', route })),
});
const kinds = (rs: OperationResult[]): string[] => rs.map((r) => (r.ok ? 'ok' : errorKind(r.error)));

/** name=prefix>next hop of every route in the fake's table, sorted. */
export function summary(routes: FakeRoute[] | undefined): string[] {
  return (routes ?? [])
    .map(
      (r) =>
        `${r.name}=${r.properties.addressPrefix}>${r.properties.nextHopIpAddress ?? r.properties.nextHopType}`,
    )
    .sort();
}

describe("azure provider against Microsoft's fake servers", { ...azureFakeSkip(), timeout: 120_000 }, () => {
  let fake: AzureFake;
  let routes: AzureRoutes;

  before(async () => {
    fake = await startAzureFake();
  });
  after(async () => {
    await fake?.stop();
  });
  beforeEach(async () => {
    await fake.reset();
    routes = azureRoutesOn(
      fake,
      SUB,
      { resourceGroup: RG, routeTableName: TABLE, location: 'westeurope' },
      nodeLister(NODES),
    );
  });

  test('a missing table is created in location by the first write, one PUT whose LRO takes 3 polls', async () => {
    await fake.setLROPolls(3);
    const o = callOptions();
    assert.deepEqual(await routes.listRoutes('c', o), []);
    const r = await routes.applyRoutes(
      'c',
      creates(
        wantRoute('node1', '10.244.1.0/24'),
        wantRoute('ds', '10.244.2.0/24'),
        wantRoute('ds', 'fd00:10:244:2::/64'),
      ),
      o,
    );
    assert.deepEqual(kinds(r), ['ok', 'ok', 'ok']);
    const table = await fake.table(TABLE);
    assert.equal(table?.location, 'westeurope');
    assert.equal(table?.properties.provisioningState, 'Succeeded');
    assert.deepEqual(summary(table?.properties.routes), [
      'ds____102442024=10.244.2.0/24>10.0.0.2',
      'ds____fd0010244264=fd00:10:244:2::/64>fd00::2',
      'node1=10.244.1.0/24>10.0.0.1',
    ]);
    const log = await fake.requests();
    assert.deepEqual(
      log.map((e) => `${e.method} ${e.api} ${e.status}`),
      [
        'GET RouteTablesClient.Get 404',
        'GET RouteTablesClient.Get 404',
        'PUT RouteTablesClient.BeginCreateOrUpdate 201',
        'GET poll 200',
        'GET poll 200',
        'GET poll 200',
        'GET RouteTablesClient.Get 200',
      ],
    );
    assert.ok(log.every((e) => e.token === 'static-test-token'));
  });

  test("node1 and node10: deleting node1's route leaves node10's, in one PUT with the ETag read", async () => {
    await routes.applyRoutes(
      'c',
      creates(wantRoute('node1', '10.244.1.0/24'), wantRoute('node10', '10.244.10.0/24')),
      callOptions(),
    );
    const before = await fake.table(TABLE);
    const o = callOptions();
    const listed = await routes.listRoutes('c', o);
    assert.deepEqual(
      listed.map((r) => `${r.name}>${r.targetNode}`),
      ['node1>node1', 'node10>node10'],
    );
    const r = await routes.applyRoutes('c', { deletes: [listed[0]!], creates: [] }, o);
    assert.deepEqual(kinds(r), ['ok']);
    assert.deepEqual(summary((await fake.table(TABLE))?.properties.routes), [
      'node10=10.244.10.0/24>10.0.0.10',
    ]);
    const puts = (await fake.requests()).filter((e) => e.method === 'PUT');
    assert.equal(puts.at(-1)?.ifMatch, before?.etag);
  });

  test("a write between our read and our PUT: 412 for the batch, the retry keeps the other writer's route", async () => {
    await routes.applyRoutes('c', creates(wantRoute('node1', '10.244.1.0/24')), callOptions());
    await fake.inject({ method: 'PUT', table: TABLE, foreignRoute: FIREWALL_ROUTE });
    const o = callOptions();
    await routes.listRoutes('c', o);
    const plan = creates(wantRoute('node10', '10.244.10.0/24'), wantRoute('ds', 'fd00:10:244:2::/64'));
    assert.deepEqual(kinds(await routes.applyRoutes('c', plan, o)), ['conflict', 'conflict']);
    assert.deepEqual(kinds(await routes.applyRoutes('c', plan, o)), ['ok', 'ok']);
    assert.deepEqual(summary((await fake.table(TABLE))?.properties.routes), [
      'ds____fd0010244264=fd00:10:244:2::/64>fd00::2',
      'node10=10.244.10.0/24>10.0.0.10',
      'node1=10.244.1.0/24>10.0.0.1',
      'to_firewall=0.0.0.0/0>10.0.0.250',
    ]);
    const statuses = (await fake.requests()).filter((e) => e.method === 'PUT').map((e) => e.status);
    assert.deepEqual(statuses, [201, 412, 200]);
  });

  test('429 with Retry-After is a throttle with retryAfterMs; the SDK does not retry it', async () => {
    await fake.inject({
      method: 'PUT',
      status: 429,
      code: 'SubscriptionRequestsThrottled',
      message: 'Number of write requests for subscription exceeded the limit.',
      retryAfter: '7',
    });
    const [r] = await routes.applyRoutes('c', creates(wantRoute('node1', '10.244.1.0/24')), callOptions());
    assert.ok(r !== undefined && !r.ok);
    assert.equal(errorKind(r.error), 'throttled');
    assert.equal(retryAfterMs(r.error), 7000);
    assert.match((r.error as Error).message, /SubscriptionRequestsThrottled.*HTTP 429/);
    assert.equal((await fake.requests()).filter((e) => e.method === 'PUT').length, 1);
    assert.equal(await fake.table(TABLE), undefined);
  });

  test('an LRO that ends Failed is retryable with its code; an aborted signal stops a long LRO', async () => {
    await fake.inject({ method: 'PUT', lroError: 'InternalServerError' });
    const [failed] = await routes.applyRoutes(
      'c',
      creates(wantRoute('node1', '10.244.1.0/24')),
      callOptions(),
    );
    assert.ok(failed !== undefined && !failed.ok);
    assert.equal(errorKind(failed.error), 'retryable');
    assert.match((failed.error as Error).message, /InternalServerError/);

    await fake.setLROPolls(1000);
    const polls = async (): Promise<number> => (await fake.requests()).filter((e) => e.api === 'poll').length;
    const before = await polls();
    const stop = new AbortController();
    const call = routes.applyRoutes(
      'c',
      creates(wantRoute('node10', '10.244.10.0/24')),
      callOptions(stop.signal),
    );
    // Abort in the middle of the long-running operation: once it has been polled.
    for (let i = 0; i < 500 && (await polls()) === before; i++) await new Promise((r) => setTimeout(r, 10));
    assert.ok((await polls()) > before, 'the LRO was polled');
    stop.abort();
    await assert.rejects(call, { name: 'AbortError' });
  });

  test('the factory: an upstream azure.json, a static credential, the declared write limit', async () => {
    const config = JSON.stringify({
      cloud: 'AzurePublicCloud',
      tenantId: '00000000-0000-0000-0000-0000000000b2',
      subscriptionId: SUB,
      resourceGroup: RG,
      location: 'westeurope',
      routeTableName: TABLE,
      vnetName: 'ignored',
      useManagedIdentityExtension: true,
      resourceManagerEndpoint: fake.endpoint,
    });
    const cloud = await buildAzureProvider(config, nodeLister(NODES), {
      credential: STATIC_TOKEN,
      pollIntervalMs: 20,
    });
    assert.equal(cloud.name, 'azure');
    assert.deepEqual(cloud.writeLimit, { qps: 1000 / 300, burst: 200 });
    const r = await cloud
      .routes()!
      .createRoute('c', 'uid', wantRoute('node10', '10.244.10.0/24'), callOptions());
    assert.deepEqual(r, { ...wantRoute('node10', '10.244.10.0/24'), name: 'node10' });
    assert.deepEqual(summary((await fake.table(TABLE))?.properties.routes), [
      'node10=10.244.10.0/24>10.0.0.10',
    ]);
  });
});
