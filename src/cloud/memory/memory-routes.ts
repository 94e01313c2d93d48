// The in-memory cloud: the reference provider for tests, the simulator and
// trials of the daemon (`--cloud-provider memory`). Real semantics (R1–R6),
// plus latency, a token-bucket API limit, a route quota, fault injection and a
// log of every call.
import { canonicalCIDR } from '../../core/cidr.ts';
import { sleep, type Clock, RealClock } from '../../core/clock.ts';
import {
  AbortError,
  QuotaExceededError,
  RetryableError,
  ThrottledError,
  throwIfAborted,
} from '../../core/errors.ts';
import type { CallOptions, NodeAddress, Route, Routes, RouteTableRoom } from '../../core/types.ts';
import { seededRandom } from '../../core/random.ts';
import { TokenBucket } from './token-bucket.ts';

export type MemoryOperation = 'list' | 'create' | 'delete';

export interface CallRecord {
  readonly op: MemoryOperation;
  readonly start: number;
  end: number;
  readonly clusterName: string;
  readonly destinationCIDR?: string;
  readonly targetNode?: string;
  readonly nameHint?: string;
  outcome: 'ok' | 'error' | 'aborted';
  error?: string;
}

export interface StoredRoute {
  name: string;
  clusterName: string | undefined;
  targetNode: string;
  targetNodeAddresses: readonly NodeAddress[];
  destinationCIDR: string;
  blackhole: boolean;
}

export interface MemoryRoutesOptions {
  readonly clock?: Clock;
  /** Per-call latency in ms (number or per operation). */
  readonly latencyMs?: number | Partial<Record<MemoryOperation, number>>;
  /** API rate limit over all calls. */
  readonly rateLimit?: { ratePerSec: number; burst: number };
  /** API rate limit over create/delete only. */
  readonly writeRateLimit?: { ratePerSec: number; burst: number };
  /** Maximum number of routes in the table (E10); also its room's limit (R115). */
  readonly quota?: number;
  /** Whether listRoutes reports target addresses (enableNodeAddresses). */
  readonly reportNodeAddresses?: boolean;
  /**
   * Draws for failFraction. The default is a fixed-seed sequence, not
   * Math.random, so a fault run without an explicit source still replays.
   */
  readonly random?: () => number;
}

type ErrorFactory = (op: MemoryOperation) => Error;

interface Fault {
  ops: ReadonlySet<MemoryOperation>;
  remaining: number; // Infinity for a fraction fault
  fraction: number;
  make: ErrorFactory | 'hang';
}

const ALL: ReadonlySet<MemoryOperation> = new Set(['list', 'create', 'delete']);

export class MemoryRoutes implements Routes {
  readonly calls: CallRecord[] = [];
  private readonly table = new Map<string, StoredRoute>();
  private readonly clock: Clock;
  private readonly opts: MemoryRoutesOptions;
  private readonly random: () => number;
  private readonly bucket: TokenBucket | undefined;
  private readonly writeBucket: TokenBucket | undefined;
  private faults: Fault[] = [];
  private inFlight = 0;
  quota: number | undefined;
  /** Highest number of calls in flight at once. */
  maxInFlight = 0;

  constructor(opts: MemoryRoutesOptions = {}) {
    this.opts = opts;
    this.clock = opts.clock ?? new RealClock();
    this.random = opts.random ?? seededRandom(1);
    this.quota = opts.quota;
    this.bucket =
      opts.rateLimit && new TokenBucket(this.clock, opts.rateLimit.ratePerSec, opts.rateLimit.burst);
    this.writeBucket =
      opts.writeRateLimit &&
      new TokenBucket(this.clock, opts.writeRateLimit.ratePerSec, opts.writeRateLimit.burst);
  }

  // ---- fault injection -------------------------------------------------

  /** The next `n` calls of `ops` fail with `make(op)` (default RetryableError). */
  failNext(n: number, ops: readonly MemoryOperation[] = [...ALL], make?: ErrorFactory): void {
    this.faults.push({ ops: new Set(ops), remaining: n, fraction: 1, make: make ?? defaultError });
  }

