// AwsRoutes against synthesized EC2 replies: the cases moto cannot produce
// (blackholes, throttling, quotas, pagination, aborts) and call accounting.
import assert from 'node:assert/strict';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { describe, test } from 'node:test';
import { EC2Client } from './ec2.ts';
import { errorKind, retryAfterMs } from '../../core/errors.ts';
import type { CallOptions, Node, NodeLister, Route } from '../../core/types.ts';
import { ec2Error, ec2Ok, ec2RouteTables, stubEc2 } from '../../../test/support/ec2-stub.ts';
import type { StubHandler, StubRequest } from '../../../test/support/ec2-stub.ts';
import { AwsRoutes } from './routes.ts';

const RTB = 'rtb-0a0a0a0a0a0a0a0a0';

function lister(nodes: Node[]): NodeLister {
  return { get: (name) => nodes.find((n) => n.metadata?.name === name), list: () => nodes };
}

const NODES = lister([
  { metadata: { name: 'node-a', uid: 'uid-a' }, spec: { providerID: 'aws:///us-east-1a/i-aaa' } },
  { metadata: { name: 'node-b', uid: 'uid-b' }, spec: { providerID: 'aws:///us-east-1b/i-bbb' } },
  { metadata: { name: 'node-new', uid: 'uid-n' }, spec: {} },
  { metadata: { name: 'node-gce', uid: 'uid-g' }, spec: { providerID: 'gce://p/z/vm' } },
]);

function opts(signal: AbortSignal = new AbortController().signal): CallOptions {
  return { signal, reconcile: { id: 'r1', scratch: new Map() } };
}

function want(targetNode: string, destinationCIDR: string): Route {
  return {
    name: '',
    targetNode,
    targetNodeAddresses: [],
    enableNodeAddresses: false,
    destinationCIDR,
    blackhole: false,
  };
}

/** A stub that answers the table lookup and delegates the rest. */
function withTable(rest: StubHandler, routes: Parameters<typeof ec2RouteTables>[0][0]['routes'] = []) {
  return stubEc2((req) =>
    req.action === 'DescribeRouteTables' ? ec2RouteTables([{ id: RTB, routes }]) : rest(req),
  );
}

function actions(requests: StubRequest[]): string[] {
  return requests.map((r) => r.action);
}

describe('AwsRoutes.listRoutes', () => {
  test('maps instances to nodes, reports blackholes, skips gateway routes', async () => {
    const { client, requests } = withTable(
      () => assert.fail('no mutation'),
      [
        { cidr: '10.0.0.0/16', gatewayId: 'local' },
        { cidr: '0.0.0.0/0', gatewayId: 'igw-0123' },
        { cidr: '192.168.0.0/16', natGatewayId: 'nat-0123', state: 'blackhole' },
        { cidr: '10.244.1.0/24', instanceId: 'i-aaa' },
        { cidr: 'fd00:10:244:1::/64', instanceId: 'i-aaa' },
        { cidr: '10.244.2.0/24', instanceId: 'i-bbb', state: 'blackhole' },
        { cidr: '10.244.3.0/24', instanceId: 'i-gone' },
        { cidr: '10.244.4.0/24', state: 'blackhole' },
      ],
    );
    const routes = await new AwsRoutes(client, {}, NODES).listRoutes('kubernetes', opts());
    const seen = routes.map((r) => [r.destinationCIDR, r.targetNode, r.blackhole]);
    assert.deepEqual(seen, [
      ['10.244.1.0/24', 'node-a', false],
      ['fd00:10:244:1::/64', 'node-a', false],
      ['10.244.2.0/24', 'node-b', true],
      ['10.244.3.0/24', '', false],
      ['10.244.4.0/24', '', true],
    ]);
    assert.equal(routes[0]?.name, 'kubernetes-10.244.1.0/24');
    assert.equal(routes[0]?.enableNodeAddresses, false);
    const lookup = requests[0]!.params;
    assert.equal(lookup.get('Filter.1.Name'), 'tag:kubernetes.io/cluster/kubernetes');
    assert.equal(lookup.get('Filter.1.Value.1'), 'owned');
    assert.equal(lookup.get('Filter.1.Value.2'), 'shared');
  });

  test('reads every page of the lookup', async () => {
    let page = 0;
    const { client, requests } = stubEc2(() => {
      page++;
      if (page === 1) {
        const reply = ec2RouteTables([]);
        return {
          body: reply.body.replace('</routeTableSet>', '</routeTableSet><nextToken>tok-2</nextToken>'),
        };
      }
      return ec2RouteTables([{ id: RTB, routes: [{ cidr: '10.244.1.0/24', instanceId: 'i-aaa' }] }]);
    });
    const routes = await new AwsRoutes(client, {}, NODES).listRoutes('kubernetes', opts());
    assert.equal(routes.length, 1);
    assert.equal(requests[1]?.params.get('NextToken'), 'tok-2');
  });

  test('configured table ID and VPC narrow the lookup', async () => {
    const { client, requests } = withTable(() => assert.fail('no mutation'));
    const cfg = { routeTableId: RTB, vpcId: 'vpc-0b0b0b0b0b0b0b0b0' };
    await new AwsRoutes(client, cfg, NODES).listRoutes('kubernetes', opts());
    const p = requests[0]!.params;
    assert.equal(p.get('RouteTableId.1'), RTB);
    assert.equal(p.get('Filter.1.Name'), 'vpc-id');
    assert.equal(p.get('Filter.1.Value.1'), 'vpc-0b0b0b0b0b0b0b0b0');
  });

  test('no table and two tables are clear permanent errors', async () => {
    const none = stubEc2(() => ec2RouteTables([]));
    await assert.rejects(new AwsRoutes(none.client, {}, NODES).listRoutes('prod', opts()), {
      name: 'PermanentError',
      message:
        /no route table tagged kubernetes.io\/cluster\/prod=owned\|shared for cluster prod: tag the cluster route table or set routeTableId/,
    });
    const two = stubEc2(() =>
      ec2RouteTables([
        { id: 'rtb-01', routes: [] },
        { id: 'rtb-02', routes: [] },
      ]),
    );
    await assert.rejects(
      new AwsRoutes(two.client, { vpcId: 'vpc-0c0c0c0c0c0c0c0c0' }, NODES).listRoutes('prod', opts()),
      {
        name: 'PermanentError',
        message:
          /found 2 of route table tagged kubernetes.io\/cluster\/prod=owned\|shared in vpc-0c0c0c0c0c0c0c0c0 .*\(rtb-01, rtb-02\); set routeTableId/,
      },
    );
  });

  test('throttled lookup → ThrottledError with the retry hint', async () => {
    const { client } = stubEc2(() =>
      ec2Error('RequestLimitExceeded', 'Request limit exceeded.', 503, { 'Retry-After': '2' }),
    );
    const err = await new AwsRoutes(client, {}, NODES)
      .listRoutes('kubernetes', opts())
      .catch((e: unknown) => e);
    assert.equal(errorKind(err), 'throttled');
    assert.equal(retryAfterMs(err), 2000);
    assert.match((err as Error).message, /RequestLimitExceeded: Request limit exceeded\./);
  });
});

