// The azure plug-in's route table client pointed at the Azure fake (test/support/azure-fake.ts),
// with a static token: how the provider-level azure tests build it without the factory.
import { AzureRoutes, createNetworkClient, routeTableApi } from '../../src/cloud/azure/index.ts';
import type { AzureCredential, AzureRoutesConfig } from '../../src/cloud/azure/index.ts';
import type { NodeLister } from '../../src/core/types.ts';
import type { AzureFake } from './azure-fake.ts';

/** A credential whose token the fake accepts as any other (it logs it on each request). */
export const STATIC_TOKEN: AzureCredential = {
  getToken: async () => ({ token: 'static-test-token', expiresOnTimestamp: Date.now() + 3_600_000 }),
};

/** AzureRoutes on the fake's subscription `subscriptionId`, polling long-running operations every 20 ms. */
export function azureRoutesOn(
  fake: AzureFake,
  subscriptionId: string,
  config: AzureRoutesConfig,
  nodes: NodeLister,
): AzureRoutes {
  const client = createNetworkClient(
    {
      resourceManagerEndpoint: fake.endpoint,
      subscriptionId,
      tokenScope: 'https://management.azure.com/.default',
    },
    STATIC_TOKEN,
  );
  return new AzureRoutes(routeTableApi(client, { pollIntervalMs: 20 }), config, nodes);
}
