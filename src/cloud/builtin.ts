// The plug-ins shipped with this package, registered by name and loaded on
// first use: importing @aws-sdk/client-ec2 alone costs ~128 MB resident, so a
// daemon or a library user pays only for the provider it selects. Code that
// wants a plug-in's classes imports its subpath (`cloud-route-controller/aws`).
import type { CloudProviderFactory } from '../core/types.ts';
import { registerCloudProvider, registeredCloudProviders } from './registry.ts';

/** A factory that imports its plug-in the first time it is called. */
function onDemand(load: () => Promise<CloudProviderFactory>): CloudProviderFactory {
  return async (config, nodes) => (await load())(config, nodes);
}

export function registerBuiltinProviders(): void {
  if (registeredCloudProviders().includes('memory')) return;
  registerCloudProvider(
    'aws',
    onDemand(async () => (await import('./aws/index.ts')).awsProviderFactory),
  );
  registerCloudProvider(
    'hcloud',
    onDemand(async () => (await import('./hcloud/index.ts')).hcloudProviderFactory),
  );
  registerCloudProvider(
    'linux',
    onDemand(async () => (await import('./linux/index.ts')).linuxProviderFactory),
  );
  registerCloudProvider(
    'memory',
    onDemand(async () => (await import('./memory/factory.ts')).memoryProviderFactory),
  );
}