describe('AwsRoutes.createRoute', () => {
  test('disables the source/dest check, then creates (IPv4 and IPv6 fields)', async () => {
    const { client, requests } = withTable((req) => ec2Ok(req.action));
    const routes = new AwsRoutes(client, {}, NODES);
    const o = opts();
    await routes.listRoutes('kubernetes', o);
    await routes.createRoute('kubernetes', 'uid-a', want('node-a', '10.244.1.0/24'), o);
    await routes.createRoute('kubernetes', 'uid-a', want('node-a', 'fd00:10:244:1::/64'), o);
    // One lookup and one attribute change per reconcile, not per call.
    assert.deepEqual(actions(requests), [
      'DescribeRouteTables',
      'ModifyInstanceAttribute',
      'CreateRoute',
      'CreateRoute',
    ]);
    assert.equal(requests[1]!.params.get('SourceDestCheck.Value'), 'false');
    assert.equal(requests[1]!.params.get('InstanceId'), 'i-aaa');
    assert.equal(requests[2]!.params.get('DestinationCidrBlock'), '10.244.1.0/24');
    assert.equal(requests[2]!.params.get('InstanceId'), 'i-aaa');
    assert.equal(requests[2]!.params.get('RouteTableId'), RTB);
    assert.equal(requests[3]!.params.get('DestinationIpv6CidrBlock'), 'fd00:10:244:1::/64');
  });

  test('disableSrcDstCheck: false leaves the instance alone', async () => {
    const { client, requests } = withTable((req) => ec2Ok(req.action));
    await new AwsRoutes(client, { disableSrcDstCheck: false }, NODES).createRoute(
      'k',
      'uid-a',
      want('node-a', '10.244.1.0/24'),
      opts(),
    );
    assert.deepEqual(actions(requests), ['DescribeRouteTables', 'CreateRoute']);
  });

  test('200 concurrent creates share one table lookup', async () => {
    const { client, requests } = withTable((req) => ec2Ok(req.action));
    const routes = new AwsRoutes(client, { disableSrcDstCheck: false }, NODES);
    const o = opts();
    await Promise.all(
      Array.from({ length: 200 }, (_, i) =>
        routes.createRoute('k', 'uid-a', want('node-a', `10.${i}.0.0/24`), o),
      ),
    );
    assert.equal(actions(requests).filter((a) => a === 'DescribeRouteTables').length, 1);
    assert.equal(actions(requests).filter((a) => a === 'CreateRoute').length, 200);
  });

  test('existing route to the same instance → success without a write', async () => {
    const { client, requests } = withTable(
      () => ec2Error('RouteAlreadyExists', 'The route identified by 10.244.1.0/24 already exists.'),
      [{ cidr: '10.244.1.0/24', instanceId: 'i-aaa' }],
    );
    await new AwsRoutes(client, { disableSrcDstCheck: false }, NODES).createRoute(
      'k',
      'uid-a',
      want('node-a', '10.244.1.0/24'),
      opts(),
    );
    assert.deepEqual(actions(requests), ['DescribeRouteTables', 'CreateRoute', 'DescribeRouteTables']);
  });

  test('existing route to another instance → ReplaceRoute', async () => {
    const { client, requests } = withTable(
      (req) =>
        req.action === 'CreateRoute'
          ? ec2Error('RouteAlreadyExists', 'The route identified by 10.244.1.0/24 already exists.')
          : ec2Ok(req.action),
      [{ cidr: '10.244.1.0/24', instanceId: 'i-bbb' }],
    );
    await new AwsRoutes(client, { disableSrcDstCheck: false }, NODES).createRoute(
      'k',
      'uid-a',
      want('node-a', '10.244.1.0/24'),
      opts(),
    );
    assert.deepEqual(actions(requests), [
      'DescribeRouteTables',
      'CreateRoute',
      'DescribeRouteTables',
      'ReplaceRoute',
    ]);
    assert.equal(requests[3]!.params.get('InstanceId'), 'i-aaa');
  });

  test('existing gateway route for the pod CIDR is not hijacked', async () => {
    const { client, requests } = withTable(
      () => ec2Error('RouteAlreadyExists', 'already exists'),
      [{ cidr: '10.244.1.0/24', natGatewayId: 'nat-0123' }],
    );
    await assert.rejects(
      new AwsRoutes(client, { disableSrcDstCheck: false }, NODES).createRoute(
        'k',
        'uid-a',
        want('node-a', '10.244.1.0/24'),
        opts(),
      ),
      { name: 'PermanentError', message: /already routes 10.244.1.0\/24 to nat-0123/ },
    );
    assert.ok(!actions(requests).includes('ReplaceRoute'));
  });

  test('exists-then-gone is a conflict', async () => {
    const { client } = withTable(() => ec2Error('RouteAlreadyExists', 'already exists'));
    const err = await new AwsRoutes(client, { disableSrcDstCheck: false }, NODES)
      .createRoute('k', 'uid-a', want('node-a', '10.244.1.0/24'), opts())
      .catch((e: unknown) => e);
    assert.equal(errorKind(err), 'conflict');
  });

  test('RouteLimitExceeded → QuotaExceededError', async () => {
    const { client } = withTable((req) =>
      req.action === 'CreateRoute'
        ? ec2Error('RouteLimitExceeded', 'The maximum number of routes has been reached.')
        : ec2Ok(req.action),
    );
    await assert.rejects(
      new AwsRoutes(client, {}, NODES).createRoute('k', 'uid-a', want('node-a', '10.244.1.0/24'), opts()),
      {
        name: 'QuotaExceededError',
        message:
          /CreateRoute 10.244.1.0\/24 via i-aaa \(node node-a\) in rtb-\w+: RouteLimitExceeded: The maximum number of routes/,
      },
    );
  });

  test('unknown instance → PermanentError', async () => {
    const { client } = withTable(() =>
      ec2Error('InvalidInstanceID.NotFound', "The instance ID 'i-aaa' does not exist"),
    );
    const err = await new AwsRoutes(client, {}, NODES)
      .createRoute('k', 'uid-a', want('node-a', '10.244.1.0/24'), opts())
      .catch((e: unknown) => e);
    assert.equal(errorKind(err), 'permanent');
    assert.match((err as Error).message, /ModifyInstanceAttribute .*InvalidInstanceID.NotFound/);
  });

  test('target problems are detected before any call', async () => {
    const { client, requests } = withTable(() => assert.fail('no call'));
    const routes = new AwsRoutes(client, {}, NODES);
    const fails = async (r: Route) => routes.createRoute('k', 'x', r, opts()).catch((e: unknown) => e);
    const missing = await fails(want('node-x', '10.244.9.0/24'));
    assert.equal(errorKind(missing), 'permanent');
    assert.match((missing as Error).message, /node node-x is not in the node cache/);
    const noId = await fails(want('node-new', '10.244.9.0/24'));
    assert.equal(errorKind(noId), 'retryable');
    assert.match((noId as Error).message, /node node-new has no spec.providerID yet/);
    const foreign = await fails(want('node-gce', '10.244.9.0/24'));
    assert.match(
      (foreign as Error).message,
      /providerID "gce:\/\/p\/z\/vm", not aws:\/\/\/<zone>\/<instance-id>/,
    );
    const family = await fails(want('node-a', 'not-a-cidr'));
    assert.equal(errorKind(family), 'permanent');
    assert.equal(requests.length, 0);
  });
});

