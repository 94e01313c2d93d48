/**
 * "Once per node UID" memory for logs and Events (R16, E3), dropped when the
 * node is deleted so that node churn does not grow it forever.
 */
export class OncePerNode {
  private readonly seen = new Map<string, Set<string>>();

  /** True the first time (uid, key) is seen. */
  first(uid: string, key: string): boolean {
    let s = this.seen.get(uid);
    if (!s) this.seen.set(uid, (s = new Set()));
    if (s.has(key)) return false;
    s.add(key);
    return true;
  }

  forget(uid: string): void {
    this.seen.delete(uid);
  }

  get size(): number {
    return this.seen.size;
  }
}
