// The NetworkUnavailable condition (SPEC §3.4, R28–R31).
import type { NodePlan, ReconcilePlan } from './plan.ts';
import type { Node, NodeCondition } from './types.ts';

export const NETWORK_UNAVAILABLE = 'NetworkUnavailable';

export interface ConditionTarget {
  readonly status: 'True' | 'False';
  readonly reason: 'RouteCreated' | 'NoRouteCreated';
}

export const ROUTE_CREATED: ConditionTarget = { status: 'False', reason: 'RouteCreated' };
export const NO_ROUTE_CREATED: ConditionTarget = { status: 'True', reason: 'NoRouteCreated' };

/** R28: every pod CIDR ended `keep`; a node tracked only via routes has none. */
export function routesCreated(np: NodePlan): boolean {
  return np.podCIDRs.length > 0 && np.podCIDRs.every((pc) => pc.action === 'keep');
}

export function conditionTarget(created: boolean): ConditionTarget {
  return created ? ROUTE_CREATED : NO_ROUTE_CREATED;
}

export function currentNetworkCondition(node: Node): NodeCondition | undefined {
  return node.status?.conditions?.find((c) => c.type === NETWORK_UNAVAILABLE);
}

/** R30: only status and reason count; message and times are ignored. */
export function conditionSatisfied(node: Node, target: ConditionTarget): boolean {
  const c = currentNetworkCondition(node);
  return c !== undefined && c.status === target.status && c.reason === target.reason;
}

/** R29/R31: the condition as patched; both times are `now`, as upstream writes them. */
export function networkCondition(target: ConditionTarget, now: Date): NodeCondition {
  return {
    type: NETWORK_UNAVAILABLE,
    status: target.status,
    reason: target.reason,
    message:
      target.status === 'False'
        ? 'RouteController created a route'
        : 'RouteController failed to create a route',
    lastTransitionTime: now,
    lastHeartbeatTime: now,
  };
}

export interface PlannedPatch {
  readonly node: NodePlan;
  readonly target: ConditionTarget;
}

/** R53: the condition patches a dry run plans, as if every create succeeds. */
export function dryRunConditionPatches(plan: ReconcilePlan): PlannedPatch[] {
  const out: PlannedPatch[] = [];
  for (const np of plan.nodes) {
    const created =
      np.podCIDRs.length > 0 && np.podCIDRs.every((pc) => pc.action !== 'invalid' && pc.action !== 'blocked');
    const target = conditionTarget(created);
    if (!conditionSatisfied(np.node, target)) out.push({ node: np, target });
  }
  return out;
}
