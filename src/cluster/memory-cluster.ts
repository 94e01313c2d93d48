// An in-memory cluster: node source, node-status writer and event recorder in
// one, with apiserver-like semantics that matter to the controller
// (resourceVersion bumps on every write, uid per incarnation, strategic merge
// of conditions by type). Used by tests, the simulator and library users.
import { RealClock, type Clock } from '../core/clock.ts';
import {
  ApiStatusError,
  type EventRecorder,
  type EventType,
  type NodeEventHandler,
  type NodeRef,
  type NodeSource,
  type NodeStatusWriter,
} from '../core/ports.ts';
import type { Node, NodeAddress, NodeCondition } from '../core/types.ts';

export interface RecordedEvent {
  readonly at: number;
  readonly node: NodeRef;
  readonly type: EventType;
  readonly reason: string;
  readonly message: string;
}

export interface RecordedPatch {
  readonly at: number;
  readonly node: NodeRef;
  readonly condition: NodeCondition;
}

export interface NodeSpecInput {
  name: string;
  podCIDRs?: string[];
  addresses?: NodeAddress[];
  providerID?: string;
  uid?: string;
  creationTimestamp?: Date;
  conditions?: NodeCondition[];
}

export class MemoryCluster implements NodeSource, NodeStatusWriter, EventRecorder {
  readonly events: RecordedEvent[] = [];
  readonly patches: RecordedPatch[] = [];
  private readonly nodes = new Map<string, Node>();
  private readonly handlers = new Set<NodeEventHandler>();
  private readonly syncWaiters: (() => void)[] = [];
  private readonly clock: Clock;
  private rv = 0;
  private uidSeq = 0;
  private synced: boolean;
  private patchFailures: { remaining: number; statusCode: number }[] = [];

  constructor(opts: { clock?: Clock; synced?: boolean } = {}) {
    this.clock = opts.clock ?? new RealClock();
    this.synced = opts.synced ?? true;
  }

  // ---- NodeSource -------------------------------------------------------

  get(name: string): Node | undefined {
    return this.nodes.get(name);
  }

  list(): readonly Node[] {
    return [...this.nodes.values()];
  }

  hasSynced(): boolean {
    return this.synced;
  }

  waitForSync(signal: AbortSignal): Promise<boolean> {
    if (this.synced) return Promise.resolve(true);
    return new Promise((resolve) => {
      const onAbort = (): void => resolve(false);
      signal.addEventListener('abort', onAbort, { once: true });
      this.syncWaiters.push(() => {
        signal.removeEventListener('abort', onAbort);
        resolve(true);
      });
    });
  }

  addEventHandler(handler: NodeEventHandler): () => void {
    this.handlers.add(handler);
    // Like an informer: a late handler sees the cache as adds.
    if (this.synced) for (const n of this.nodes.values()) handler.onAdd(n);
    return () => this.handlers.delete(handler);
  }

  /** Ends the "initial list": the controller may reconcile from now on. */
  markSynced(): void {
    if (this.synced) return;
    this.synced = true;
    for (const n of this.nodes.values()) for (const h of this.handlers) h.onAdd(n);
    for (const w of this.syncWaiters.splice(0)) w();
  }

  // ---- mutations (what kubelets, IPAM and admins do) -------------------

  createNode(input: NodeSpecInput): Node {
    if (this.nodes.has(input.name)) throw new ApiStatusError(409, `nodes "${input.name}" already exists`);
    const node: Node = {
      metadata: {
        name: input.name,
        uid: input.uid ?? `uid-${++this.uidSeq}`,
        resourceVersion: String(++this.rv),
        creationTimestamp: input.creationTimestamp ?? new Date(this.clock.now()),
      },
      spec: {
        ...(input.podCIDRs ? { podCIDRs: [...input.podCIDRs] } : {}),
        ...(input.providerID ? { providerID: input.providerID } : {}),
      },
      status: { addresses: [...(input.addresses ?? [])], conditions: [...(input.conditions ?? [])] },
    };
    this.nodes.set(input.name, node);
    if (this.synced) for (const h of this.handlers) h.onAdd(node);
    return node;
  }

