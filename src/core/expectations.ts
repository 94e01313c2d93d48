// R33: per node UID, the NetworkUnavailable (status, reason) this controller
// confirmed or is about to write, so the watch filter tells its own echo from
// someone else's write (R52).
import type { ConditionTarget } from './condition.ts';

export class ConditionExpectations {
  private readonly byUid = new Map<string, ConditionTarget>();

  get(uid: string): ConditionTarget | undefined {
    return this.byUid.get(uid);
  }

  set(uid: string, target: ConditionTarget): void {
    this.byUid.set(uid, target);
  }

  delete(uid: string): void {
    this.byUid.delete(uid);
  }

  get size(): number {
    return this.byUid.size;
  }
}
