import assert from 'node:assert/strict';
import { afterEach, beforeEach, describe, test } from 'node:test';
import type { NodeLister } from '../../core/types.ts';
import { AwsConfigError, AwsRoutes, awsProviderFactory } from './index.ts';

const NO_NODES: NodeLister = { get: () => undefined, list: () => [] };

describe('awsProviderFactory', () => {
  let saved: NodeJS.ProcessEnv;
  beforeEach(() => {
    saved = { ...process.env };
    for (const k of ['AWS_REGION', 'AWS_DEFAULT_REGION', 'AWS_PROFILE']) delete process.env[k];
    // Keep a developer's ~/.aws/config region out of the test.
    process.env.AWS_CONFIG_FILE = '/nonexistent/aws-config';
    process.env.AWS_EC2_METADATA_DISABLED = 'true';
  });
  afterEach(() => {
    process.env = saved;
  });

  test('builds an aws provider with routes', async () => {
    const cloud = await awsProviderFactory('region: eu-west-1\ndisableSrcDstCheck: false\n', NO_NODES);
    assert.equal(cloud.name, 'aws');
    assert.ok(cloud.routes() instanceof AwsRoutes);
  });

  test('region from AWS_DEFAULT_REGION', async () => {
    process.env.AWS_DEFAULT_REGION = 'ap-southeast-2';
    const cloud = await awsProviderFactory('', NO_NODES);
    assert.equal(cloud.name, 'aws');
  });

  test('no region anywhere fails at startup with a clear message', async () => {
    await assert.rejects(
      async () => awsProviderFactory('', NO_NODES),
      (err: unknown) => {
        assert.ok(err instanceof AwsConfigError);
        assert.match(
          err.message,
          /no AWS region: set "region" in the cloud config, or AWS_REGION \/ AWS_DEFAULT_REGION/,
        );
        return true;
      },
    );
  });

  test('config errors surface from the factory', async () => {
    await assert.rejects(async () => awsProviderFactory('routeTableID: rtb-0123456789abcdef0', NO_NODES), {
      name: 'AwsConfigError',
      message: /unknown field "routeTableID"/,
    });
  });

  test('R124: plan is told that IPv6 routes would be left behind by a rollback to cloud-provider-aws', async () => {
    const cloud = await awsProviderFactory('region: eu-west-1\n', NO_NODES);
    assert.deepEqual(cloud.rollbackHazards?.(['10.244.0.0/16']), []);
    const hazards = cloud.rollbackHazards?.(['10.244.0.0/16', 'fd00:10:244::/56']) ?? [];
    assert.equal(hazards.length, 1);
    assert.match(
      hazards[0]!,
      /IPv6 routes \(cluster CIDR fd00:10:244::\/56\) are invisible to cloud-provider-aws/,
    );
  });
});