  /** Replaces the node object through `mutate` (a copy), bumping resourceVersion. */
  updateNode(name: string, mutate: (n: Node) => void): Node {
    const old = this.nodes.get(name);
    if (!old) throw new ApiStatusError(404, `nodes "${name}" not found`);
    const next = structuredClone(old);
    mutate(next);
    next.metadata = { ...next.metadata, resourceVersion: String(++this.rv) };
    this.nodes.set(name, next);
    if (this.synced) for (const h of this.handlers) h.onUpdate(old, next);
    return next;
  }

  /** `tombstone`: handlers get the final state as unknown, as after a missed watch event. */
  deleteNode(name: string, opts: { tombstone?: boolean } = {}): void {
    const old = this.nodes.get(name);
    if (!old) throw new ApiStatusError(404, `nodes "${name}" not found`);
    this.nodes.delete(name);
    if (this.synced) for (const h of this.handlers) h.onDelete(old, opts.tombstone ?? false);
  }

  /** An informer resync notification: update(n, n) with the same resourceVersion. */
  resync(name: string): void {
    const n = this.nodes.get(name);
    if (n && this.synced) for (const h of this.handlers) h.onUpdate(n, n);
  }

  /** A kubelet heartbeat: Ready's lastHeartbeatTime moves, nothing else. */
  heartbeat(name: string): void {
    const old = this.nodes.get(name);
    if (!old) throw new ApiStatusError(404, `nodes "${name}" not found`);
    const now = new Date(this.clock.now());
    // Copy-on-write of the parts a heartbeat changes: a deep clone per
    // heartbeat dominated simulator runs (hundreds of thousands of them).
    const conds = (old.status?.conditions ?? []).filter((c) => c.type !== 'Ready');
    const ready = old.status?.conditions?.find((c) => c.type === 'Ready');
    conds.push(
      ready
        ? { ...ready, lastHeartbeatTime: now }
        : {
            type: 'Ready',
            status: 'True',
            reason: 'KubeletReady',
            lastHeartbeatTime: now,
            lastTransitionTime: now,
          },
    );
    const next: Node = {
      ...old,
      metadata: { ...old.metadata, resourceVersion: String(++this.rv) },
      status: { ...old.status, conditions: conds },
    };
    this.nodes.set(name, next);
    if (this.synced) for (const h of this.handlers) h.onUpdate(old, next);
  }

  setAddresses(name: string, addresses: NodeAddress[]): void {
    this.updateNode(name, (n) => {
      (n.status ??= {}).addresses = addresses;
    });
  }

  /** Writes the condition as another actor would (e.g. a CNI setting CalicoIsUp). */
  setCondition(name: string, condition: NodeCondition): void {
    this.updateNode(name, (n) => mergeCondition(n, condition));
  }

  /** The next `n` status patches fail with `statusCode`. */
  failPatches(n: number, statusCode: number): void {
    this.patchFailures.push({ remaining: n, statusCode });
  }

  // ---- NodeStatusWriter / EventRecorder ---------------------------------

  async patchNodeCondition(node: NodeRef, condition: NodeCondition): Promise<void> {
    const f = this.patchFailures.find((x) => x.remaining > 0);
    if (f) {
      f.remaining--;
      throw new ApiStatusError(f.statusCode, `injected status ${f.statusCode}`);
    }
    if (!this.nodes.has(node.name)) throw new ApiStatusError(404, `nodes "${node.name}" not found`);
    this.patches.push({ at: this.clock.now(), node, condition });
    this.updateNode(node.name, (n) => mergeCondition(n, condition));
  }

  event(node: NodeRef, type: EventType, reason: string, message: string): void {
    this.events.push({ at: this.clock.now(), node, type, reason, message });
  }
}

/** Strategic merge of one condition into status.conditions (merge key `type`). */
export function mergeCondition(n: Node, condition: NodeCondition): void {
  const status = (n.status ??= {});
  const conds = (status.conditions ??= []);
  const i = conds.findIndex((c) => c.type === condition.type);
  if (i >= 0) conds[i] = { ...conds[i]!, ...condition };
  else conds.push({ ...condition });
}
