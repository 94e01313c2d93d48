import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import type { NodeLister } from '../../core/types.ts';
import {
  AZURE_WRITE_LIMIT,
  AzureConfigError,
  AzureRoutes,
  azureProviderFactory,
  buildAzureProvider,
  createCredential,
  parseAzureCloudConfig,
} from './index.ts';

const NO_NODES: NodeLister = { get: () => undefined, list: () => [] };
const SUB = '11111111-2222-3333-4444-555555555555';
const TENANT = '66666666-7777-8888-9999-000000000000';
const CLIENT = 'aaaaaaaa-bbbb-cccc-dddd-eeeeeeeeeeee';
const BASE = { subscriptionId: SUB, resourceGroup: 'rg', location: 'westeurope', routeTableName: 'rt' };

describe('azureProviderFactory', () => {
  test('a provider with routes, the documented write limit and its target keys', async () => {
    const cloud = await buildAzureProvider(
      JSON.stringify({ ...BASE, useManagedIdentityExtension: true }),
      NO_NODES,
      {
        env: {},
        credential: { getToken: async () => null },
      },
    );
    assert.equal(cloud.name, 'azure');
    assert.ok(cloud.routes() instanceof AzureRoutes);
    // Microsoft.Network: 1,000 writes per 5 minutes; ARM's write bucket: 200.
    assert.deepEqual(cloud.writeLimit, { qps: 1000 / 300, burst: 200 });
    assert.deepEqual(AZURE_WRITE_LIMIT, cloud.writeLimit);
    assert.deepEqual(cloud.routeTargetKeys, ['uid', 'addresses']);
  });

  test('a bad config fails before any credential is made', async () => {
    await assert.rejects(async () => azureProviderFactory('{"resourceGroup": "rg"}', NO_NODES), {
      name: 'AzureConfigError',
      message: /"subscriptionId" is required/,
    });
  });

  test('the credential the config selects', async () => {
    const env = {};
    const kind = async (extra: object): Promise<string> =>
      (await createCredential(parseAzureCloudConfig(JSON.stringify({ ...BASE, ...extra }), env), env))
        .constructor.name;
    assert.equal(await kind({ useManagedIdentityExtension: true }), 'ManagedIdentityCredential');
    assert.equal(
      await kind({ useManagedIdentityExtension: true, userAssignedIdentityID: CLIENT }),
      'ManagedIdentityCredential',
    );
    assert.equal(
      await kind({ aadClientId: CLIENT, aadClientSecret: 'not-a-real-secret', tenantId: TENANT }),
      'ClientSecretCredential',
    );
    assert.equal(
      await kind({ useFederatedWorkloadIdentityExtension: true, aadClientId: CLIENT, tenantId: TENANT }),
      'WorkloadIdentityCredential',
    );
    assert.ok(new AzureConfigError('x') instanceof Error);
  });
});
