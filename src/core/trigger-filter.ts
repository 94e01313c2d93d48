// Watch-mode trigger logic (SPEC §5 R40–R42, §6(e) R52): which node updates
// cause a reconcile. Handlers only decide *whether* to enqueue.
import { CidrParseError, parseCIDRCached } from './cidr.ts';
import { currentNetworkCondition, type ConditionTarget } from './condition.ts';
import type { ConditionExpectations } from './expectations.ts';
import type { Node } from './types.ts';

export type Trigger = 'periodic' | 'node_change' | 'condition_drift' | 'retry';

/** R45: coalesced triggers are labelled by the first present of these. */
export const TRIGGER_PRIORITY: readonly Trigger[] = ['node_change', 'condition_drift', 'retry', 'periodic'];

function podCIDRSet(n: Node): Set<string> {
  const out = new Set<string>();
  for (const t of n.spec?.podCIDRs ?? []) {
    const c = parseCIDRCached(t);
    out.add(c instanceof CidrParseError ? `invalid:${t}` : c.canonical);
  }
  return out;
}

function sameSet(a: Set<string>, b: Set<string>): boolean {
  if (a.size !== b.size) return false;
  for (const x of a) if (!b.has(x)) return false;
  return true;
}

function addressMultiset(n: Node): string[] {
  return (n.status?.addresses ?? []).map((a) => `${a.type}\u0000${a.address}`).sort();
}

function sameList(a: readonly string[], b: readonly string[]): boolean {
  return a.length === b.length && a.every((x, i) => x === b[i]);
}

function conditionValue(n: Node): string {
  const c = currentNetworkCondition(n);
  return c === undefined ? '<absent>' : `${c.status}/${c.reason ?? ''}`;
}

function targetValue(t: ConditionTarget): string {
  return `${t.status}/${t.reason}`;
}

/**
 * R52: drift iff the node has an expectation and the new (status, reason)
 * differs from both the expectation and the old object's value.
 */
export function conditionDrifted(oldNode: Node, newNode: Node, expectations: ConditionExpectations): boolean {
  const uid = newNode.metadata?.uid;
  const expected = uid === undefined ? undefined : expectations.get(uid);
  if (!expected) return false;
  const now = conditionValue(newNode);
  return now !== targetValue(expected) && now !== conditionValue(oldNode);
}

/** R41: the trigger an update raises, or undefined (R42: nothing else triggers). */
export function nodeUpdateTrigger(
  oldNode: Node,
  newNode: Node,
  expectations: ConditionExpectations,
): Trigger | undefined {
  if (oldNode.metadata?.resourceVersion === newNode.metadata?.resourceVersion) return 'periodic';
  if (oldNode.metadata?.uid !== newNode.metadata?.uid) return 'node_change';
  if (!sameSet(podCIDRSet(oldNode), podCIDRSet(newNode))) return 'node_change';
  if (!sameList(addressMultiset(oldNode), addressMultiset(newNode))) return 'node_change';
  if (conditionDrifted(oldNode, newNode, expectations)) return 'condition_drift';
  return undefined;
}

export function labelOf(triggers: ReadonlySet<Trigger>): Trigger {
  return TRIGGER_PRIORITY.find((t) => triggers.has(t)) ?? 'periodic';
}
