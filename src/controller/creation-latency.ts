// route_controller_route_creation_latency_seconds (R51): from the first sight
// of a (node UID, pod CIDR) pair in the cache to its route being created, once
// per pair.
import { parseCIDRCached, CidrParseError } from '../core/cidr.ts';
import type { Node } from '../core/types.ts';

const DONE = -1;

export class CreationLatencyTracker {
  private readonly firstSeen = new Map<string, Map<string, number>>();

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
    let m = this.firstSeen.get(uid);
    if (!m) this.firstSeen.set(uid, (m = new Map()));
    for (const c of canonicals) if (!m.has(c)) m.set(c, now);
  }

  /** Seconds since first sight, or undefined if already reported (or never seen). */
  created(uid: string, canonical: string, now: number): number | undefined {
    const m = this.firstSeen.get(uid);
    const t = m?.get(canonical);
    if (m === undefined || t === undefined || t === DONE) return undefined;
    m.set(canonical, DONE);
    return Math.max(0, now - t) / 1000;
  }

  /** The route already existed: nothing to measure for this pair. */
  kept(uid: string, canonical: string): void {
    this.firstSeen.get(uid)?.set(canonical, DONE);
  }

  forget(uid: string): void {
    this.firstSeen.delete(uid);
  }

  get size(): number {
    return this.firstSeen.size;
  }
}
