import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { AzureConfigError, describeAzureConfig, parseAzureCloudConfig } from './config.ts';

const SUB = '11111111-2222-3333-4444-555555555555';
const TENANT = '66666666-7777-8888-9999-000000000000';
const CLIENT = 'aaaaaaaa-bbbb-cccc-dddd-eeeeeeeeeeee';

// A cloud-provider-azure azure.json as clusters have it, with keys this plug-in ignores.
const BASE = {
  cloud: 'AzurePublicCloud',
  tenantId: TENANT,
  subscriptionId: SUB,
  resourceGroup: 'k8s-rg',
  location: 'westeurope',
  vmType: 'vmss',
  subnetName: 'k8s-subnet',
  securityGroupName: 'k8s-nsg',
  vnetName: 'k8s-vnet',
  routeTableName: 'k8s-routes',
  loadBalancerSku: 'standard',
  useManagedIdentityExtension: true,
  useInstanceMetadata: true,
};

function parse(extra: Record<string, unknown> = {}, env: Record<string, string> = {}) {
  return parseAzureCloudConfig(JSON.stringify({ ...BASE, ...extra }), env);
}

function rejects(text: string, re: RegExp, env: Record<string, string> = {}): void {
  assert.throws(
    () => parseAzureCloudConfig(text, env),
    (e: unknown) => e instanceof AzureConfigError && re.test(e.message),
  );
}

function without(key: string): string {
  const copy: Record<string, unknown> = { ...BASE };
  delete copy[key];
  return JSON.stringify(copy);
}

