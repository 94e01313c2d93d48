// What the daemon integration tests (<cloud>-daemon, openstack-room) share: the real executable
// run with a bad cloud config and refused, and the real executable started on a real
// kube-apiserver as the user of deploy/base/rbac.yaml, in periodic or watch mode, with the
// helpers each test of a mode uses (skip without the control plane, wait for a node's
// condition, print the daemon's log on failure, stop it and require a clean exit).
import assert from 'node:assert/strict';
import * as fs from 'node:fs';
import * as path from 'node:path';
import type { TestContext } from 'node:test';
import { Daemon, runToExit } from '../e2e/support.ts';
import { Admin, setupControllerUser, waitFor } from '../integration/kube-helpers.ts';
import { requireTestenv, startControlPlane, type ControlPlane } from './controlplane.ts';

export const WATCH_GATE = '--feature-gates=CloudControllerManagerWatchBasedRoutesReconciliation=true';

/** A control plane, its admin, and the kubeconfig of the controller user bound to rbac.yaml. */
export interface ClusterWithUser {
  readonly cp: ControlPlane;
  readonly admin: Admin;
  readonly kubeconfig: string;
}

export async function startClusterWithUser(): Promise<ClusterWithUser> {
  const cp = await startControlPlane();
  return { cp, admin: new Admin(cp.adminKubeconfig), kubeconfig: await setupControllerUser(cp) };
}

/** A kubeconfig whose apiserver nobody serves: for runs that must stop before they contact it. */
export function unreachableKubeconfig(dir: string): string {
  const file = path.join(dir, 'unreachable.kubeconfig');
  fs.writeFileSync(
    file,
    JSON.stringify({
      apiVersion: 'v1',
      kind: 'Config',
      clusters: [{ name: 'c', cluster: { server: 'https://127.0.0.1:1' } }],
      users: [{ name: 'u', user: { token: 'never-used' } }],
      contexts: [{ name: 'x', context: { cluster: 'c', user: 'u' } }],
      'current-context': 'x',
    }),
  );
  return file;
}

/** [file name, cloud config text, the one error line expected]. */
export type BadConfig = readonly [string, string, RegExp];

/**
 * `run --cloud-provider=<provider>` with each bad cloud config (written into `dir`): exit 1 and
 * exactly one line on stderr, matching the case's; `check` asserts more of that stderr.
 */
export async function assertConfigsRefused(
  provider: string,
  dir: string,
  cases: readonly BadConfig[],
  check: (stderr: string) => void,
): Promise<void> {
  const kubeconfig = unreachableKubeconfig(dir);
  for (const [file, text, message] of cases) {
    const config = path.join(dir, file);
    fs.writeFileSync(config, text);
    const r = await runToExit([
      'run',
      `--cloud-provider=${provider}`,
      `--cloud-config=${config}`,
      `--kubeconfig=${kubeconfig}`,
      '--cluster-cidr=10.244.0.0/16',
    ]);
    assert.equal(r.code, 1, r.stderr);
    const lines = r.stderr.split('\n').filter((l) => l !== '');
    assert.equal(lines.length, 1, r.stderr);
    assert.match(lines[0]!, message);
    check(r.stderr);
  }
}

/** `run` as the daemon tests start it: dual stack, no leader election, ports chosen by the OS. */
export function daemonArgs(o: {
  provider: string;
  config: string;
  kubeconfig: string;
  watch: boolean;
  extra?: readonly string[];
}): string[] {
  return [
    'run',
    `--cloud-provider=${o.provider}`,
    `--cloud-config=${o.config}`,
    `--kubeconfig=${o.kubeconfig}`,
    '--cluster-cidr=10.244.0.0/16,fd00:10:244::/56',
    '--leader-elect=false',
    '--metrics-bind-address=127.0.0.1:0',
    '--health-probe-bind-address=127.0.0.1:0',
    '--log-format=json',
    ...(o.extra ?? []),
    ...(o.watch ? [WATCH_GATE] : ['--route-reconciliation-period=2s']),
  ];
}

/** One mode's daemon and the helpers its tests share; `cluster()` is undefined without binaries. */
export class DaemonRun {
  daemon: Daemon | undefined;
  private readonly cluster: () => ClusterWithUser | undefined;

  constructor(cluster: () => ClusterWithUser | undefined) {
    this.cluster = cluster;
  }

  start(args: readonly string[], logFile: string): Daemon {
    this.daemon = Daemon.start(args, logFile);
    return this.daemon;
  }

  /** SIGTERM; the daemon must exit 0 within 30 s. */
  async stop(): Promise<void> {
    const daemon = this.daemon;
    daemon?.signal('SIGTERM');
    if (daemon) assert.equal((await daemon.waitExit(30_000)).code, 0, daemon.tail());
  }

  /**
   * Runs one test's body on the control plane (skips, or fails with CI=true, without one); a
   * failure keeps the control plane's directory and prints the daemon's last lines.
   */
  async step(t: TestContext, body: (c: ClusterWithUser) => Promise<void>): Promise<void> {
    const c = this.cluster();
    if (c === undefined) {
      requireTestenv(t);
      return;
    }
    try {
      await body(c);
    } catch (err) {
      c.cp.markFailed(String(err));
      if (this.daemon) console.log(this.daemon.tail(60));
      throw err;
    }
  }
}

/** Waits until the node's NetworkUnavailable condition has this status and reason. */
export function networkCondition(
  admin: Admin,
  node: string,
  status = 'False',
  reason = 'RouteCreated',
  timeoutMs = 30_000,
): Promise<void> {
  return waitFor(`${node} NetworkUnavailable=${status}/${reason}`, timeoutMs, async () => {
    const c = await admin.condition(node);
    return c?.status === status && c.reason === reason;
  });
}

/** Waits up to 60 s, polling every 200 ms, until the cloud's route list satisfies `cond`. */
export function untilRoutes(
  what: string,
  list: () => Promise<string[]>,
  cond: (routes: string[]) => boolean,
): Promise<void> {
  return waitFor(what, 60_000, async () => cond(await list()), 200);
}

/** Deletes the node, waits until `gone` left the cloud's route list, which is then exactly `left`. */
export async function deleteNodeRoute(
  admin: Admin,
  node: string,
  list: () => Promise<string[]>,
  gone: string,
  left: readonly string[],
): Promise<void> {
  await admin.deleteNode(node);
  await untilRoutes(`${node} route gone`, list, (r) => !r.includes(gone));
  assert.deepEqual(await list(), left);
}
