// Helpers the fault, bad-input and soak suites add to test/integration's and
// test/e2e's: an in-memory cloud that logs settled calls in the call-log
// format, an Admin that records when each node held which pod CIDR, and the
// end-state check against the real apiserver.
import { AbortError } from '../../src/core/errors.ts';
import type { NodeAddress } from '../../src/core/types.ts';
import type { CallOptions, Route } from '../../src/core/types.ts';
import { MemoryRoutes, type MemoryRoutesOptions } from '../../src/cloud/memory/memory-routes.ts';
import { after, before } from 'node:test';
import {
  apiRequest,
  startControlPlane,
  testenvBinaries,
  type ControlPlane,
} from '../support/controlplane.ts';
import { Admin, setupControllerUser, waitFor, type KubeNode } from '../integration/kube-helpers.ts';
import { calls as fileCalls, routes as fileRoutes, type CloudFiles } from '../e2e/support.ts';
import {
  CallLogChecker,
  checkEndState,
  NodeHistory,
  type CheckOptions,
  type CloudCall,
  type EndStateOptions,
  type NodeView,
  type RouteEntry,
} from './invariants.ts';
import { testRandom } from '../support/seed.ts';

/**
 * MemoryRoutes whose every call, once settled, lands in `log` as the daemon's
 * call log would write it. (MemoryRoutes.calls holds calls still in flight with
 * a provisional outcome, which an incremental checker must not read.)
 */
/**
 * A `random` for MemoryRoutes.failFraction(1 / n) that fails exactly every
 * n-th call: "some faults happened" then holds by construction, whatever the
 * timing of the real apiserver makes the call count.
 */
export function everyNth(n: number): () => number {
  let i = 0;
  return () => (++i % n === 0 ? 0 : 0.999);
}

export class AuditedMemoryRoutes extends MemoryRoutes {
  log: CloudCall[] = [];
  /** A cloud's own refusals (e.g. no IPv6): an Error to throw for this call, or undefined. */
  reject: ((op: CloudCall['op'], route: Readonly<Route> | undefined) => Error | undefined) | undefined;
  private hangs: { ops: Set<string>; remaining: number }[] = [];

  constructor(opts: MemoryRoutesOptions = {}) {
    super({ random: testRandom('cloud'), ...opts });
  }

  /**
   * The next `n` calls of `ops` hang until their signal aborts. Replaces
   * MemoryRoutes.hangNext, which sleeps MAX_SAFE_INTEGER/4 ms: on a real clock
   * Node clamps that to 1 ms (TimeoutOverflowWarning), so nothing hangs.
   */
  override hangNext(
    n: number,
    ops: readonly ('list' | 'create' | 'delete')[] = ['list', 'create', 'delete'],
  ): void {
    this.hangs.push({ ops: new Set(ops), remaining: n });
  }

  override clearFaults(): void {
    super.clearFaults();
    this.hangs = [];
  }

  private async maybeHang(op: string, signal: AbortSignal): Promise<void> {
    const h = this.hangs.find((x) => x.ops.has(op) && x.remaining > 0);
    if (!h) return;
    h.remaining--;
    await new Promise<never>((_resolve, reject) => {
      const abort = (): void => reject(new AbortError('The operation was aborted', { cause: signal.reason }));
      if (signal.aborted) abort();
      else signal.addEventListener('abort', abort, { once: true });
    });
  }

  /** Hands over the calls settled so far and forgets them (bounded memory in the soak). */
  drain(): CloudCall[] {
    const out = this.log;
    this.log = [];
    this.calls.length = 0;
    return out;
  }

  private async audit<T>(
    op: CloudCall['op'],
    detail: Pick<CloudCall, 'destinationCIDR' | 'targetNode' | 'nameHint'>,
    signal: AbortSignal,
    fn: () => Promise<T>,
    route?: Readonly<Route>,
  ): Promise<T> {
    const start = Date.now();
    let outcome = 'ok';
    let retryAfterMs: number | undefined;
    try {
      await this.maybeHang(op, signal);
      const refusal = this.reject?.(op, route);
      if (refusal) throw refusal;
      return await fn();
    } catch (err) {
      outcome = (err as Error).name;
      retryAfterMs = (err as { retryAfterMs?: number }).retryAfterMs;
      throw err;
    } finally {
      const end = Date.now();
      this.log.push({
        op,
        pid: process.pid,
        start,
        end,
        outcome,
        ...detail,
        ...(retryAfterMs ? { retryAfterMs } : {}),
      });
    }
  }

  override listRoutes(clusterName: string, opts: CallOptions): Promise<Route[]> {
    return this.audit('list', {}, opts.signal, () => super.listRoutes(clusterName, opts));
  }

  override createRoute(clusterName: string, nameHint: string, route: Readonly<Route>, opts: CallOptions) {
    const d = { destinationCIDR: route.destinationCIDR, targetNode: route.targetNode, nameHint };
    return this.audit(
      'create',
      d,
      opts.signal,
      () => super.createRoute(clusterName, nameHint, route, opts),
      route,
    );
  }

