// route_controller_route_creation_latency_seconds (R51): from the first sight
// of a (node UID, pod CIDR) pair in the cache to its route being created, once
// per pair; and route_controller_node_schedulable_latency_seconds (R107): from
// a node's creation (or its pod CIDRs' first sight, when later) to its
// NetworkUnavailable=False, once per node created while the controller runs.
import { parseCIDRCached, CidrParseError } from '../core/cidr.ts';
import type { Node } from '../core/types.ts';

const DONE = -1;

interface NodeTimes {
  /** Per pod CIDR (canonical): first sight, or DONE once reported or found routed. */
  readonly cidrs: Map<string, number>;
  /** First sight of the newest pod CIDR: when IPAM assigned them, as far as the cache tells. */
  assignedAt: number;
  schedulableReported: boolean;
}

export class CreationLatencyTracker {
  private readonly nodes = new Map<string, NodeTimes>();
  /** R107 measures only nodes created since then: an older node's wait includes time nobody watched. */
  private readonly since: number;

  constructor(since = 0) {
    this.since = since;
  }

  /** Records first sight of each pod CIDR of the node. */
  observe(node: Node, now: number): void {
    const uid = node.metadata?.uid;
    const cidrs = node.spec?.podCIDRs;
    if (!uid || !cidrs || cidrs.length === 0) return;
    const canonicals: string[] = [];
    for (const text of cidrs) {
      const c = parseCIDRCached(text);
      if (!(c instanceof CidrParseError)) canonicals.push(c.canonical);
    }
    this.observeCanonical(uid, canonicals, now);
  }

  /** The same for pod CIDRs a plan has already parsed (no second parse per reconcile). */
  observePlanned(
    uid: string,
    cidrs: readonly { readonly canonical: string | undefined }[],
    now: number,
  ): void {
    const canonicals: string[] = [];
    for (const c of cidrs) if (c.canonical !== undefined) canonicals.push(c.canonical);
    this.observeCanonical(uid, canonicals, now);
  }

  private observeCanonical(uid: string, canonicals: readonly string[], now: number): void {
    if (!uid || canonicals.length === 0) return;
    let t = this.nodes.get(uid);
    if (!t) this.nodes.set(uid, (t = { cidrs: new Map(), assignedAt: now, schedulableReported: false }));
    for (const c of canonicals) {
      if (t.cidrs.has(c)) continue;
      t.cidrs.set(c, now);
      t.assignedAt = now;
    }
  }

  /** Seconds since first sight, or undefined if already reported (or never seen). */
  created(uid: string, canonical: string, now: number): number | undefined {
    const m = this.nodes.get(uid)?.cidrs;
    const t = m?.get(canonical);
    if (m === undefined || t === undefined || t === DONE) return undefined;
    m.set(canonical, DONE);
    return Math.max(0, now - t) / 1000;
  }

  /** The route already existed: nothing to measure for this pair. */
  kept(uid: string, canonical: string): void {
    this.nodes.get(uid)?.cidrs.set(canonical, DONE);
  }

  /**
   * R107: seconds from the node's creation, or the first sight of its pod CIDRs
   * when later, to now (its NetworkUnavailable=False was just written); once per
   * node, and only for a node created since the tracker started.
   */
  schedulable(uid: string, creationTimestamp: Date | string | undefined, now: number): number | undefined {
    const t = this.nodes.get(uid);
    if (t === undefined || t.schedulableReported) return undefined;
    const created = creationTimestamp === undefined ? NaN : new Date(creationTimestamp).getTime();
    if (!Number.isFinite(created) || created < this.since) return undefined;
    t.schedulableReported = true;
    return Math.max(0, now - Math.max(created, t.assignedAt)) / 1000;
  }

  forget(uid: string): void {
    this.nodes.delete(uid);
  }

  get size(): number {
    return this.nodes.size;
  }
}
