// client-go's LeaderElector over a LeaseLock (R61, R62): acquire with a
// jittered retry, take over only a record unchanged for a lease duration
// (measured on the local clock from when this replica observed it), renew
// every retry period within a renew deadline, release on graceful shutdown.
import { randomUUID } from 'node:crypto';
import { hostname } from 'node:os';
import { sleep, type Clock } from '../core/clock.ts';
import { errorMessage } from '../core/errors.ts';
import { nopLogger, statusCodeOf, type Logger } from '../core/ports.ts';
import { microTime, rawRecord, type LeaderElectionRecord, type LeaseLock } from './lease-lock.ts';

/** wait.JitterUntil's factor in client-go's acquire loop. */
export const JITTER_FACTOR = 1.2;

export interface LeaderElectorOptions {
  readonly lock: LeaseLock;
  readonly leaseDurationMs: number;
  readonly renewDeadlineMs: number;
  readonly retryPeriodMs: number;
  readonly clock: Clock;
  readonly random?: () => number;
  readonly logger?: Logger;
  /** leader_election_master_status. */
  readonly onLeaderStatus?: (leading: boolean) => void;
}

export type RenewResult = 'stopped' | 'lost';

const NEVER = new AbortController().signal;

/** client-go's identity: `<hostname>_<uuid>`. */
export function defaultIdentity(): string {
  return `${hostname()}_${randomUUID()}`;
}

export class LeaderElector {
  private readonly o: LeaderElectorOptions;
  private readonly logger: Logger;
  private readonly random: () => number;
  private observed: LeaderElectionRecord | undefined;
  private observedRaw: string | undefined;
  private observedAt = 0;
  private reportedLeader: string | undefined;

  constructor(opts: LeaderElectorOptions) {
    this.o = opts;
    this.logger = opts.logger ?? nopLogger;
    this.random = opts.random ?? Math.random;
  }

  get identity(): string {
    return this.o.lock.identity;
  }

  isLeader(): boolean {
    return this.observed?.holderIdentity === this.identity;
  }

  /** The holder this replica last observed ('' if none). */
  leader(): string {
    return this.observed?.holderIdentity ?? '';
  }

  /** Tries until this replica holds the lease (true) or `stop` aborts (false). */
  async acquire(stop: AbortSignal): Promise<boolean> {
    const desc = this.o.lock.describe();
    this.logger.info(`attempting to acquire leader lease ${desc}...`);
    while (!stop.aborted) {
      if (await this.tryAcquireOrRenew(stop)) {
        this.o.onLeaderStatus?.(true);
        this.logger.info(`successfully acquired lease ${desc}`);
        return true;
      }
      const delay = this.o.retryPeriodMs * (1 + this.random() * JITTER_FACTOR);
      try {
        await sleep(this.o.clock, delay, stop);
      } catch {
        break;
      }
    }
    return false;
  }

  /**
   * Renews every retry period until `stop` aborts ('stopped'), or until one
   * renewal cycle fails to succeed within the renew deadline ('lost').
   */
  async renew(stop: AbortSignal): Promise<RenewResult> {
    const { clock, retryPeriodMs, renewDeadlineMs } = this.o;
    while (!stop.aborted) {
      const deadline = clock.now() + renewDeadlineMs;
      // Requests end only at the deadline, not at `stop`: an update cut off
      // mid-flight would leave a stale resourceVersion for the release.
      const cycle = deadlineSignal(clock, renewDeadlineMs, NEVER);
      const interruptible = AbortSignal.any([cycle.signal, stop]);
      let renewed = false;
      try {
        for (;;) {
          if (await this.tryAcquireOrRenew(cycle.signal)) {
            renewed = true;
            break;
          }
          if (stop.aborted || clock.now() >= deadline) break;
          try {
            await sleep(clock, Math.min(retryPeriodMs, deadline - clock.now()), interruptible);
          } catch {
            // the deadline or stop: decided below
          }
          if (stop.aborted || clock.now() >= deadline) break;
        }
      } finally {
        cycle.dispose();
      }
      if (stop.aborted) return 'stopped';
      if (!renewed) {
        this.o.onLeaderStatus?.(false);
        this.logger.info(
          `failed to renew lease ${this.o.lock.describe()}: timed out waiting for the condition`,
        );
        return 'lost';
      }
      this.logger.v(5).info(`successfully renewed lease ${this.o.lock.describe()}`);
      try {
        await sleep(clock, retryPeriodMs, stop);
      } catch {
        return 'stopped';
      }
    }
    return 'stopped';
  }

