// R118: the aws plug-in's route limit: Service Quotas, else the default 50 until the refresh.
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import type { FetchInit, FetchResponse } from '../../platform/http-fetch.ts';
import { EC2Client } from './ec2.ts';
import { AWS_DEFAULT_ROUTE_LIMIT, ListedTable, QUOTA_REFRESH_MS, RouteTableLimit } from './room.ts';
import { parseAwsCloudConfig } from './config.ts';

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
});
