import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import type { RouteTable } from '@azure/arm-network';
import { errorKind } from '../../core/errors.ts';
import type { CallOptions, Node, NodeLister, OperationResult, Route } from '../../core/types.ts';
import type { PutOptions, RouteTableApi } from './client.ts';
import { AzureRoutes } from './routes.ts';

const CONFIG = { resourceGroup: 'rg', routeTableName: 'rt', location: 'westeurope' };

/** An in-memory route table with ETags, recording every call. */
class StubApi implements RouteTableApi {
  table: RouteTable | undefined;
  etag = 0;
  calls: string[] = [];
  puts: { table: RouteTable; opts: Omit<PutOptions, 'signal'> }[] = [];
  /** Runs before a PUT is checked: a concurrent writer. */
  beforePut: (() => void) | undefined;

  seed(routes: RouteTable['routes']): void {
    this.table = { location: 'westeurope', routes, etag: `W/"${++this.etag}"` };
  }
  async get(): Promise<RouteTable | undefined> {
    this.calls.push('GET');
    return this.table === undefined ? undefined : structuredClone(this.table);
  }
  async put(_rg: string, _name: string, table: RouteTable, opts: PutOptions): Promise<RouteTable> {
    this.calls.push('PUT');
    const { signal: _signal, ...rest } = opts;
    this.puts.push({ table: structuredClone(table), opts: rest });
    this.beforePut?.();
    this.beforePut = undefined;
    const stale =
      (opts.ifMatch !== undefined && opts.ifMatch !== this.table?.etag) ||
      (opts.ifNoneMatch === '*' && this.table !== undefined);
    if (stale)
      throw Object.assign(new Error('precondition'), {
        name: 'RestError',
        statusCode: 412,
        code: 'PreconditionFailed',
      });
    this.table = { ...structuredClone(table), etag: `W/"${++this.etag}"` };
    return structuredClone(this.table);
  }
  names(): string[] {
    return (this.table?.routes ?? []).map((r) => `${r.name}=${r.addressPrefix}>${r.nextHopIpAddress}`).sort();
  }
}

function node(name: string, podCIDRs: string[], ...ips: string[]): Node {
  return {
    metadata: { name },
    spec: { podCIDRs },
    status: { addresses: ips.map((address) => ({ type: 'InternalIP', address })) },
  };
}

function lister(nodes: Node[]): NodeLister {
  return { get: (n) => nodes.find((x) => x.metadata?.name === n), list: () => nodes };
}

function opts(): CallOptions {
  return { signal: new AbortController().signal, reconcile: { id: 'r', scratch: new Map() } };
}

function want(targetNode: string, destinationCIDR: string, name = ''): Route {
  return {
    name,
    targetNode,
    targetNodeAddresses: [],
    enableNodeAddresses: false,
    destinationCIDR,
    blackhole: false,
  };
}

function va(name: string, addressPrefix: string, nextHopIpAddress: string) {
  return { name, addressPrefix, nextHopType: 'VirtualAppliance', nextHopIpAddress };
}

const NODES = [
  node('node1', ['10.244.1.0/24'], '10.0.0.1'),
  node('node10', ['10.244.10.0/24'], '10.0.0.10'),
  node('ds', ['10.244.2.0/24', 'fd00:10:244:2::/64'], '10.0.0.2', 'fd00::2'),
];

function setup(nodes = NODES): { api: StubApi; routes: AzureRoutes } {
  const api = new StubApi();
  return { api, routes: new AzureRoutes(api, CONFIG, lister(nodes)) };
}

const kinds = (rs: OperationResult[]): string[] => rs.map((r) => (r.ok ? 'ok' : errorKind(r.error)));

