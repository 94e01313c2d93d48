// Logs and Events about the plan itself (R14, R16, R17, R21, E3, R35 -v=4, R53).
import type { ConditionTarget } from '../core/condition.ts';
import type { Cidr } from '../core/cidr.ts';
import type { NodePlan, ReconcilePlan } from '../core/plan.ts';
import type { EventRecorder, Logger } from '../core/ports.ts';
import type { OncePerNode } from './once-per-node.ts';

interface ReportDeps {
  readonly recorder: EventRecorder;
  readonly logger: Logger;
  readonly clusterCIDRs: readonly Cidr[];
  readonly reported: OncePerNode;
  readonly dryRun: boolean;
}

export function reportPlanProblems(plan: ReconcilePlan, deps: ReportDeps): void {
  const { logger, reported } = deps;
  // In dry-run no Event is written (R53); the plan log names them instead.
  const recorder: EventRecorder = deps.dryRun ? { event: () => {} } : deps.recorder;
  for (const u of plan.unparsableRoutes) {
    logger.warn(`Ignoring route ${u.route.name}, unparsable CIDR: ${u.error}`);
  }
  for (const np of plan.nodes) {
    const ref = { name: np.name, uid: np.uid };
    if (np.duplicates.length > 0 && reported.first(np.uid, 'duplicates')) {
      logger.warn(`node ${np.name} has duplicate pod CIDRs ${np.duplicates.join(', ')}; using each once`);
    }
    for (const pc of np.podCIDRs) {
      if (pc.action === 'invalid') {
        const msg = `invalid pod CIDR "${pc.podCIDR}" on node ${np.name}: ${pc.detail}`;
        logger.error(msg);
        recorder.event(ref, 'Warning', 'FailedToCreateRoute', msg);
      } else if (pc.action === 'blocked') {
        const msg = `pod CIDR ${pc.podCIDR} is also assigned to node ${pc.detail}; route not created`;
        logger.error(`node ${np.name}: ${msg}`);
        recorder.event(ref, 'Warning', 'FailedToCreateRoute', msg);
      } else if (pc.outsideClusterCIDRs && reported.first(np.uid, `outside/${pc.canonical}`)) {
        const msg = `pod CIDR ${pc.podCIDR} of node ${np.name} is outside the cluster CIDRs ${deps.clusterCIDRs
          .map((c) => c.canonical)
          .join(',')}; its route is created but never deleted by this controller`;
        logger.warn(msg);
        recorder.event(ref, 'Warning', 'ClusterCIDRMisconfigured', msg);
      }
    }
  }
}

export function logNodeActions(plan: ReconcilePlan, logger: Logger): void {
  const v4 = logger.v(4);
  if (!v4.enabled) return;
  for (const np of plan.nodes) {
    for (const pc of np.podCIDRs)
      v4.info('node route action', { node: np.name, podCIDR: pc.podCIDR, action: pc.action });
  }
}

export function logDryRunPlan(
  plan: ReconcilePlan,
  patches: readonly { node: NodePlan; target: ConditionTarget }[],
  logger: Logger,
): void {
  const events: string[] = [];
  for (const c of plan.creates) {
    if (c.cidr.outsideClusterCIDRs) events.push(`ClusterCIDRMisconfigured ${c.node.name} ${c.cidr.podCIDR}`);
  }
  for (const np of plan.nodes) {
    for (const pc of np.podCIDRs) {
      if (pc.action === 'invalid' || pc.action === 'blocked')
        events.push(`FailedToCreateRoute ${np.name} ${pc.podCIDR}`);
    }
  }
  logger.info('Dry-run plan', {
    creates: plan.creates.map((c) => ({
      node: c.node.name,
      cidr: c.route.destinationCIDR,
      hint: c.nameHint,
    })),
    deletes: plan.deletes.map((d) => ({
      route: d.route.name,
      cidr: d.route.destinationCIDR,
      targetNode: d.route.targetNode,
      reason: d.reason,
    })),
    conditionPatches: patches.map((p) => ({
      node: p.node.name,
      status: p.target.status,
      reason: p.target.reason,
    })),
    events,
  });
}
