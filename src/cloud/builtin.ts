// The plug-ins shipped with this package, registered by name.
import { awsProviderFactory } from './aws/index.ts';
import { hcloudProviderFactory } from './hcloud/index.ts';
import { linuxProviderFactory } from './linux/index.ts';
import { memoryProviderFactory } from './memory/factory.ts';
import { registerCloudProvider, registeredCloudProviders } from './registry.ts';

export function registerBuiltinProviders(): void {
  if (registeredCloudProviders().includes('memory')) return;
  registerCloudProvider('aws', awsProviderFactory);
  registerCloudProvider('hcloud', hcloudProviderFactory);
  registerCloudProvider('linux', linuxProviderFactory);
  registerCloudProvider('memory', memoryProviderFactory);
}
