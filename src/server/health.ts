// Probe semantics (R64). /readyz: the node cache has synced and the daemon is
// not shutting down (standbys are ready, so rollouts progress). /healthz and
// /livez: not shutting down, and a running reconcile is not stuck.
import type { RouteControllerStatus } from '../controller/route-controller.ts';

export interface CheckResult {
  readonly name: string;
  readonly ok: boolean;
  readonly reason?: string;
}

export interface HealthSources {
  readonly now: () => number;
  readonly shuttingDown: () => boolean;
  /** undefined while no controller runs (idle with --configure-cloud-routes=false). */
  readonly controller: () => RouteControllerStatus | undefined;
  /** A reconcile with no provider call or condition write settled for this long is stuck. */
  readonly stallAfterMs: number;
}

export class Health {
  private readonly src: HealthSources;

  constructor(src: HealthSources) {
    this.src = src;
  }

  private shutdown(): CheckResult {
    return this.src.shuttingDown()
      ? { name: 'shutdown', ok: false, reason: 'shutting down' }
      : { name: 'shutdown', ok: true };
  }

  readyz(): CheckResult[] {
    const st = this.src.controller();
    const synced: CheckResult =
      st === undefined || st.synced
        ? { name: 'informer-sync', ok: true }
        : { name: 'informer-sync', ok: false, reason: 'node cache not synced' };
    return [{ name: 'ping', ok: true }, synced, this.shutdown()];
  }

  livez(): CheckResult[] {
    const st = this.src.controller();
    let progress: CheckResult = { name: 'reconcile-progress', ok: true };
    if (st?.reconcileStartedAt !== undefined) {
      const since = Math.max(st.lastProgressAt, st.reconcileStartedAt);
      const idle = this.src.now() - since;
      if (idle > this.src.stallAfterMs) {
        progress = {
          name: 'reconcile-progress',
          ok: false,
          reason: `running reconcile made no progress for ${Math.round(idle / 1000)}s`,
        };
      }
    }
    return [{ name: 'ping', ok: true }, progress, this.shutdown()];
  }
}

/** Kubernetes-style probe body: `ok`, or `[-]name failed: reason` lines (all lines with `verbose`). */
export function probeBody(
  path: string,
  checks: readonly CheckResult[],
  verbose: boolean,
): { status: number; body: string } {
  const ok = checks.every((c) => c.ok);
  if (ok && !verbose) return { status: 200, body: 'ok' };
  const lines = checks
    .filter((c) => verbose || !c.ok)
    .map((c) => (c.ok ? `[+]${c.name} ok` : `[-]${c.name} failed: ${c.reason ?? 'failed'}`));
  lines.push(ok ? `${path} check passed` : `${path} check failed`);
  return { status: ok ? 200 : 500, body: `${lines.join('\n')}\n` };
}