describe('AwsRoutes.deleteRoute', () => {
  test('deletes by family field; a missing route is success', async () => {
    let n = 0;
    const { client, requests } = withTable(() =>
      n++ === 0
        ? ec2Ok('DeleteRoute')
        : ec2Error('InvalidRoute.NotFound', 'no route with destination-cidr-block fd00::/64'),
    );
    const routes = new AwsRoutes(client, {}, NODES);
    const o = opts();
    await routes.deleteRoute('k', { ...want('node-a', '10.244.1.0/24'), name: 'k-10.244.1.0/24' }, o);
    await routes.deleteRoute('k', want('', 'fd00::/64'), o);
    assert.deepEqual(actions(requests), ['DescribeRouteTables', 'DeleteRoute', 'DeleteRoute']);
    assert.equal(requests[1]!.params.get('DestinationCidrBlock'), '10.244.1.0/24');
    assert.equal(requests[2]!.params.get('DestinationIpv6CidrBlock'), 'fd00::/64');
  });

  test('server errors are retryable', async () => {
    const { client } = withTable(() => ec2Error('InternalError', 'An internal error has occurred', 500));
    const err = await new AwsRoutes(client, {}, NODES)
      .deleteRoute('k', want('', '10.244.1.0/24'), opts())
      .catch((e: unknown) => e);
    assert.equal(errorKind(err), 'retryable');
  });

  test('a failed lookup is not cached for the rest of the reconcile', async () => {
    let lookups = 0;
    const { client } = stubEc2((req) => {
      if (req.action !== 'DescribeRouteTables') return ec2Ok(req.action);
      return ++lookups === 1
        ? ec2Error('Throttling', 'Rate exceeded')
        : ec2RouteTables([{ id: RTB, routes: [] }]);
    });
    const routes = new AwsRoutes(client, {}, NODES);
    const o = opts();
    await assert.rejects(routes.deleteRoute('k', want('', '10.244.1.0/24'), o), { name: 'ThrottledError' });
    await routes.deleteRoute('k', want('', '10.244.1.0/24'), o);
    assert.equal(lookups, 2);
  });
});