describe('azure.json', () => {
  test('an upstream file: unknown keys ignored, system-assigned managed identity', () => {
    const c = parse();
    assert.equal(c.subscriptionId, SUB);
    assert.equal(c.resourceGroup, 'k8s-rg');
    assert.equal(c.routeTableResourceGroup, 'k8s-rg', 'defaults to resourceGroup');
    assert.equal(c.routeTableName, 'k8s-routes');
    assert.equal(c.location, 'westeurope');
    assert.equal(c.resourceManagerEndpoint, 'https://management.azure.com');
    assert.equal(c.tokenScope, 'https://management.azure.com/.default');
    assert.deepEqual(c.credential, { kind: 'managedIdentity' });
  });

  test('key names match case-insensitively, the last spelling kept, as json.Unmarshal does (R122)', () => {
    const text = JSON.stringify({
      ...BASE,
      routeTableName: undefined,
      RouteTableName: 'first',
      routetablename: 'k8s-routes-2',
      RouteTableResourceGroup: 'net-rg',
      SUBSCRIPTIONID: SUB,
    });
    const c = parseAzureCloudConfig(text, {});
    assert.equal(c.routeTableName, 'k8s-routes-2');
    assert.equal(c.routeTableResourceGroup, 'net-rg');
    assert.equal(c.subscriptionId, SUB);
  });

  test('each missing required key is named', () => {
    rejects(without('subscriptionId'), /"subscriptionId" is required/);
    rejects(without('resourceGroup'), /"resourceGroup" is required/);
    rejects(without('routeTableName'), /"routeTableName" is required/);
    rejects(without('location'), /"location" is required/);
  });

  test('each bad value is named', () => {
    rejects(JSON.stringify({ ...BASE, subscriptionId: 'abc' }), /"subscriptionId" is not valid: "abc"/);
    rejects(JSON.stringify({ ...BASE, routeTableName: 'bad name!' }), /"routeTableName" is not valid/);
    rejects(JSON.stringify({ ...BASE, resourceGroup: 42 }), /"resourceGroup" must be a string/);
    rejects(
      JSON.stringify({ ...BASE, useManagedIdentityExtension: 'yes' }),
      /"useManagedIdentityExtension" must be true or false/,
    );
    rejects(
      JSON.stringify({ ...BASE, cloud: 'AzureStackCloud' }),
      /"cloud" "AzureStackCloud" is not supported/,
    );
    rejects(
      JSON.stringify({ ...BASE, userAssignedIdentityID: 'x' }),
      /"userAssignedIdentityID" is not valid/,
    );
    rejects(
      JSON.stringify({ ...BASE, resourceManagerEndpoint: 'http://10.1.2.3' }),
      /"resourceManagerEndpoint" must be an https URL/,
    );
    rejects(
      JSON.stringify({ ...BASE, networkResourceTenantID: TENANT }),
      /"networkResourceTenantID" .* not supported/,
    );
  });

  test('not a file of keys', () => {
    rejects('', /the file is empty/);
    rejects('[1, 2]', /expected an object of azure.json keys, got a list/);
    rejects('{"subscriptionId": ', /not valid JSON or YAML/);
  });

  test('named clouds and the endpoint override (http only on loopback)', () => {
    const china = parse({ cloud: 'azurechinacloud' });
    assert.equal(china.cloud, 'AzureChinaCloud');
    assert.equal(china.resourceManagerEndpoint, 'https://management.chinacloudapi.cn');
    assert.equal(china.authorityHost, 'https://login.chinacloudapi.cn');
    assert.equal(
      parse({ cloud: 'AzureUSGovernment' }).tokenScope,
      'https://management.usgovcloudapi.net/.default',
    );
    assert.equal(
      parse({ resourceManagerEndpoint: 'http://127.0.0.1:8080/' }).resourceManagerEndpoint,
      'http://127.0.0.1:8080',
    );
    assert.equal(
      parse({ resourceManagerEndpoint: 'https://arm.example' }).resourceManagerEndpoint,
      'https://arm.example',
    );
  });

  test('route table elsewhere: its resource group and network subscription', () => {
    const other = '99999999-2222-3333-4444-555555555555';
    const c = parse({ routeTableResourceGroup: 'net-rg', networkResourceSubscriptionID: other });
    assert.equal(c.routeTableResourceGroup, 'net-rg');
    assert.equal(c.subscriptionId, other);
  });

  test('user-assigned managed identity by client ID or resource ID', () => {
    assert.deepEqual(parse({ userAssignedIdentityID: CLIENT }).credential, {
      kind: 'managedIdentity',
      clientId: CLIENT,
    });
    const id = `/subscriptions/${SUB}/resourceGroups/ids/providers/Microsoft.ManagedIdentity/userAssignedIdentities/rc`;
    assert.deepEqual(parse({ userAssignedIdentityID: id }).credential, {
      kind: 'managedIdentity',
      resourceId: id,
    });
  });

  test('workload identity: from the file, or turned on by the webhook environment, which wins', () => {
    const file = parse({ useFederatedWorkloadIdentityExtension: true, aadClientId: CLIENT });
    assert.deepEqual(file.credential, {
      kind: 'workloadIdentity',
      tenantId: TENANT,
      clientId: CLIENT,
      tokenFilePath: '/var/run/secrets/azure/tokens/azure-identity-token',
    });
    const other = '12345678-1234-1234-1234-123456789012';
    const env = { AZURE_FEDERATED_TOKEN_FILE: '/t/token', AZURE_CLIENT_ID: other, AZURE_TENANT_ID: other };
    assert.deepEqual(parse({ useManagedIdentityExtension: false }, env).credential, {
      kind: 'workloadIdentity',
      tenantId: other,
      clientId: other,
      tokenFilePath: '/t/token',
    });
    rejects(
      JSON.stringify({
        ...BASE,
        useManagedIdentityExtension: false,
        useFederatedWorkloadIdentityExtension: true,
      }),
      /"aadClientId" is required \(the client ID of the workload identity\)/,
    );
  });

  test('client secret, with AZURE_CLIENT_SECRET overriding; never in the description', () => {
    const c = parse({ useManagedIdentityExtension: false, aadClientId: CLIENT, aadClientSecret: 's3cret' });
    assert.deepEqual(c.credential, {
      kind: 'clientSecret',
      tenantId: TENANT,
      clientId: CLIENT,
      clientSecret: 's3cret',
    });
    assert.ok(!describeAzureConfig(c).includes('s3cret'));
    assert.match(describeAzureConfig(c), /client secret of aaaaaaaa-.* in tenant 66666666-/);
    const env = parse(
      { useManagedIdentityExtension: false, aadClientId: CLIENT },
      { AZURE_CLIENT_SECRET: 'e' },
    );
    assert.equal(env.credential.kind === 'clientSecret' && env.credential.clientSecret, 'e');
    rejects(
      JSON.stringify({
        ...BASE,
        useManagedIdentityExtension: false,
        aadClientSecret: 's',
        tenantId: undefined,
      }),
      /"tenantId" is required/,
    );
  });

  test('no usable credential is a clear error', () => {
    rejects(JSON.stringify({ ...BASE, useManagedIdentityExtension: false }), /no credentials: set/);
    rejects(
      JSON.stringify({ ...BASE, useManagedIdentityExtension: false, aadClientCertPath: '/etc/cert.pfx' }),
      /"aadClientCertPath" \(certificate credentials\) is not supported/,
    );
  });

  test('YAML, as upstream also reads it', () => {
    const c = parseAzureCloudConfig(
      `subscriptionId: ${SUB}\nresourceGroup: rg\nlocation: eastus\nrouteTableName: rt\nuseManagedIdentityExtension: true\n`,
      {},
    );
    assert.equal(c.routeTableName, 'rt');
  });
});
