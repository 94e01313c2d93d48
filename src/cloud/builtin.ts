// The plug-ins shipped with this package, registered by name. Each one is a
// loader: importing this module (or the library's main entry) loads no plug-in
// and no cloud SDK; `--cloud-provider aws` alone pays for @aws-sdk/client-ec2.
import { registerCloudProviderLoader, registeredCloudProviders } from './registry.ts';

export function registerBuiltinProviders(): void {
  if (registeredCloudProviders().includes('memory')) return;
  registerCloudProviderLoader('aws', async () => (await import('./aws/index.ts')).awsProviderFactory);
  registerCloudProviderLoader('azure', async () => (await import('./azure/index.ts')).azureProviderFactory);
  registerCloudProviderLoader('gce', async () => (await import('./gce/index.ts')).gceProviderFactory);
  registerCloudProviderLoader(
    'hcloud',
    async () => (await import('./hcloud/index.ts')).hcloudProviderFactory,
  );
  registerCloudProviderLoader('linux', async () => (await import('./linux/index.ts')).linuxProviderFactory);
  registerCloudProviderLoader(
    'memory',
    async () => (await import('./memory/factory.ts')).memoryProviderFactory,
  );
  registerCloudProviderLoader(
    'openstack',
    async () => (await import('./openstack/index.ts')).openstackProviderFactory,
  );
}
