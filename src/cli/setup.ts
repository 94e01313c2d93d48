// What `run` and `plan` share: flags, logger, provider, apiserver client and
// node cache, with every start-up problem reported at once (R60).
import { registerBuiltinProviders } from '../cloud/builtin.ts';
import { resolveCloudProvider } from '../cloud/registry.ts';
import type { CloudProvider, Routes } from '../core/types.ts';
import { createKubeClient, type KubeClient } from '../kube/index.ts';
import { DaemonLogger } from '../log/logger.ts';
import { parseFlags, type DaemonFlags } from './flags.ts';
import { usage } from './help.ts';
import { printErrors, type CliIO } from './io.ts';
import { LateNodeLister, preflight } from './preflight.ts';
import { VERSION } from './version.ts';

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

function messageOf(err: unknown): string {
  return err instanceof Error ? err.message : String(err);
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
  const kubeconfigUnreadable = pre.errors.some((e) => e.startsWith('invalid --kubeconfig'));
  if ((flags.configureCloudRoutes || command === 'plan') && !kubeconfigUnreadable) {
    try {
      kube = createKubeClient({
        kubeconfig: flags.kubeconfig,
        master: flags.master,
        env: io.env,
        qps: flags.kubeApiQps > 0 ? flags.kubeApiQps : 20,
        burst: flags.kubeApiBurst > 0 ? flags.kubeApiBurst : 30,
        userAgent: `cloud-route-controller/${VERSION}`,
      });
    } catch (err) {
      errors.push(messageOf(err));
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
  return { flags, logger, provider: pre.provider, routes: pre.routes, kube, lister };
}
