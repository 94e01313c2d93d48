// The one invariant checker of the fault, bad-input and soak suites. It judges
// the cloud's FULL call log (every call, not only the end state), so a route
// that was wrongly deleted and re-created later still counts:
//   - no delete of a route outside the cluster CIDRs (unmanaged, R13/R22) or
//     with an unparsable destination (R14), no create of an unparsable one (R17);
//   - no delete of a route whose target node wanted that CIDR all along, unless
//     the same replica tries to re-create it for that node in the same reconcile
//     (an address update, R18; R47 may defer that create) or the CIDR was
//     contested (R21);
//   - no redundant create (one for a route the cloud already held) beyond a
//     given budget of idempotent retries;
//   - with several processes: one writer at a time (call windows never overlap,
//     nothing from A after B's first call).
// Plus the end state: exactly the desired routes and the right NetworkUnavailable.
import { canonicalCIDR, parseCIDR, tryParseCIDR, type Cidr } from '../../src/core/cidr.ts';

export interface CloudCall {
  readonly op: 'list' | 'create' | 'delete';
  readonly pid: number;
  readonly start: number;
  readonly end: number;
  /** 'ok' or an error name/kind. */
  readonly outcome: string;
  readonly destinationCIDR?: string;
  readonly targetNode?: string;
  readonly nameHint?: string;
  /** A throttled answer's Retry-After (in-process log only). */
  readonly retryAfterMs?: number;
}

export interface RouteEntry {
  readonly destinationCIDR: string;
  readonly targetNode: string;
  readonly targetNodeAddresses?: readonly { type: string; address: string }[];
}

/** R13, written independently of src/core/responsibility.ts: first or last address in a cluster CIDR. */
export function isManaged(clusterCIDRs: readonly string[], destination: string): boolean {
  const d = tryParseCIDR(destination);
  if (!d) return false;
  const bits = d.family === 4 ? 32 : 128;
  const last = d.ip | ((1n << BigInt(bits - d.prefix)) - 1n);
  return clusterCIDRs
    .map((c) => parseCIDR(c))
    .some((c: Cidr) => {
      if (c.family !== d.family) return false;
      const shift = BigInt(bits - c.prefix);
      return d.ip >> shift === c.ip >> shift || last >> shift === c.ip >> shift;
    });
}

interface Span {
  readonly node: string;
  readonly from: number;
  to: number;
}

/**
 * When each node name held each pod CIDR, as the test wrote it to the
 * apiserver: from the acknowledgement of the create to the start of the delete
 * (the conservative reading: shorter spans never produce false alarms).
 */
export class NodeHistory {
  private readonly spans = new Map<string, Span[]>();
  private readonly open = new Map<string, Span[]>();

  created(node: string, podCIDRs: readonly string[], at = Date.now()): void {
    const mine: Span[] = [];
    for (const p of new Set(podCIDRs.map((c) => canonicalCIDR(c)))) {
      if (p === undefined) continue;
      const s: Span = { node, from: at, to: Infinity };
      const list = this.spans.get(p) ?? [];
      list.push(s);
      this.spans.set(p, list);
      mine.push(s);
    }
    this.open.set(node, mine);
  }

  deleted(node: string, at = Date.now()): void {
    for (const s of this.open.get(node) ?? []) s.to = at;
    this.open.delete(node);
  }

  /** Did `node` hold `cidr` during all of [from, to]? */
  heldThroughout(node: string, cidr: string, from: number, to: number): boolean {
    return (this.spans.get(cidr) ?? []).some((s) => s.node === node && s.from <= from && s.to >= to);
  }

  /** Did another node claim `cidr` at any time in [from, to]? */
  contested(node: string, cidr: string, from: number, to: number): boolean {
    return (this.spans.get(cidr) ?? []).some((s) => s.node !== node && s.from <= to && s.to >= from);
  }
}

export interface CheckOptions {
  readonly clusterCIDRs: readonly string[];
  /** Node timeline; without it the "deleted a live node's route" rule is skipped. */
  readonly history?: NodeHistory;
  /** How long a node must have held a CIDR before a delete of its route is wrong (cache lag). */
  readonly graceMs?: number;
  /** Routes in the cloud before the controller started (for the redundant-create replay). */
  readonly initialRoutes?: readonly RouteEntry[];
  /** Creates of a route the cloud already held that are tolerated (default 0). */
  readonly maxRedundantCreates?: number;
  /** Deletes the test expects despite the rules above (e.g. a blackhole it made). */
  readonly allowDelete?: (c: CloudCall) => boolean;
}