  /** Each call of `ops` fails with probability `fraction` until cleared. */
  failFraction(fraction: number, ops: readonly MemoryOperation[] = [...ALL], make?: ErrorFactory): void {
    this.faults.push({ ops: new Set(ops), remaining: Infinity, fraction, make: make ?? defaultError });
  }

  /** The next `n` calls of `ops` hang until their signal aborts. */
  hangNext(n: number, ops: readonly MemoryOperation[] = [...ALL]): void {
    this.faults.push({ ops: new Set(ops), remaining: n, fraction: 1, make: 'hang' });
  }

  clearFaults(): void {
    this.faults = [];
  }

  // ---- out-of-band changes (someone else edits the cloud) --------------

  /** Adds a route as another actor would (no clusterName: foreign unless given). */
  putRoute(route: Partial<StoredRoute> & { destinationCIDR: string }): void {
    const key = canonicalCIDR(route.destinationCIDR) ?? route.destinationCIDR;
    this.table.set(key, {
      name: route.name ?? `manual-${key}`,
      clusterName: route.clusterName,
      targetNode: route.targetNode ?? '',
      targetNodeAddresses: route.targetNodeAddresses ?? [],
      destinationCIDR: route.destinationCIDR,
      blackhole: route.blackhole ?? false,
    });
  }

  removeRoute(destinationCIDR: string): boolean {
    return this.table.delete(canonicalCIDR(destinationCIDR) ?? destinationCIDR);
  }

  /** Marks the routes to `node` as blackholes, as a cloud does when the instance is gone. */
  blackholeTarget(node: string): void {
    for (const r of this.table.values()) if (r.targetNode === node) r.blackhole = true;
  }

  snapshot(): StoredRoute[] {
    return [...this.table.values()].map((r) => ({ ...r }));
  }

  count(op?: MemoryOperation): number {
    return op ? this.calls.filter((c) => c.op === op).length : this.calls.length;
  }

  // ---- Routes -----------------------------------------------------------

  async listRoutes(clusterName: string, opts: CallOptions): Promise<Route[]> {
    await this.enter('list', clusterName, opts, {});
    return [...this.table.values()]
      .filter((r) => r.clusterName === undefined || r.clusterName === clusterName)
      .map((r) => this.listed(r));
  }

  /**
   * R115: the table's room, every cluster's routes counted, when a quota is set. No call of its
   * own is recorded: like a real provider it answers from what it holds.
   */
  routeTableRoom(_clusterName: string, opts: CallOptions): Promise<RouteTableRoom | undefined> {
    throwIfAborted(opts.signal);
    if (this.quota === undefined) return Promise.resolve(undefined);
    return Promise.resolve({
      container: 'the memory route table',
      limit: this.quota,
      used: this.table.size,
      raise: 'raise "quota" in the memory cloud config',
    });
  }

  /** A stored route as listRoutes reports it. */
  private listed(r: StoredRoute): Route {
    const report = this.opts.reportNodeAddresses ?? false;
    return {
      name: r.name,
      targetNode: r.targetNode,
      targetNodeAddresses: report ? [...r.targetNodeAddresses] : [],
      enableNodeAddresses: report,
      destinationCIDR: r.destinationCIDR,
      blackhole: r.blackhole,
    };
  }