describe('AzureRoutes.applyRoutes: one PUT of the whole table per reconcile', () => {
  test('a missing table is created in the location with all creates, If-None-Match *', async () => {
    const { api, routes } = setup();
    const o = opts();
    assert.deepEqual(await routes.listRoutes('c', o), []);
    const r = await routes.applyRoutes(
      'c',
      {
        deletes: [],
        creates: [
          { nameHint: 'u1', route: want('node1', '10.244.1.0/24') },
          { nameHint: 'u2', route: want('ds', '10.244.2.0/24') },
          { nameHint: 'u2', route: want('ds', 'fd00:10:244:2::/64') },
        ],
      },
      o,
    );
    assert.deepEqual(kinds(r), ['ok', 'ok', 'ok']);
    assert.deepEqual(api.calls, ['GET', 'GET', 'PUT'], 'no listed table to reuse: it did not exist');
    assert.equal(api.puts[0]!.table.location, 'westeurope');
    assert.deepEqual(api.puts[0]!.opts, { ifNoneMatch: '*' });
    assert.deepEqual(api.names(), [
      'ds____102442024=10.244.2.0/24>10.0.0.2',
      'ds____fd0010244264=fd00:10:244:2::/64>fd00::2',
      'node1=10.244.1.0/24>10.0.0.1',
    ]);
  });

  test('the listed table (and its ETag) is reused once; nothing to change means no PUT', async () => {
    const { api, routes } = setup();
    api.seed([va('node1', '10.244.1.0/24', '10.0.0.1')]);
    const o = opts();
    await routes.listRoutes('c', o);
    const r = await routes.applyRoutes(
      'c',
      { deletes: [], creates: [{ nameHint: 'u', route: want('node10', '10.244.10.0/24') }] },
      o,
    );
    assert.deepEqual(kinds(r), ['ok']);
    assert.deepEqual(api.calls, ['GET', 'PUT']);
    assert.deepEqual(api.puts[0]!.opts, { ifMatch: 'W/"1"' });
    const again = await routes.applyRoutes(
      'c',
      { deletes: [], creates: [{ nameHint: 'u', route: want('node10', '10.244.10.0/24') }] },
      o,
    );
    assert.deepEqual(kinds(again), ['ok']);
    assert.deepEqual(api.calls, ['GET', 'PUT', 'GET'], 'the second apply reads anew and writes nothing');
  });

  test("deleting node1's route never takes node10's (upstream deletes by name prefix)", async () => {
    const { api, routes } = setup();
    api.seed([
      va('node1', '10.244.1.0/24', '10.0.0.1'),
      va('node10', '10.244.10.0/24', '10.0.0.10'),
      va('node10____1024410024', '10.244.10.0/24', '10.0.0.10'),
    ]);
    const listed = await routes.listRoutes('c', opts());
    const n1 = listed.find((r) => r.name === 'node1')!;
    assert.deepEqual(kinds(await routes.applyRoutes('c', { deletes: [n1], creates: [] }, opts())), ['ok']);
    assert.deepEqual(api.names(), [
      'node10=10.244.10.0/24>10.0.0.10',
      'node10____1024410024=10.244.10.0/24>10.0.0.10',
    ]);
  });

  test('a delete removes only the route as listed; gone or changed since is success', async () => {
    const { api, routes } = setup();
    api.seed([va('node1', '10.244.7.0/24', '10.0.0.1')]);
    const r = await routes.applyRoutes(
      'c',
      { deletes: [want('node1', '10.244.1.0/24', 'node1'), want('x', '10.244.3.0/24', 'x')], creates: [] },
      opts(),
    );
    assert.deepEqual(kinds(r), ['ok', 'ok']);
    assert.deepEqual(api.calls, ['GET'], 'nothing matched: no write');
    assert.deepEqual(api.names(), ['node1=10.244.7.0/24>10.0.0.1']);
  });

  test('per-route outcomes: a bad create fails alone, the rest ride the PUT', async () => {
    const { api, routes } = setup([...NODES, node('noip', ['10.244.9.0/24'])]);
    api.seed([]);
    const r = await routes.applyRoutes(
      'c',
      {
        deletes: [],
        creates: [
          { nameHint: 'a', route: want('ghost', '10.244.5.0/24') },
          { nameHint: 'b', route: want('noip', '10.244.9.0/24') },
          { nameHint: 'c', route: want('node1', 'nonsense') },
          { nameHint: 'd', route: want('node1', '10.244.1.0/24') },
        ],
      },
      opts(),
    );
    assert.deepEqual(kinds(r), ['permanent', 'retryable', 'permanent', 'ok']);
    assert.match(String((r[1] as { error: Error }).error.message), /node noip has no IPv4 InternalIP/);
    assert.deepEqual(api.names(), ['node1=10.244.1.0/24>10.0.0.1']);
  });

  test('412 fails every operation of the write as a conflict; the retry re-reads and keeps the other writer', async () => {
    const { api, routes } = setup();
    api.seed([va('node1', '10.244.1.0/24', '10.0.0.1')]);
    const o = opts();
    const listed = await routes.listRoutes('c', o);
    api.beforePut = () => api.seed([...(api.table?.routes ?? []), va('firewall', '0.0.0.0/0', '10.0.0.200')]);
    const plan = {
      deletes: [listed[0]!],
      creates: [
        { nameHint: 'u', route: want('node10', '10.244.10.0/24') },
        { nameHint: 'u', route: want('ghost', '10.244.5.0/24') },
      ],
    };
    assert.deepEqual(kinds(await routes.applyRoutes('c', plan, o)), ['conflict', 'conflict', 'permanent']);
    assert.deepEqual(kinds(await routes.applyRoutes('c', plan, o)), ['ok', 'ok', 'permanent']);
    assert.deepEqual(api.calls, ['GET', 'PUT', 'GET', 'PUT']);
    assert.deepEqual(api.names(), ['firewall=0.0.0.0/0>10.0.0.200', 'node10=10.244.10.0/24>10.0.0.10']);
  });

  test('a create replaces its own name and a cluster route of its destination, never a foreign one', async () => {
    const { api, routes } = setup();
    api.seed([
      va('NODE1', '10.244.1.0/24', '10.0.0.99'),
      va('node10____102441024', '10.244.1.0/24', '10.0.0.10'),
    ]);
    assert.deepEqual(
      kinds(
        await routes.applyRoutes(
          'c',
          { deletes: [], creates: [{ nameHint: 'u', route: want('node1', '10.244.1.0/24') }] },
          opts(),
        ),
      ),
      ['ok'],
    );
    assert.deepEqual(api.names(), ['node1=10.244.1.0/24>10.0.0.1']);

    api.seed([va('to_firewall', '10.244.10.0/24', '10.0.0.200')]);
    const r = await routes.applyRoutes(
      'c',
      { deletes: [], creates: [{ nameHint: 'u', route: want('node10', '10.244.10.0/24') }] },
      opts(),
    );
    assert.deepEqual(kinds(r), ['permanent']);
    assert.match(
      String((r[0] as { error: Error }).error.message),
      /by route to_firewall, which is not a node's; refusing/,
    );
    assert.deepEqual(api.names(), ['to_firewall=10.244.10.0/24>10.0.0.200']);
  });

  test('delete then create of one destination goes out in the same PUT', async () => {
    const { api, routes } = setup();
    api.seed([va('node1', '10.244.10.0/24', '10.0.0.1')]);
    const listed = await routes.listRoutes('c', opts());
    const r = await routes.applyRoutes(
      'c',
      { deletes: [listed[0]!], creates: [{ nameHint: 'u', route: want('node10', '10.244.10.0/24') }] },
      opts(),
    );
    assert.deepEqual(kinds(r), ['ok', 'ok']);
    assert.equal(api.puts.length, 1);
    assert.deepEqual(api.names(), ['node10=10.244.10.0/24>10.0.0.10']);
  });

  test('createRoute/deleteRoute take turns and return the route as listed (R66)', async () => {
    const { api, routes } = setup();
    api.seed([]);
    const created = await Promise.all([
      routes.createRoute('c', 'u', want('node1', '10.244.1.0/24'), opts()),
      routes.createRoute('c', 'u', want('ds', 'fd00:10:244:2::/64'), opts()),
    ]);
    const listed = await routes.listRoutes('c', opts());
    assert.deepEqual(
      created[0],
      listed.find((r) => r.name === 'node1'),
    );
    assert.deepEqual(
      created[1],
      listed.find((r) => r.name === 'ds____fd0010244264'),
    );
    await routes.deleteRoute('c', created[0]!, opts());
    assert.deepEqual(api.names(), ['ds____fd0010244264=fd00:10:244:2::/64>fd00::2']);
    await assert.rejects(routes.createRoute('c', 'u', want('ghost', '10.244.5.0/24'), opts()), {
      name: 'PermanentError',
    });
  });

  test('an aborted call starts no write', async () => {
    const { api, routes } = setup();
    const c = new AbortController();
    c.abort();
    await assert.rejects(
      routes.applyRoutes(
        'c',
        { deletes: [], creates: [{ nameHint: 'u', route: want('node1', '10.244.1.0/24') }] },
        { signal: c.signal, reconcile: { id: 'r', scratch: new Map() } },
      ),
      { name: 'AbortError' },
    );
    assert.deepEqual(api.calls, []);
  });
});