const key = (dest: string): string => canonicalCIDR(dest) ?? dest;

/**
 * Incremental: feed settled calls in any order of arrival, ask for violations
 * at any time. Only the replay state is kept, so a soak run can drop the calls.
 */
export class CallLogChecker {
  readonly violations: string[] = [];
  readonly counts = { list: 0, create: 0, delete: 0, failed: 0, redundantCreates: 0, idempotentCreates: 0 };
  private readonly o: CheckOptions;
  private readonly table = new Map<string, string>();
  /** Deletes of live nodes' routes, waiting to see whether the same reconcile re-creates them. */
  private pending: CloudCall[] = [];
  private readonly windows = new Map<number, { first: number; last: number; lastMutation: number }>();
  /** Per process, routes whose delete failed in the current reconcile (`dest>target`). */
  private readonly failedDeletes = new Map<number, Set<string>>();
  /** Per process, throttled answers (end, deadline) of the last minute, for R47. */
  private readonly throttles = new Map<number, { at: number; until: number }[]>();

  constructor(o: CheckOptions) {
    this.o = o;
    for (const r of o.initialRoutes ?? []) this.table.set(key(r.destinationCIDR), r.targetNode);
  }

  feed(calls: readonly CloudCall[]): void {
    for (const c of [...calls].sort((a, b) => a.end - b.end || a.start - b.start)) this.one(c);
  }

  private one(c: CloudCall): void {
    this.counts[c.op]++;
    const ok = c.outcome === 'ok';
    if (!ok) this.counts.failed++;
    const w = this.windows.get(c.pid) ?? { first: c.start, last: c.end, lastMutation: -Infinity };
    w.first = Math.min(w.first, c.start);
    w.last = Math.max(w.last, c.end);
    if (c.op !== 'list') w.lastMutation = Math.max(w.lastMutation, c.end);
    this.windows.set(c.pid, w);
    this.checkThrottle(c);
    if (c.outcome === 'ThrottledError') {
      // R47 defers the rest of this reconcile, including the create half of an
      // address update whose delete already ran: the next reconcile re-creates it.
      this.pending = this.pending.filter((p) => p.pid !== c.pid);
    }
    if (c.op === 'list') {
      this.failedDeletes.delete(c.pid);
      // A new reconcile of this replica: its earlier deletes were not updates.
      this.settle((p) => p.pid === c.pid && p.start < c.start);
      return;
    }
    const dest = c.destinationCIDR ?? '';
    const target = c.targetNode ?? '';
    const allowed = this.o.allowDelete?.(c) ?? false;
    if (tryParseCIDR(dest) === undefined) {
      if (c.op === 'create' || !allowed)
        this.violations.push(`${c.op} of unparsable destination ${JSON.stringify(dest)} ${describe(c)}`);
      return;
    }
    if (c.op === 'delete') {
      if (!isManaged(this.o.clusterCIDRs, dest) && !allowed)
        this.violations.push(`delete of unmanaged route ${dest}->${target} ${describe(c)}`);
      // A throttled delete deleted nothing and defers the rest of the reconcile (R47).
      else if (!allowed && c.outcome !== 'ThrottledError' && this.liveRoute(c)) this.pending.push(c);
      if (ok && this.table.get(key(dest)) === target) this.table.delete(key(dest));
      if (!ok) {
        const f = this.failedDeletes.get(c.pid) ?? new Set<string>();
        this.failedDeletes.set(c.pid, f.add(`${key(dest)}>${target}`));
      }
      return;
    }
    // create
    this.pending = this.pending.filter(
      (p) => !(p.pid === c.pid && p.targetNode === target && key(p.destinationCIDR ?? '') === key(dest)),
    );
    if (!ok) return;
    if (this.table.get(key(dest)) === target) {
      // The create half of an update whose delete failed (R27 waits for the delete to
      // settle, not to succeed): the cloud answers it as an idempotent create.
      if (this.failedDeletes.get(c.pid)?.has(`${key(dest)}>${target}`)) {
        this.counts.idempotentCreates++;
        return;
      }
      this.counts.redundantCreates++;
      if (this.counts.redundantCreates > (this.o.maxRedundantCreates ?? 0))
        this.violations.push(`redundant create of ${dest}->${target} (the cloud held it) ${describe(c)}`);
    }
    this.table.set(key(dest), target);
  }

