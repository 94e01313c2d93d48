/**
 * The product as an operator runs it on Azure (test/support/azure-fake.ts: Microsoft's generated
 * armnetwork fake servers): the image, `helm install` with docs/providers/azure.md's values
 * (cloud-provider-azure's azure.json from an existing Secret; a managed identity), the chart's
 * pods under podman, node IPAM and kwok. The managed identity's token comes from the fake's
 * instance-metadata endpoint, which AZURE_POD_IDENTITY_AUTHORITY_HOST points @azure/identity at
 * (the pods here cannot reach 169.254.169.254), as in test/integration/azure-daemon.test.ts.
 */
import { azureFakeSkip, startAzureFake } from '../support/azure-fake.ts';
import { CLUSTER_CIDRS, describeCloud, portOf } from './clouds.ts';
import { NAMESPACE } from './release.ts';
import { createObject } from './scenario.ts';

const TABLE = 'k8s-routes';
const SUBSCRIPTION = '00000000-0000-0000-0000-0000000000a1';
const nodes = [0, 1, 2].map((i) => ({
  name: `node-${i}`,
  providerID: `azure:///subscriptions/${SUBSCRIPTION}/resourceGroups/k8s-rg/providers/Microsoft.Compute/virtualMachines/node-${i}`,
  ip: `10.0.0.${10 + i}`,
}));

describeCloud({
  cloud: 'azure',
  fakeSkip: azureFakeSkip,
  nodes,
  async start(cluster) {
    const fake = await startAzureFake();
    // azure.json as cloud-provider-azure reads it (docs/providers/azure.md, "Managed identity").
    const azureJson = {
      cloud: 'AzurePublicCloud',
      tenantId: '00000000-0000-0000-0000-0000000000b2',
      subscriptionId: SUBSCRIPTION,
      resourceGroup: 'k8s-rg',
      location: 'westeurope',
      vnetName: 'k8s-vnet',
      subnetName: 'k8s-subnet',
      securityGroupName: 'k8s-nsg',
      routeTableName: TABLE,
      vmType: 'vmss',
      loadBalancerSku: 'standard',
      useManagedIdentityExtension: true,
      useInstanceMetadata: true,
      resourceManagerEndpoint: fake.endpoint,
    };
    await createObject(cluster, `/api/v1/namespaces/${NAMESPACE}/secrets`, {
      apiVersion: 'v1',
      kind: 'Secret',
      metadata: { name: 'azure-cloud-config' },
      stringData: { 'azure.json': JSON.stringify(azureJson, null, 2) },
    });
    return {
      values: {
        provider: 'azure',
        clusterCIDRs: CLUSTER_CIDRS,
        cloudConfig: { existingSecret: 'azure-cloud-config', existingSecretKey: 'azure.json' },
        extraEnv: [{ name: 'AZURE_POD_IDENTITY_AUTHORITY_HOST', value: fake.endpoint }],
      },
      hostPorts: [portOf(fake.endpoint)],
      routes: async () =>
        ((await fake.table(TABLE))?.properties.routes ?? [])
          .map((r) => `${r.properties.addressPrefix}>${r.properties.nextHopIpAddress ?? ''}`)
          .sort(),
      expected: (routed) => nodes.map((n) => `${routed.get(n.name)!.spec.podCIDRs![0]}>${n.ip}`).sort(),
      stop: () => fake.stop(),
    };
  },
});