describe('AwsRoutes aborts (R4)', () => {
  test('an aborted signal starts no call', async () => {
    const { client, requests } = withTable((req) => ec2Ok(req.action));
    const controller = new AbortController();
    controller.abort();
    const routes = new AwsRoutes(client, {}, NODES);
    const o = opts(controller.signal);
    await assert.rejects(routes.listRoutes('k', o), { name: 'AbortError' });
    await assert.rejects(routes.createRoute('k', 'uid-a', want('node-a', '10.244.1.0/24'), o), {
      name: 'AbortError',
    });
    await assert.rejects(routes.deleteRoute('k', want('node-a', '10.244.1.0/24'), o), { name: 'AbortError' });
    assert.equal(requests.length, 0);
  });

  test('abort during a create stops before the route is written', async () => {
    const controller = new AbortController();
    const { client, requests } = withTable((req) => {
      controller.abort(); // e.g. leadership lost while ModifyInstanceAttribute was in flight
      return ec2Ok(req.action);
    });
    const err = await new AwsRoutes(client, {}, NODES)
      .createRoute('k', 'uid-a', want('node-a', '10.244.1.0/24'), opts(controller.signal))
      .catch((e: unknown) => e);
    assert.equal((err as Error).name, 'AbortError');
    assert.ok(!actions(requests).includes('CreateRoute'));
  });

  test('abort of a request in flight rejects promptly', async (t) => {
    // A loopback server that accepts and never answers: the SDK's real HTTP handler must give up.
    const held: http.ServerResponse[] = [];
    const server = http.createServer((_req, res) => void held.push(res));
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    t.after(() => {
      for (const res of held) res.destroy();
      server.close();
    });
    const client = new EC2Client({
      region: 'us-east-1',
      endpoint: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
      credentials: { accessKeyId: 'AKIAUNITTESTEXAMPLE0', secretAccessKey: 'unit-test-secret' },
      maxAttempts: 1,
    });
    t.after(() => client.destroy());
    const controller = new AbortController();
    setTimeout(() => controller.abort(), 100);
    // The server holds every request and never answers: the rejection itself shows the abort
    // ended the call (without it the call would hang until the test's timeout).
    await assert.rejects(new AwsRoutes(client, {}, NODES).listRoutes('k', opts(controller.signal)), {
      name: 'AbortError',
    });
  });
});