  /**
   * R47: after a throttled answer no call of that process starts before the
   * deadline it set (the latest answer wins). Calls started before the answer
   * arrived are fine, hence the 5 ms of slack on both sides.
   */
  private checkThrottle(c: CloudCall): void {
    const list = (this.throttles.get(c.pid) ?? []).filter((x) => x.at > c.end - 60_000);
    const inForce = list.filter((x) => x.at + 5 <= c.start).at(-1);
    if (inForce && c.start < inForce.until - 5)
      this.violations.push(
        `${c.op} started ${inForce.until - c.start} ms before the throttle deadline (R47) ${describe(c)}`,
      );
    if (c.retryAfterMs !== undefined) {
      list.push({ at: c.end, until: c.end + c.retryAfterMs });
      list.sort((a, b) => a.at - b.at);
    }
    this.throttles.set(c.pid, list);
  }

  private liveRoute(c: CloudCall): boolean {
    const h = this.o.history;
    const target = c.targetNode ?? '';
    if (!h || target === '') return false;
    const cidr = key(c.destinationCIDR ?? '');
    const from = c.start - (this.o.graceMs ?? 5_000);
    return h.heldThroughout(target, cidr, from, c.end) && !h.contested(target, cidr, from, c.end);
  }

  private settle(pred: (p: CloudCall) => boolean): void {
    for (const p of this.pending.filter(pred))
      this.violations.push(
        `delete of ${p.destinationCIDR}->${p.targetNode} while that node held the CIDR, not re-created ${describe(p)}`,
      );
    this.pending = this.pending.filter((p) => !pred(p));
  }

  /** Call at the end of a run: pending deletes no longer can be paired with a create. */
  finish(): string[] {
    this.settle(() => true);
    return this.violations;
  }

  /** Per process, [first call, last call]; for the single-writer check. */
  writers(): { pid: number; first: number; last: number; lastMutation: number }[] {
    return [...this.windows].map(([pid, w]) => ({ pid, ...w })).sort((a, b) => a.first - b.first);
  }
}

function describe(c: CloudCall): string {
  return `(pid ${c.pid}, ${new Date(c.start).toISOString()}, ${c.end - c.start} ms, ${c.outcome})`;
}

/**
 * Two replicas never act at once: every process's calls lie in a window
 * [first start, last end] disjoint from the others', and in particular no
 * mutating call of A ends after B's first call. Returns the pids in order.
 */
export function checkSingleWriter(calls: readonly CloudCall[]): { order: number[]; violations: string[] } {
  const ws = [...new Set(calls.map((x) => x.pid))]
    .map((pid) => ({ pid, ...windowOf(calls, pid) }))
    .sort((a, b) => a.first - b.first);
  const violations: string[] = [];
  for (let i = 1; i < ws.length; i++) {
    for (const prev of ws.slice(0, i)) {
      const cur = ws[i]!;
      if (prev.lastMutation >= cur.first)
        violations.push(
          `pid ${prev.pid} mutated the cloud at ${prev.lastMutation} after pid ${cur.pid}'s first call at ${cur.first}`,
        );
      else if (prev.last >= cur.first)
        violations.push(
          `pid ${prev.pid} [${prev.first}, ${prev.last}] overlaps pid ${cur.pid} from ${cur.first}`,
        );
    }
  }
  return { order: ws.map((w) => w.pid), violations };
}

function windowOf(
  calls: readonly CloudCall[],
  pid: number,
): { first: number; last: number; lastMutation: number } {
  const mine = calls.filter((x) => x.pid === pid);
  return {
    first: Math.min(...mine.map((x) => x.start)),
    last: Math.max(...mine.map((x) => x.end)),
    lastMutation: Math.max(-Infinity, ...mine.filter((x) => x.op !== 'list').map((x) => x.end)),
  };
}

