// Pure parts of the node informer: the R58 transform that strips cached nodes
// down to what the controller reads, the R55 relist diff, and the R54 backoff.
import type { Node, NodeAddress, NodeCondition } from '../core/types.ts';

/** A cached node: the controller's `Node` plus the singular podCIDR for provider plug-ins. */
export type CachedNode = Node & { spec?: NonNullable<Node['spec']> & { podCIDR?: string } };

type Obj = Record<string, unknown>;

function obj(v: unknown): Obj | undefined {
  return typeof v === 'object' && v !== null && !Array.isArray(v) ? (v as Obj) : undefined;
}

const SHARED_VALUES = [
  'InternalIP',
  'ExternalIP',
  'Hostname',
  'InternalDNS',
  'ExternalDNS',
  'True',
  'False',
  'Unknown',
];
const SHARED = new Map(SHARED_VALUES.map((x) => [x, x]));
// Longer strings (names, UIDs, CIDRs, timestamps) skip the lookup: hashing a
// freshly parsed string is most of a Map lookup's cost, on every watch event.
const SHARED_MAX_LENGTH = Math.max(...SHARED_VALUES.map((x) => x.length));

/**
 * A copy of `s` that shares no storage with the text it was parsed from. V8's
 * JSON.parse may return values as slices of its input, so caching a node's
 * name would otherwise keep a whole watch event or LIST page alive
 * (V8 issue 2869); frequent values are shared instead.
 */
export function detach(s: string): string {
  if (s.length <= SHARED_MAX_LENGTH) {
    const shared = SHARED.get(s);
    if (shared !== undefined) return shared;
  }
  return (' ' + s).slice(1);
}

function str(v: unknown): string | undefined {
  return typeof v === 'string' ? detach(v) : undefined;
}

const NETWORK_UNAVAILABLE = 'NetworkUnavailable';

/**
 * R58: keeps only what the reconcile (R12–R33), the watch filter (R41, R52)
 * and provider plug-ins read: metadata {name, uid, resourceVersion,
 * creationTimestamp}, spec {podCIDRs, podCIDR, providerID}, status.addresses
 * and the NetworkUnavailable condition. Everything else (managedFields, images,
 * nodeInfo, capacity, labels, annotations, other conditions, taints) is
 * dropped, which is safe because R41 compares only resourceVersion, uid, pod
 * CIDRs, addresses and NetworkUnavailable. Returns undefined for an object
 * without a name (not a usable node).
 */
export function transformNode(raw: unknown): CachedNode | undefined {
  const o = obj(raw);
  const md = obj(o?.['metadata']);
  const name = str(md?.['name']);
  if (o === undefined || md === undefined || name === undefined || name === '') return undefined;
  const node: CachedNode = {
    metadata: {
      name,
      uid: str(md['uid']),
      resourceVersion: str(md['resourceVersion']),
      creationTimestamp: str(md['creationTimestamp']),
    },
  };
  const spec = obj(o['spec']);
  if (spec) {
    const out: NonNullable<CachedNode['spec']> = {};
    const cidrs = spec['podCIDRs'];
    if (Array.isArray(cidrs)) {
      // A loop, not filter/map: those would return arrays of the parsing realm (node-json.ts).
      out.podCIDRs = [];
      for (const c of cidrs as unknown[]) if (typeof c === 'string') out.podCIDRs.push(detach(c));
    }
    const single = str(spec['podCIDR']);
    if (single !== undefined) out.podCIDR = single;
    const pid = str(spec['providerID']);
    if (pid !== undefined) out.providerID = pid;
    node.spec = out;
  }
  const status = obj(o['status']);
  if (status) {
    const out: NonNullable<Node['status']> = {};
    const addrs = status['addresses'];
    if (Array.isArray(addrs)) {
      out.addresses = [];
      for (const a of addrs) {
        const ao = obj(a);
        const type = str(ao?.['type']);
        const address = str(ao?.['address']);
        if (type !== undefined && address !== undefined) out.addresses.push({ type, address } as NodeAddress);
      }
    }
    const conds = status['conditions'];
    if (Array.isArray(conds)) {
      for (const c of conds) {
        const co = obj(c);
        if (co === undefined || co['type'] !== NETWORK_UNAVAILABLE) continue;
        const cond: NodeCondition = { type: NETWORK_UNAVAILABLE, status: str(co['status']) ?? '' };
        for (const k of ['reason', 'message', 'lastTransitionTime', 'lastHeartbeatTime'] as const) {
          const v = str(co[k]);
          if (v !== undefined) cond[k] = v;
        }
        out.conditions = [cond];
        break;
      }
    }
    node.status = out;
  }
  return node;
}

export interface CacheDelta {
  readonly adds: CachedNode[];
  readonly updates: { readonly oldNode: CachedNode; readonly newNode: CachedNode }[];
  /** Nodes gone from the relist: their final state is unknown (tombstones). */
  readonly deletes: CachedNode[];
}

/**
 * R55: what a relist changed. Update only if the resourceVersion moved; a name
 * whose uid changed is reported as delete + add, since it is another node (the
 * delete lets the controller drop the old incarnation's expectations).
 */
export function diffCaches(
  oldCache: ReadonlyMap<string, CachedNode>,
  newCache: ReadonlyMap<string, CachedNode>,
): CacheDelta {
  const delta: CacheDelta = { adds: [], updates: [], deletes: [] };
  for (const [name, oldNode] of oldCache) {
    const n = newCache.get(name);
    if (n === undefined || n.metadata?.uid !== oldNode.metadata?.uid) delta.deletes.push(oldNode);
  }
  for (const [name, newNode] of newCache) {
    const o = oldCache.get(name);
    if (o === undefined || o.metadata?.uid !== newNode.metadata?.uid) delta.adds.push(newNode);
    else if (o.metadata?.resourceVersion !== newNode.metadata?.resourceVersion)
      delta.updates.push({ oldNode: o, newNode });
  }
  return delta;
}

export interface BackoffOptions {
  /** First delay (default 1 s). */
  readonly initialMs?: number;
  /** Cap (default 30 s). */
  readonly maxMs?: number;
}

/**
 * R54: delay before re-establishing after `failures` consecutive failures
 * (1 for the first): 1 s, 2 s, 4 s … capped at 30 s, each ±10 % so that many
 * controllers do not reconnect in lockstep after an apiserver restart; never
 * shorter than a Retry-After the server asked for.
 */
export function informerBackoffMs(
  failures: number,
  random: () => number,
  opts: BackoffOptions = {},
  retryAfterMs?: number,
): number {
  const initial = opts.initialMs ?? 1000;
  const max = opts.maxMs ?? 30_000;
  const base = Math.min(max, initial * 2 ** Math.max(0, failures - 1));
  const jittered = base * (0.9 + 0.2 * random());
  return Math.max(jittered, Math.min(retryAfterMs ?? 0, 10 * 60_000));
}