test('an abort during the write rejects the whole call (R4), not each operation', async () => {
  const { api, routes } = setup();
  api.seed([]);
  const c = new AbortController();
  api.beforePut = () => c.abort();
  const put = api.put.bind(api);
  api.put = async (...args) => {
    await put(...args).catch(() => undefined);
    throw Object.assign(new Error('The operation was aborted.'), { name: 'AbortError' });
  };
  const o = { signal: c.signal, reconcile: { id: 'r', scratch: new Map() } };
  await assert.rejects(
    routes.applyRoutes(
      'c',
      { deletes: [], creates: [{ nameHint: 'u', route: want('node1', '10.244.1.0/24') }] },
      o,
    ),
    { name: 'AbortError' },
  );
});

describe('AzureRoutes.listRoutes', () => {
  test("only the cluster's routes by name; unknown nodes '', stale next hops blackhole", async () => {
    const { api, routes } = setup();
    api.seed([
      va('Node1', '10.244.1.0/24', '10.0.0.1'),
      va('node10', '10.244.10.0/24', '10.0.0.77'),
      va('gone', '10.244.4.0/24', '10.0.0.4'),
      va('ds____fd0010244264', 'fd00:10:244:2::/64', 'FD00:0::2'),
      va('ds____102449024', '10.244.2.0/24', '10.0.0.2'),
      va('to_firewall', '0.0.0.0/0', '10.0.0.200'),
      { name: 'ds', addressPrefix: '10.244.2.0/24', nextHopType: 'None' },
    ]);
    const got = (await routes.listRoutes('c', opts())).map(
      (r) => `${r.name}:${r.destinationCIDR}>${r.targetNode}${r.blackhole ? ' blackhole' : ''}`,
    );
    assert.deepEqual(got, [
      'Node1:10.244.1.0/24>node1',
      'node10:10.244.10.0/24>node10 blackhole',
      'gone:10.244.4.0/24>',
      'ds____fd0010244264:fd00:10:244:2::/64>ds',
      'ds:10.244.2.0/24>ds blackhole',
    ]);
  });

  test('errors are mapped; a missing table lists empty', async () => {
    const { api, routes } = setup();
    assert.deepEqual(await routes.listRoutes('c', opts()), []);
    api.get = async () => {
      throw Object.assign(new Error('denied'), {
        name: 'RestError',
        statusCode: 403,
        code: 'AuthorizationFailed',
      });
    };
    await assert.rejects(
      routes.listRoutes('c', opts()),
      (e: Error) =>
        errorKind(e) === 'permanent' &&
        /^GET route table rt in resource group rg: AuthorizationFailed/.test(e.message),
    );
  });
});
