// Start-up checks that need files or the provider registry (R60 "provider"
// and "other" rows). Dependencies are injected so the messages are unit-tested.
import { errorMessage } from '../core/errors.ts';
import type { CloudProvider, CloudProviderFactory, NodeLister, Routes } from '../core/types.ts';
import type { DaemonFlags } from './flags.ts';

export interface PreflightDeps {
  readFile(path: string): Promise<string>;
  resolveProvider(name: string): Promise<CloudProviderFactory>;
}

export interface PreflightResult {
  readonly provider: CloudProvider | undefined;
  /** undefined when the provider has no route support or could not be built. */
  readonly routes: Routes | undefined;
  readonly errors: readonly string[];
  /** False when --kubeconfig names a file that cannot be read (already reported). */
  readonly kubeconfigReadable: boolean;
}

/**
 * Reads --kubeconfig and --cloud-config, resolves and builds the provider. The
 * `nodes` lister may be bound later: factories only keep it for reconcile time.
 */
export async function preflight(
  flags: DaemonFlags,
  nodes: NodeLister,
  deps: PreflightDeps,
): Promise<PreflightResult> {
  const errors: string[] = [];
  let kubeconfigReadable = true;
  if (flags.kubeconfig !== '') {
    try {
      await deps.readFile(flags.kubeconfig);
    } catch (err) {
      kubeconfigReadable = false;
      errors.push(`invalid --kubeconfig "${flags.kubeconfig}": ${errorMessage(err)}`);
    }
  }
  let configText: string | undefined = '';
  if (flags.cloudConfig !== '') {
    try {
      configText = await deps.readFile(flags.cloudConfig);
    } catch (err) {
      configText = undefined;
      errors.push(`couldn't open cloud provider configuration ${flags.cloudConfig}: ${errorMessage(err)}`);
    }
  }
  if (flags.cloudProvider === '')
    return { provider: undefined, routes: undefined, errors, kubeconfigReadable };
  let factory: CloudProviderFactory;
  try {
    factory = await deps.resolveProvider(flags.cloudProvider);
  } catch (err) {
    errors.push(errorMessage(err));
    return { provider: undefined, routes: undefined, errors, kubeconfigReadable };
  }
  if (configText === undefined) return { provider: undefined, routes: undefined, errors, kubeconfigReadable };
  let provider: CloudProvider;
  try {
    provider = await factory(configText, nodes);
  } catch (err) {
    errors.push(`cloud provider could not be initialized: ${errorMessage(err)}`);
    return { provider: undefined, routes: undefined, errors, kubeconfigReadable };
  }
  const routes = provider.routes();
  if (routes === undefined && flags.routesEnabled) {
    errors.push('--configure-cloud-routes is set, but cloud provider does not support routes');
  }
  return { provider, routes, errors, kubeconfigReadable };
}

/** A NodeLister whose target is set once the node cache exists. */
export class LateNodeLister implements NodeLister {
  private target: NodeLister | undefined;
  bind(target: NodeLister): void {
    this.target = target;
  }
  get(name: string): ReturnType<NodeLister['get']> {
    return this.target?.get(name);
  }
  list(): ReturnType<NodeLister['list']> {
    return this.target?.list() ?? [];
  }
}
