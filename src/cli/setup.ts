// What `run` and `plan` share: flags, logger, provider, apiserver client and
// node cache, with every start-up problem reported at once (R60).
import { registerBuiltinProviders } from '../cloud/builtin.ts';
import { resolveCloudProvider } from '../cloud/registry.ts';
import { errorMessage } from '../core/errors.ts';
import type { NodeStatusWriter } from '../core/ports.ts';
import type { CloudProvider, Routes } from '../core/types.ts';
import { createKubeClient, DEFAULT_BURST, DEFAULT_QPS, type KubeClient } from '../kube/index.ts';
import { DaemonLogger } from '../log/logger.ts';
import { parseFlags, type DaemonFlags } from './flags.ts';
import { usage } from './help.ts';
import { printErrors, type CliIO } from './io.ts';
import { LateNodeLister, preflight } from './preflight.ts';
import { VERSION } from './version.ts';

/** Dry runs never patch node status (R53); reaching this is a bug. */
export const refuseWrites: NodeStatusWriter = {
  patchNodeCondition: () => Promise.reject(new Error('dry run: node status writes are disabled')),
};

export interface Setup {
  readonly flags: DaemonFlags;
  readonly logger: DaemonLogger;
  readonly provider: CloudProvider | undefined;
  readonly routes: Routes | undefined;
  /** undefined when routes are not configured (the daemon stays idle). */
  readonly kube: KubeClient | undefined;
  /** Bind the node cache here; the provider already holds it. */
  readonly lister: LateNodeLister;
}

/** Returns the setup, or the exit code when there is nothing to run (help, errors). */
export async function prepare(
  command: 'run' | 'plan',
  argv: readonly string[],
  io: CliIO,
): Promise<Setup | number> {
  const parsed = parseFlags(argv);
  if (parsed.help) {
    io.stdout(usage(command));
    return 0;
  }
  const { flags } = parsed;
  const errors = [...parsed.errors];
  const lister = new LateNodeLister();
  registerBuiltinProviders();
  const pre = await preflight(flags, lister, {
    readFile: io.readFile,
    resolveProvider: resolveCloudProvider,
  });
  errors.push(...pre.errors);
  let kube: KubeClient | undefined;
  if ((flags.routesEnabled || command === 'plan') && pre.kubeconfigReadable) {
    try {
      kube = createKubeClient({
        kubeconfig: flags.kubeconfig,
        master: flags.master,
        env: io.env,
        // Invalid values are already reported; the client still needs valid ones.
        qps: flags.kubeApiQps > 0 ? flags.kubeApiQps : DEFAULT_QPS,
        burst: flags.kubeApiBurst > 0 ? flags.kubeApiBurst : DEFAULT_BURST,
        userAgent: `cloud-route-controller/${VERSION}`,
      });
    } catch (err) {
      errors.push(errorMessage(err));
    }
  }
  if (errors.length > 0) {
    kube?.close();
    printErrors(io, errors);
    return 1;
  }
  const logger = DaemonLogger.create({
    format: flags.logFormat,
    verbosity: flags.verbosity,
    env: io.env,
    out: { write: io.stderr },
  });
  for (const w of parsed.warnings) logger.warn(w);
  if (flags.ignoredFlags.length > 0) {
    // R120: once, so a CCM's command line shows what it asked for that this daemon does not do.
    logger.info('Ignoring cloud-controller-manager flags that do not concern the route controller', {
      flags: flags.ignoredFlags,
    });
  }
  if (flags.allocateNodeCIDRs) {
    logger.info(
      '--allocate-node-cidrs=true: node CIDRs are not allocated here; the node IPAM controller of kube-controller-manager or the cloud-controller-manager keeps doing it',
    );
  }
  return { flags, logger, provider: pre.provider, routes: pre.routes, kube, lister };
}
