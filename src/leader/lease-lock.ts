// The `leases` resource lock of client-go (resourcelock.LeaseLock): a
// coordination.k8s.io/v1 Lease holds the leader election record; updates
// carry the resourceVersion last read, so a lost race is a 409 (R61).
export interface LeaderElectionRecord {
  readonly holderIdentity: string;
  readonly leaseDurationSeconds: number;
  /** metav1.MicroTime (RFC 3339, microseconds). */
  readonly acquireTime: string;
  readonly renewTime: string;
  readonly leaseTransitions: number;
}

export interface LeaseLock {
  readonly identity: string;
  /** `<namespace>/<name>` */
  describe(): string;
  /** The current record and its canonical serialisation; a missing Lease throws with statusCode 404. */
  get(signal: AbortSignal): Promise<{ record: LeaderElectionRecord; raw: string }>;
  /** Creates the Lease; an existing one throws with statusCode 409. */
  create(record: LeaderElectionRecord, signal: AbortSignal): Promise<void>;
  /** Replaces the record at the resourceVersion last read or written; a stale one throws 409. */
  update(record: LeaderElectionRecord, signal: AbortSignal): Promise<void>;
}

/** The JSON calls the lock makes (KubeClient.requestJson fits). */
export type LeaseTransport = (
  path: string,
  opts: { method: string; body?: object; signal: AbortSignal },
) => Promise<unknown>;

export class LeaseLockError extends Error {
  override readonly name = 'LeaseLockError';
}

interface LeaseObject {
  apiVersion?: string;
  kind?: string;
  metadata?: { name?: string; namespace?: string; resourceVersion?: string; [k: string]: unknown };
  spec?: {
    holderIdentity?: string | null;
    leaseDurationSeconds?: number | null;
    acquireTime?: string | null;
    renewTime?: string | null;
    leaseTransitions?: number | null;
  };
}

/** metav1.MicroTime wire format: `2006-01-02T15:04:05.000000Z`. */
export function microTime(ms: number): string {
  return new Date(ms).toISOString().replace(/\.(\d{3})Z$/, '.$1000Z');
}

function toRecord(lease: LeaseObject): LeaderElectionRecord {
  const s = lease.spec ?? {};
  return {
    holderIdentity: s.holderIdentity ?? '',
    leaseDurationSeconds: s.leaseDurationSeconds ?? 0,
    acquireTime: s.acquireTime ?? '',
    renewTime: s.renewTime ?? '',
    leaseTransitions: s.leaseTransitions ?? 0,
  };
}

/** Fixed key order, so equal records serialise equally (client-go compares raw records). */
export function rawRecord(r: LeaderElectionRecord): string {
  return JSON.stringify([
    r.holderIdentity,
    r.leaseDurationSeconds,
    r.acquireTime,
    r.renewTime,
    r.leaseTransitions,
  ]);
}

function spec(r: LeaderElectionRecord): Required<NonNullable<LeaseObject['spec']>> {
  return {
    holderIdentity: r.holderIdentity,
    leaseDurationSeconds: r.leaseDurationSeconds,
    acquireTime: r.acquireTime,
    renewTime: r.renewTime,
    leaseTransitions: r.leaseTransitions,
  };
}

export class KubeLeaseLock implements LeaseLock {
  readonly identity: string;
  private readonly namespace: string;
  private readonly name: string;
  private readonly transport: LeaseTransport;
  private lease: LeaseObject | undefined;

  constructor(opts: { namespace: string; name: string; identity: string; transport: LeaseTransport }) {
    this.namespace = opts.namespace;
    this.name = opts.name;
    this.identity = opts.identity;
    this.transport = opts.transport;
  }

  describe(): string {
    return `${this.namespace}/${this.name}`;
  }

  private collection(): string {
    return `/apis/coordination.k8s.io/v1/namespaces/${encodeURIComponent(this.namespace)}/leases`;
  }

  private item(): string {
    return `${this.collection()}/${encodeURIComponent(this.name)}`;
  }

  private accept(obj: unknown): LeaseObject {
    if (typeof obj !== 'object' || obj === null) throw new LeaseLockError(`${this.describe()}: not a Lease`);
    this.lease = obj as LeaseObject;
    return this.lease;
  }

  async get(signal: AbortSignal): Promise<{ record: LeaderElectionRecord; raw: string }> {
    const lease = this.accept(await this.transport(this.item(), { method: 'GET', signal }));
    const record = toRecord(lease);
    return { record, raw: rawRecord(record) };
  }

  async create(record: LeaderElectionRecord, signal: AbortSignal): Promise<void> {
    const body = {
      apiVersion: 'coordination.k8s.io/v1',
      kind: 'Lease',
      metadata: { name: this.name, namespace: this.namespace },
      spec: spec(record),
    };
    this.accept(await this.transport(this.collection(), { method: 'POST', body, signal }));
  }

  async update(record: LeaderElectionRecord, signal: AbortSignal): Promise<void> {
    const current = this.lease;
    if (current === undefined) {
      throw new LeaseLockError('lease not initialized, call get or create first');
    }
    const body = { ...current, spec: spec(record) };
    this.accept(await this.transport(this.item(), { method: 'PUT', body, signal }));
  }
}