  async createRoute(
    clusterName: string,
    nameHint: string,
    route: Readonly<Route>,
    opts: CallOptions,
  ): Promise<Route> {
    const rec = await this.enter('create', clusterName, opts, {
      destinationCIDR: route.destinationCIDR,
      targetNode: route.targetNode,
      nameHint,
    });
    const key = canonicalCIDR(route.destinationCIDR);
    if (key === undefined)
      throw failed(rec, new RetryableError(`invalid destination ${route.destinationCIDR}`));
    const existing = this.table.get(key);
    if (existing && existing.targetNode === route.targetNode && !existing.blackhole)
      return this.listed(existing); // R2
    if (!existing && this.quota !== undefined && this.table.size >= this.quota) {
      throw failed(rec, new QuotaExceededError(`route limit of ${this.quota} reached`));
    }
    const stored: StoredRoute = {
      // Unique per (node, CIDR): the hint alone collides under dual-stack (R2).
      name: `${clusterName}-${nameHint}-${key}`,
      clusterName,
      targetNode: route.targetNode,
      targetNodeAddresses: [...route.targetNodeAddresses],
      destinationCIDR: route.destinationCIDR,
      blackhole: false,
    };
    this.table.set(key, stored);
    // R66: the route as listRoutes will report it, so the route cache holds the listed copy.
    return this.listed(stored);
  }

  async deleteRoute(clusterName: string, route: Readonly<Route>, opts: CallOptions): Promise<void> {
    await this.enter('delete', clusterName, opts, {
      destinationCIDR: route.destinationCIDR,
      targetNode: route.targetNode,
    });
    const key = canonicalCIDR(route.destinationCIDR) ?? route.destinationCIDR;
    const existing = this.table.get(key);
    // R3: deleting a missing route succeeds; a route replaced meanwhile is not ours to delete.
    if (existing && existing.name === route.name) this.table.delete(key);
  }

  private async enter(
    op: MemoryOperation,
    clusterName: string,
    opts: CallOptions,
    detail: Pick<CallRecord, 'destinationCIDR' | 'targetNode' | 'nameHint'>,
  ): Promise<CallRecord> {
    const rec: CallRecord = {
      op,
      start: this.clock.now(),
      end: this.clock.now(),
      clusterName,
      ...detail,
      outcome: 'ok',
    };
    this.calls.push(rec);
    this.inFlight++;
    this.maxInFlight = Math.max(this.maxInFlight, this.inFlight);
    try {
      throwIfAborted(opts.signal);
      const fault = this.takeFault(op);
      const latency =
        typeof this.opts.latencyMs === 'number' ? this.opts.latencyMs : (this.opts.latencyMs?.[op] ?? 0);
      if (fault === 'hang') await untilAborted(opts.signal);
      else if (latency > 0) await sleep(this.clock, latency, opts.signal);
      throwIfAborted(opts.signal);
      if (fault) throw fault;
      for (const b of op === 'list' ? [this.bucket] : [this.bucket, this.writeBucket]) {
        const t = b?.take();
        if (t && !t.ok) throw new ThrottledError('Request limit exceeded', { retryAfterMs: t.retryAfterMs });
      }
    } catch (err) {
      const aborted = (err as Error).name === 'AbortError';
      rec.outcome = aborted ? 'aborted' : 'error';
      rec.error = (err as Error).message;
      rec.end = this.clock.now();
      throw aborted ? new AbortError() : err;
    } finally {
      this.inFlight--;
    }
    rec.end = this.clock.now();
    return rec;
  }

  private takeFault(op: MemoryOperation): Error | 'hang' | undefined {
    for (const f of this.faults) {
      if (!f.ops.has(op) || f.remaining <= 0) continue;
      if (f.fraction < 1 && this.random() >= f.fraction) continue;
      f.remaining--;
      return f.make === 'hang' ? 'hang' : f.make(op);
    }
    return undefined;
  }
}

/** A hung call: settles only when its signal aborts (a timer would be clamped on a real clock). */
function untilAborted(signal: AbortSignal): Promise<never> {
  return new Promise((_, reject) => {
    const fail = (): void => reject(new AbortError());
    if (signal.aborted) fail();
    else signal.addEventListener('abort', fail, { once: true });
  });
}

/** Marks a call that passed the API layer but failed its own checks. */
function failed(rec: CallRecord, err: Error): Error {
  rec.outcome = 'error';
  rec.error = err.message;
  return err;
}

function defaultError(op: MemoryOperation): Error {
  return new RetryableError(`injected ${op} failure (HTTP 503)`);
}
