// The soak's two sources of trouble: node churn through the real apiserver
// (creates, deletes, address changes, NetworkUnavailable tampering, irrelevant
// label edits) and fault episodes in the in-memory cloud.
import { ConflictError, RetryableError, ThrottledError } from '../../src/core/errors.ts';
import type { AuditedMemoryRoutes, TrackedAdmin } from '../faults/support.ts';

export type ChangeKind = 'create' | 'delete' | 'address' | 'tamper' | 'label';
export type FaultKind = 'none' | 'errors30' | 'throttle' | 'hang' | 'quota' | 'conflict';

const now = (): string => new Date().toISOString().replace(/\.\d+Z$/, 'Z');

/** Slot i owns name soak-i, 10.244.i.0/24 and, for every 4th slot, fd00:10:244:<i>::/64. */
export function slotCIDRs(i: number): string[] {
  const v4 = `10.244.${i}.0/24`;
  return i % 4 === 0 ? [v4, `fd00:10:244:${i.toString(16)}::/64`] : [v4];
}

export class Churn {
  readonly applied: Record<ChangeKind, number> = { create: 0, delete: 0, address: 0, tamper: 0, label: 0 };
  apiErrors = 0;
  /** When the last change was acknowledged by the apiserver. */
  lastChangeAt = Date.now();
  private readonly admin: TrackedAdmin;
  private readonly random: () => number;
  private readonly live = new Set<number>();
  /** Slot → time it may be reused: a name re-created at once would race the cache (see NodeHistory). */
  private readonly cooldown = new Map<number, number>();
  private readonly slots: number;
  private readonly target: number;
  private addrSeq = 0;

  constructor(admin: TrackedAdmin, random: () => number, target: number, slots = 250) {
    this.admin = admin;
    this.random = random;
    this.target = target;
    this.slots = slots;
  }

  get nodes(): number {
    return this.live.size;
  }

  async populate(concurrency = 8): Promise<void> {
    const todo = Array.from({ length: this.target }, (_, i) => i);
    await Promise.all(
      Array.from({ length: concurrency }, async () => {
        for (let i = todo.shift(); i !== undefined; i = todo.shift()) await this.create(i);
      }),
    );
  }

  private pick<T>(xs: readonly T[]): T {
    return xs[Math.floor(this.random() * xs.length)]!;
  }

  private async create(i: number): Promise<void> {
    await this.admin.createNode(`soak-${i}`, slotCIDRs(i), [
      { type: 'InternalIP', address: `10.1.${i}.${1 + (this.addrSeq++ % 250)}` },
      { type: 'Hostname', address: `soak-${i}` },
    ]);
    this.live.add(i);
  }

  /** One random change; failures of the apiserver are counted, not fatal. */
  async step(): Promise<ChangeKind> {
    const t = Date.now();
    const free = Array.from({ length: this.slots }, (_, i) => i).filter(
      (i) => !this.live.has(i) && (this.cooldown.get(i) ?? 0) <= t,
    );
    const live = [...this.live];
    const weights: [ChangeKind, number][] = [
      ['create', free.length > 0 && live.length < this.target * 1.15 ? 3 : 0],
      ['delete', live.length > this.target * 0.85 ? 3 : 0],
      ['address', 3],
      ['tamper', 2],
      ['label', 1],
    ];
    let r = this.random() * weights.reduce((s, [, w]) => s + w, 0);
    const kind = weights.find(([, w]) => (r -= w) < 0)?.[0] ?? 'label';
    try {
      if (kind === 'create') await this.create(this.pick(free));
      else {
        const i = this.pick(live);
        const name = `soak-${i}`;
        if (kind === 'delete') {
          this.live.delete(i);
          this.cooldown.set(i, Date.now() + 15_000);
          await this.admin.deleteNode(name);
        } else if (kind === 'address') {
          await this.admin.patchStatus(name, {
            addresses: [{ type: 'InternalIP', address: `10.2.${i}.${1 + (this.addrSeq++ % 250)}` }],
          });
        } else if (kind === 'tamper') {
          const [status, reason] = this.random() < 0.5 ? ['False', 'CalicoIsUp'] : ['True', 'Tampered'];
          await this.admin.patchStatus(name, {
            conditions: [
              {
                type: 'NetworkUnavailable',
                status,
                reason,
                message: 'soak',
                lastTransitionTime: now(),
                lastHeartbeatTime: now(),
              },
            ],
          });
        } else {
          await this.admin.patchNode(name, { metadata: { labels: { soak: String(this.addrSeq++) } } });
        }
      }
      this.applied[kind]++;
      this.lastChangeAt = Date.now();
    } catch {
      this.apiErrors++;
    }
    return kind;
  }
}

export class Faults {
  readonly episodes: Record<FaultKind, number> = {
    none: 0,
    errors30: 0,
    throttle: 0,
    hang: 0,
    quota: 0,
    conflict: 0,
  };
  private readonly cloud: AuditedMemoryRoutes;
  private readonly random: () => number;

  constructor(cloud: AuditedMemoryRoutes, random: () => number) {
    this.cloud = cloud;
    this.random = random;
  }

  start(): FaultKind {
    const kinds: FaultKind[] = ['none', 'errors30', 'errors30', 'throttle', 'hang', 'quota', 'conflict'];
    const kind = kinds[Math.floor(this.random() * kinds.length)]!;
    this.episodes[kind]++;
    const c = this.cloud;
    if (kind === 'errors30')
      c.failFraction(0.3, undefined, (op) => new RetryableError(`soak ${op} failure (HTTP 503)`));
    else if (kind === 'throttle')
      c.failFraction(
        0.4,
        undefined,
        () =>
          new ThrottledError('Request limit exceeded', {
            retryAfterMs: 500 + Math.floor(this.random() * 2500),
          }),
      );
    else if (kind === 'hang') c.hangNext(2 + Math.floor(this.random() * 4));
    else if (kind === 'quota') c.quota = c.snapshot().length;
    else if (kind === 'conflict')
      c.failFraction(0.3, ['create'], () => new ConflictError('route table is being modified'));
    return kind;
  }

  clear(): void {
    this.cloud.clearFaults();
    this.cloud.quota = undefined;
  }
}
