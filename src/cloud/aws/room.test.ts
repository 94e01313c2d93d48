// R118: the aws plug-in's route limit: Service Quotas, else the default 50 until the refresh.
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import type { FetchInit, FetchResponse } from '../../platform/http-fetch.ts';
import { EC2Client } from './ec2.ts';
import { AWS_DEFAULT_ROUTE_LIMIT, ListedTable, QUOTA_REFRESH_MS, RouteTableLimit } from './room.ts';
import { parseAwsCloudConfig } from './config.ts';
import { Registry } from 'prom-client';
import { ec2Error, ec2Ok, ec2RouteTables, stubEc2 } from '../../../test/support/ec2-stub.ts';
import { MemoryCluster } from '../../cluster/memory-cluster.ts';
import { RouteController } from '../../controller/route-controller.ts';
import { MemoryLogger } from '../../core/ports.ts';
import { AwsRoutes } from './routes.ts';

const client = new EC2Client({
  region: 'eu-west-1',
  credentials: { accessKeyId: 'AKIDEXAMPLE', secretAccessKey: 'secret' },
});
const reply = (status: number, body: unknown): FetchResponse => ({
  ok: status < 300,
  status,
  statusText: '',
  headers: { get: () => null },
  text: async () => JSON.stringify(body),
});
const table = new ListedTable('rtb-1', [
  { DestinationCidrBlock: '10.0.0.0/16', GatewayId: 'local', Origin: 'CreateRouteTable' },
  { DestinationCidrBlock: '10.244.0.0/24', InstanceId: 'i-1', Origin: 'CreateRoute' },
  { DestinationCidrBlock: '192.168.0.0/16', GatewayId: 'vgw-1', Origin: 'EnableVgwRoutePropagation' },
]);
const signal = new AbortController().signal;

describe('aws: RouteTableLimit', () => {
  test('a signed GetServiceQuota for vpc L-93826ACB; propagated routes do not count', async () => {
    const seen: { url: string; init: FetchInit }[] = [];
    const limit = new RouteTableLimit({
      client,
      fetch: async (url, init) => {
        seen.push({ url, init });
        return reply(200, { Quota: { QuotaCode: 'L-93826ACB', Value: 120 } });
      },
    });
    const room = await limit.room(table, signal);
    assert.deepEqual([room.container, room.limit, room.used], ['route table rtb-1', 120, 2]);
    assert.equal(seen[0]!.url, 'https://servicequotas.eu-west-1.amazonaws.com/');
    assert.equal(seen[0]!.init.headers!['x-amz-target'], 'ServiceQuotasV20190624.GetServiceQuota');
    assert.match(
      seen[0]!.init.headers!['authorization'] ?? '',
      /^AWS4-HMAC-SHA256 Credential=AKIDEXAMPLE\/\d{8}\/eu-west-1\/servicequotas\/aws4_request/,
    );
    assert.deepEqual(JSON.parse(seen[0]!.init.body!), { ServiceCode: 'vpc', QuotaCode: 'L-93826ACB' });
  });

  test('no permission: the default 50, not asked again before the refresh', async () => {
    let now = 0;
    let calls = 0;
    const limit = new RouteTableLimit({
      client,
      now: () => now,
      fetch: async () => {
        calls++;
        return reply(400, { __type: 'AccessDeniedException', message: 'not authorized' });
      },
    });
    const room = await limit.room(table, signal);
    assert.equal(room.limit, AWS_DEFAULT_ROUTE_LIMIT);
    assert.match(
      room.raise,
      /the limit is EC2's default of 50 \(Service Quotas: GetServiceQuota answered HTTP 400: .*AccessDeniedException/,
    );
    await limit.room(table, signal);
    assert.equal(calls, 1);
    now += QUOTA_REFRESH_MS;
    await limit.room(table, signal);
    assert.equal(calls, 2);
  });

  test('routeTableLimit in the cloud config: a whole number of at least 1', () => {
    assert.equal(parseAwsCloudConfig('routeTableLimit: 100\n').routeTableLimit, 100);
    assert.equal(parseAwsCloudConfig('region: us-east-1\n').routeTableLimit, undefined);
    for (const bad of ['0', '2.5', '"50"'])
      assert.throws(
        () => parseAwsCloudConfig(`routeTableLimit: ${bad}\n`),
        /field "routeTableLimit" must be a whole number of at least 1/,
      );
  });

  test('a create EC2 refuses with RouteLimitExceeded: the Event names the table, its limit and the quota; nothing deleted', async () => {
    const routes = [
      { cidr: '10.0.0.0/16', gatewayId: 'local' },
      { cidr: '10.244.1.0/24', instanceId: 'i-0000000000000000a' },
      { cidr: '10.244.2.0/24', instanceId: 'i-0000000000000000b' },
    ];
    const { client: stub, requests } = stubEc2((req) => {
      if (req.action === 'DescribeRouteTables')
        return ec2RouteTables([{ id: 'rtb-0000000000000000a', routes }]);
      if (req.action === 'ModifyInstanceAttribute') return ec2Ok('ModifyInstanceAttribute');
      if (req.action === 'CreateRoute')
        return ec2Error('RouteLimitExceeded', 'The maximum number of routes has been reached.');
      return ec2Error('UnsupportedOperation', req.action);
    });
    const cluster = new MemoryCluster();
    ['a', 'b', 'c'].forEach((x, i) =>
      cluster.createNode({
        name: `node-${x}`,
        providerID: `aws:///us-east-1a/i-0000000000000000${x}`,
        podCIDRs: [`10.244.${i + 1}.0/24`],
      }),
    );
    const registry = new Registry();
    const controller = new RouteController({
      routes: new AwsRoutes(stub, {}, cluster, new RouteTableLimit({ client: stub, configured: 3 })),
      nodes: cluster,
      statusWriter: cluster,
      recorder: cluster,
      logger: new MemoryLogger(),
      registry,
      clusterName: 'k8s',
      clusterCIDRs: ['10.244.0.0/16'],
    });
    const report = await controller.reconcileOnce('periodic', signal);
    assert.deepEqual([...report.failureKinds], ['quota_exceeded']);
    assert.deepEqual(
      cluster.events.map((e) => [e.node.name, e.reason]),
      [['node-c', 'FailedToCreateRoute']],
    );
    assert.match(
      cluster.events[0]!.message,
      /RouteLimitExceeded.*; route table rtb-0000000000000000a holds 3 of its limit of 3 routes \(2 of this cluster, 1 others\); no route of a live node is removed to make room: request an increase of the "Routes per route table" quota \(Service Quotas, vpc L-93826ACB\)/,
    );
    assert.deepEqual(
      requests.filter((r) => r.action === 'DeleteRoute'),
      [],
    );
  });
});