  override deleteRoute(clusterName: string, route: Readonly<Route>, opts: CallOptions) {
    const d = { destinationCIDR: route.destinationCIDR, targetNode: route.targetNode };
    return this.audit('delete', d, opts.signal, () => super.deleteRoute(clusterName, route, opts), route);
  }

  entries(): RouteEntry[] {
    return this.snapshot().map((r) => ({
      destinationCIDR: r.destinationCIDR,
      targetNode: r.targetNode,
      targetNodeAddresses: r.targetNodeAddresses,
    }));
  }
}

/** Admin whose node creates and deletes are recorded in a NodeHistory. */
export class TrackedAdmin extends Admin {
  readonly history = new NodeHistory();

  override async createNode(
    name: string,
    podCIDRs: string[],
    addresses: NodeAddress[] = [],
  ): Promise<KubeNode> {
    const n = await super.createNode(name, podCIDRs, addresses);
    this.history.created(name, podCIDRs);
    return n;
  }

  override async deleteNode(name: string): Promise<void> {
    this.history.deleted(name);
    await super.deleteNode(name);
  }

  async nodes(): Promise<NodeView[]> {
    const r = await apiRequest(this.kubeconfig, 'GET', '/api/v1/nodes');
    if (r.status !== 200) throw new Error(`list nodes: ${r.status} ${r.body}`);
    return (JSON.parse(r.body) as { items: NodeView[] }).items;
  }

  /** Node Events of one reason, as `<node>: <message>`. */
  async eventsFor(reason: string): Promise<string[]> {
    const items = await this.events(`reason=${reason}`);
    return items.map((e) => {
      const o = e as { involvedObject?: { name?: string }; message?: string };
      return `${o.involvedObject?.name ?? '?'}: ${o.message ?? ''}`;
    });
  }

  /**
   * The Events with this reason once `ok` holds for them. The recorder posts
   * Events after the reconcile that caused them, so a condition already being
   * set says nothing about its Event having arrived; read them only by waiting.
   */
  async eventsUntil(
    reason: string,
    ok: (events: string[]) => boolean,
    timeoutMs = 15_000,
  ): Promise<string[]> {
    let last: string[] = [];
    try {
      await waitFor(`${reason} Events`, timeoutMs, async () => ok((last = await this.eventsFor(reason))));
    } catch (err) {
      throw new Error(`${(err as Error).message}; Events seen:\n${last.join('\n')}`, { cause: err });
    }
    return last;
  }
}

/** The routes a daemon's shared state file holds. */
export interface SuiteEnv {
  readonly cp: ControlPlane;
  readonly admin: TrackedAdmin;
  /** The controller's kubeconfig: a user bound only to deploy/base/rbac.yaml. */
  readonly kubeconfig: string;
}

/**
 * One control plane per describe block: registers its before/after hooks and
 * hands the environment to `set` once it is up (never when the test binaries
 * are missing; the tests then skip through requireTestenv).
 */
export function suiteControlPlane(set: (env: SuiteEnv) => void): void {
  let cp: ControlPlane | undefined;
  before(async () => {
    if (testenvBinaries() === undefined) return;
    cp = await startControlPlane();
    set({ cp, admin: new TrackedAdmin(cp.adminKubeconfig), kubeconfig: await setupControllerUser(cp) });
  });
  after(async () => {
    await cp?.stop();
  });
}

export function fileEntries(cloud: CloudFiles): RouteEntry[] {
  return fileRoutes(cloud).map((s) => {
    const i = s.lastIndexOf('->');
    return { destinationCIDR: s.slice(0, i), targetNode: s.slice(i + 2) };
  });
}

/** The daemon's call log in the checker's shape. */
export function fileCallLog(cloud: CloudFiles): CloudCall[] {
  return fileCalls(cloud).map((c) => ({ ...c }));
}

/** Waits until the end state holds; throws with the remaining differences. */
export async function waitConverged(
  what: string,
  timeoutMs: number,
  admin: TrackedAdmin,
  routes: () => RouteEntry[],
  o: EndStateOptions,
): Promise<void> {
  let last: string[] = [];
  try {
    await waitFor(
      what,
      timeoutMs,
      async () => {
        last = checkEndState(routes(), await admin.nodes(), o);
        return last.length === 0;
      },
      250,
    );
  } catch (err) {
    throw new Error(`${(err as Error).message}\n  ${last.slice(0, 20).join('\n  ')}`);
  }
}

/** Runs the whole call log through a fresh checker; throws listing every violation. */
export function assertCallLog(log: readonly CloudCall[], o: CheckOptions): CallLogChecker {
  const c = new CallLogChecker(o);
  c.feed(log);
  const v = c.finish();
  if (v.length > 0)
    throw new Error(`call-log invariants violated (${v.length}):\n  ${v.slice(0, 20).join('\n  ')}`);
  return c;
}

export { type CloudCall, type RouteEntry };