/** A node as read from the apiserver, reduced to what the end-state check needs. */
export interface NodeView {
  readonly metadata: { readonly name: string; readonly creationTimestamp?: string };
  readonly spec?: { readonly podCIDRs?: readonly string[] };
  readonly status?: {
    readonly addresses?: readonly { type: string; address: string }[];
    readonly conditions?: readonly { type: string; status: string; reason?: string }[];
  };
}

export interface EndStateOptions {
  readonly clusterCIDRs: readonly string[];
  /** Routes that must still be there untouched (foreign, unmanaged, unparsable). */
  readonly keep?: readonly RouteEntry[];
  /** Canonical pod CIDRs not expected to get a route (e.g. a PermanentError from the cloud). */
  readonly unrouted?: ReadonlySet<string>;
  /** Routes must carry their node's current addresses (a cloud that reports them, R18/R19). */
  readonly checkAddresses?: boolean;
}

const addrs = (xs: readonly { type: string; address: string }[] | undefined): string =>
  (xs ?? [])
    .map((a) => `${a.type}=${a.address}`)
    .sort()
    .join(',');

/**
 * The end state: every valid pod CIDR routed to its node (one owner for a
 * contested CIDR), nothing else but `keep`; NetworkUnavailable False/RouteCreated
 * exactly on nodes whose every pod CIDR is routed to them, True/NoRouteCreated on
 * the other nodes with pod CIDRs. Returns the differences (empty = converged).
 */
export function checkEndState(
  routes: readonly RouteEntry[],
  nodes: readonly NodeView[],
  o: EndStateOptions,
): string[] {
  const problems: string[] = [];
  const actual = new Map<string, string[]>();
  for (const r of routes)
    actual.set(key(r.destinationCIDR), [...(actual.get(key(r.destinationCIDR)) ?? []), r.targetNode]);
  const claimants = new Map<string, string[]>();
  for (const n of nodes)
    for (const p of new Set((n.spec?.podCIDRs ?? []).map((c) => canonicalCIDR(c))))
      if (p !== undefined) claimants.set(p, [...(claimants.get(p) ?? []), n.metadata.name]);
  const expected = new Map<string, string>();
  for (const r of o.keep ?? []) expected.set(key(r.destinationCIDR), r.targetNode);
  for (const [cidr, wanted] of claimants) {
    if (o.unrouted?.has(cidr)) continue;
    const got = actual.get(cidr)?.[0];
    // R21: any claimant may be the stable owner; exactly one route.
    expected.set(cidr, got !== undefined && wanted.includes(got) ? got : wanted[0]!);
  }
  for (const [cidr, target] of expected) {
    const got = actual.get(cidr) ?? [];
    if (got.length !== 1 || got[0] !== target)
      problems.push(
        `route ${cidr}: want ->${target}, have ${got.length === 0 ? 'none' : got.map((t) => `->${t}`).join(', ')}`,
      );
  }
  for (const [cidr, got] of actual)
    if (!expected.has(cidr)) problems.push(`unexpected route ${cidr}->${got.join(',')}`);
  if (o.checkAddresses) {
    const byName = new Map(nodes.map((n) => [n.metadata.name, n]));
    for (const r of routes) {
      const n = byName.get(r.targetNode);
      if (n && addrs(r.targetNodeAddresses) !== addrs(n.status?.addresses))
        problems.push(
          `route ${r.destinationCIDR}->${r.targetNode}: addresses [${addrs(r.targetNodeAddresses)}], node has [${addrs(n.status?.addresses)}]`,
        );
    }
  }
  for (const n of nodes) {
    const podCIDRs = n.spec?.podCIDRs ?? [];
    const c = n.status?.conditions?.find((x) => x.type === 'NetworkUnavailable');
    const have = c === undefined ? 'none' : `${c.status}/${c.reason ?? ''}`;
    if (podCIDRs.length === 0) continue; // untracked: never written (R28), or E15's explicit test
    const routed = podCIDRs.every((p) => {
      const k = canonicalCIDR(p);
      return k !== undefined && expected.get(k) === n.metadata.name;
    });
    const want = routed ? 'False/RouteCreated' : 'True/NoRouteCreated';
    if (have !== want) problems.push(`node ${n.metadata.name}: NetworkUnavailable ${have}, want ${want}`);
  }
  return problems;
}
