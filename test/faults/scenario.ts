// One fault scenario with the in-process controller: start it on a fresh
// in-memory cloud, run the fault, then require the exact end state and a clean
// full call log, and clean up the scenario's nodes.
import type { TestContext } from 'node:test';
import { requireTestenv, type ControlPlane } from '../support/controlplane.ts';
import { CLUSTER_CIDRS, internalIP, waitFor } from '../integration/kube-helpers.ts';
import { startFaultController, type FaultController, type FaultControllerOptions } from './controller.ts';
import type { CheckOptions, RouteEntry } from './invariants.ts';
import {
  assertCallLog,
  AuditedMemoryRoutes,
  suiteControlPlane,
  type SuiteEnv,
  type TrackedAdmin,
  waitConverged,
} from './support.ts';

export interface ScenarioOptions {
  readonly t: TestContext;
  readonly cp: ControlPlane;
  readonly admin: TrackedAdmin;
  readonly cloud: AuditedMemoryRoutes;
  readonly start: (cloud: AuditedMemoryRoutes) => FaultController;
  /** Seeded routes that must survive (foreign, unparsable). */
  readonly keep?: readonly RouteEntry[];
  /** Seeded routes the controller is expected to delete. */
  readonly seed?: readonly RouteEntry[];
  /** Routes expected at the end that were not seeded (e.g. E3's, which outlive their node). */
  readonly survivors?: () => readonly RouteEntry[];
  /** Canonical pod CIDRs expected to stay without a route. */
  readonly unrouted?: ReadonlySet<string>;
  readonly convergeMs?: number;
  /** The controller's cluster CIDRs, if not the default dual-stack pair. */
  readonly clusterCIDRs?: readonly string[];
  readonly check?: Partial<CheckOptions>;
}

export async function faultScenario(
  o: ScenarioOptions,
  body: (rc: FaultController, cloud: AuditedMemoryRoutes) => Promise<void>,
): Promise<void> {
  const { cloud, admin } = o;
  const seeded = [...(o.keep ?? []), ...(o.seed ?? [])];
  for (const r of seeded) cloud.putRoute({ ...r, name: `seed-${r.destinationCIDR}` });
  const rc = o.start(cloud);
  try {
    await body(rc, cloud);
    cloud.clearFaults();
    cloud.quota = undefined;
    await waitConverged('converged', o.convergeMs ?? 30_000, admin, () => cloud.entries(), {
      clusterCIDRs: o.clusterCIDRs ?? CLUSTER_CIDRS,
      keep: [...(o.keep ?? []), ...(o.survivors?.() ?? [])],
      ...(o.unrouted ? { unrouted: o.unrouted } : {}),
    });
    const c = assertCallLog(cloud.log, {
      clusterCIDRs: o.clusterCIDRs ?? CLUSTER_CIDRS,
      history: admin.history,
      initialRoutes: seeded,
      ...o.check,
    });
    o.t.diagnostic(`calls ${JSON.stringify(c.counts)}`);
  } catch (err) {
    o.cp.markFailed(String(err));
    console.log(rc.logger.tail(40));
    throw err;
  } finally {
    await rc.stop();
    for (const n of await admin.nodes()) await admin.deleteNode(n.metadata.name);
  }
}

export interface InProcessOptions extends Partial<
  Pick<ScenarioOptions, 'seed' | 'keep' | 'survivors' | 'unrouted' | 'clusterCIDRs'>
> {
  readonly watch: boolean;
  /** Default: a fresh AuditedMemoryRoutes. */
  readonly cloud?: AuditedMemoryRoutes;
  readonly controller?: FaultControllerOptions['controller'];
  /** Another user's kubeconfig (default: the suite's controller user). */
  readonly kubeconfig?: string;
}

/** faultScenario with the in-process controller on the suite's control plane; skips without one. */
export async function inProcessScenario(
  t: TestContext,
  env: SuiteEnv | undefined,
  o: InProcessOptions,
  body: (rc: FaultController, cloud: AuditedMemoryRoutes) => Promise<void>,
): Promise<void> {
  if (env === undefined) return void requireTestenv(t);
  const { watch, controller, kubeconfig, cloud, ...expect } = o;
  await faultScenario(
    {
      t,
      cp: env.cp,
      admin: env.admin,
      cloud: cloud ?? new AuditedMemoryRoutes(),
      ...expect,
      start: (c) =>
        startFaultController({
          kubeconfig: kubeconfig ?? env.kubeconfig,
          watch,
          cloud: c,
          ...(o.clusterCIDRs ? { clusterCIDRs: o.clusterCIDRs } : {}),
          controller,
        }),
    },
    body,
  );
}

export type ScenarioBody = (rc: FaultController, cloud: AuditedMemoryRoutes) => Promise<void>;

/** A fault suite on its own control plane: its scenarios share `defaults`; see inProcessSuite. */
export interface InProcessSuite {
  /** The suite's environment once before() ran; undefined without the test binaries. */
  readonly env: () => SuiteEnv | undefined;
  readonly scenario: (t: TestContext, o: Partial<InProcessOptions>, body: ScenarioBody) => Promise<void>;
  /** A node with nothing wrong, which must get its route whatever happens to the others. */
  readonly bystander: (name: string, cidr: string, cloud: AuditedMemoryRoutes) => Promise<void>;
}

/**
 * Starts the suite's control plane (suiteControlPlane, which hands the environment to `set`)
 * and returns its in-process scenario with `defaults` under each test's options; bystanders
 * get `bystanderIP` as their InternalIP.
 */
export function inProcessSuite(
  defaults: Partial<InProcessOptions>,
  bystanderIP: string,
  set: (env: SuiteEnv) => void,
): InProcessSuite {
  let env: SuiteEnv | undefined;
  suiteControlPlane((e) => {
    env = e;
    set(e);
  });
  return {
    env: () => env,
    scenario: (t, o, body) => inProcessScenario(t, env, { watch: false, ...defaults, ...o }, body),
    async bystander(name, cidr, cloud) {
      await env!.admin.createNode(name, [cidr], internalIP(bystanderIP));
      await waitFor(`${name} routed`, 15_000, () => cloud.snapshot().some((r) => r.targetNode === name));
    },
  };
}