  /** Gives the lease up (empty holder, 1 s duration) if this replica holds it. */
  async release(signal: AbortSignal): Promise<boolean> {
    if (!this.isLeader()) return true;
    const now = microTime(this.o.clock.now());
    const record: LeaderElectionRecord = {
      holderIdentity: '',
      leaseDurationSeconds: 1,
      acquireTime: now,
      renewTime: now,
      leaseTransitions: this.observed?.leaseTransitions ?? 0,
    };
    try {
      await this.o.lock.update(record, signal);
    } catch (err) {
      this.logger.error(`Failed to release lock: ${errorMessage(err)}`);
      return false;
    }
    this.setObserved(record);
    this.o.onLeaderStatus?.(false);
    this.logger.info(`released leader lease ${this.o.lock.describe()}`);
    return true;
  }

  private leaseValid(now: number): boolean {
    return this.observedAt + this.o.leaseDurationMs > now;
  }

  private setObserved(record: LeaderElectionRecord): void {
    this.observed = record;
    this.observedRaw = rawRecord(record);
    this.observedAt = this.o.clock.now();
    if (record.holderIdentity !== '' && record.holderIdentity !== this.reportedLeader) {
      this.reportedLeader = record.holderIdentity;
      if (record.holderIdentity !== this.identity)
        this.logger.info(`new leader elected: ${record.holderIdentity}`);
    }
  }

  /** client-go tryAcquireOrRenew, step by step. */
  private async tryAcquireOrRenew(signal: AbortSignal): Promise<boolean> {
    const { lock, clock } = this.o;
    const nowMs = clock.now();
    const now = microTime(nowMs);
    const desired: LeaderElectionRecord = {
      holderIdentity: this.identity,
      leaseDurationSeconds: Math.round(this.o.leaseDurationMs / 1000),
      acquireTime: now,
      renewTime: now,
      leaseTransitions: 0,
    };
    // 1. Fast path: the leader updates optimistically from the record it last observed.
    if (this.isLeader() && this.leaseValid(nowMs) && this.observed) {
      const rec = {
        ...desired,
        acquireTime: this.observed.acquireTime,
        leaseTransitions: this.observed.leaseTransitions,
      };
      try {
        await lock.update(rec, signal);
        this.setObserved(rec);
        return true;
      } catch (err) {
        if (signal.aborted) return false;
        this.logger.error(
          `Failed to update lock optimistically: ${errorMessage(err)}, falling back to slow path`,
        );
      }
    }
    // 2. Obtain or create the record.
    let current: { record: LeaderElectionRecord; raw: string };
    try {
      current = await lock.get(signal);
    } catch (err) {
      if (statusCodeOf(err) !== 404) {
        if (!signal.aborted)
          this.logger.error(`error retrieving resource lock ${lock.describe()}: ${errorMessage(err)}`);
        return false;
      }
      try {
        await lock.create(desired, signal);
      } catch (cerr) {
        if (!signal.aborted)
          this.logger.error(`error initially creating leader election record: ${errorMessage(cerr)}`);
        return false;
      }
      this.setObserved(desired);
      return true;
    }
    // 3. Record obtained: the lease duration counts from when this replica saw it change.
    if (current.raw !== this.observedRaw) this.setObserved(current.record);
    if (current.record.holderIdentity !== '' && this.leaseValid(clock.now()) && !this.isLeader()) {
      this.logger.v(4).info(`lock is held by ${current.record.holderIdentity} and has not yet expired`);
      return false;
    }
    // 4. Take over or renew.
    const rec = this.isLeader()
      ? {
          ...desired,
          acquireTime: current.record.acquireTime,
          leaseTransitions: current.record.leaseTransitions,
        }
      : { ...desired, leaseTransitions: current.record.leaseTransitions + 1 };
    try {
      await lock.update(rec, signal);
    } catch (err) {
      if (!signal.aborted) this.logger.error(`Failed to update lock: ${errorMessage(err)}`);
      return false;
    }
    this.setObserved(rec);
    return true;
  }
}

/** An AbortSignal that fires after `ms` on `clock`, or with `parent`. */
export function deadlineSignal(
  clock: Clock,
  ms: number,
  parent: AbortSignal,
): { signal: AbortSignal; dispose: () => void } {
  const ac = new AbortController();
  const onParent = (): void => ac.abort(parent.reason);
  if (parent.aborted) ac.abort(parent.reason);
  else parent.addEventListener('abort', onParent, { once: true });
  const timer = clock.setTimeout(() => {
    const e = new Error('renew deadline exceeded');
    e.name = 'AbortError';
    ac.abort(e);
  }, ms);
  return {
    signal: ac.signal,
    dispose: () => {
      clock.clearTimeout(timer);
      parent.removeEventListener('abort', onParent);
    },
  };
}
