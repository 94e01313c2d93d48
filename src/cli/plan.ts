// `cloud-route-controller plan`: one dry-run reconcile (R53) against the real
// cluster and cloud after the node cache synced; prints what `run` would do.
import { RouteController } from '../controller/route-controller.ts';
import type { ReconcileReport } from '../controller/reconcile.ts';
import type { RoomView } from '../controller/route-table-room.ts';
import { dryRunConditionPatches } from '../core/condition.ts';
import { errorMessage } from '../core/errors.ts';
import type { ReconcilePlan } from '../core/plan.ts';
import { NodeInformer } from '../kube/index.ts';
import { idleReason, type DaemonFlags } from './flags.ts';
import { printErrors, type CliIO } from './io.ts';
import { prepare, refuseWrites } from './setup.ts';

/** How long `plan` waits for the initial node list. */
const SYNC_TIMEOUT_MS = 120_000;

/** The condition patches a dry run plans: as if every create succeeds (R53). */
function plannedPatches(plan: ReconcilePlan): { node: string; status: string; reason: string }[] {
  return dryRunConditionPatches(plan).map((p) => ({ node: p.node.name, ...p.target }));
}

function section(title: string, lines: readonly string[]): string {
  return `${title} (${lines.length}):\n${lines.length === 0 ? '  none\n' : lines.map((l) => `  ${l}\n`).join('')}`;
}

/** R119: the room left in the route table now and after this plan (deletes run, every create succeeds). */
export function formatRoom(room: RoomView | undefined, plan: ReconcilePlan): string {
  if (room === undefined)
    return "Route table room: unknown (the cloud provider does not tell its route table's limit)\n";
  const after = room.limit - room.used - plan.creates.length + plan.deletes.length;
  const full = after < 0 ? ` (${-after} create(s) would be refused: ${room.raise})` : '';
  return (
    `Route table room: ${room.container} holds ${room.used} of its limit of ${room.limit} routes ` +
    `(${room.cluster} of this cluster, ${room.others} others): ${room.left} left, ${Math.max(0, after)} after this plan${full}\n`
  );
}

/** The human-readable plan printed on stdout. */
export function formatPlan(
  flags: DaemonFlags,
  nodeCount: number,
  report: ReconcileReport,
  room?: RoomView,
  rollbackHazards: readonly string[] = [],
): string {
  const plan = report.plan;
  if (!plan) return 'No plan.\n';
  const creates = plan.creates.map(
    (c) =>
      `+ ${c.route.destinationCIDR} -> ${c.node.name} (name hint ${c.nameHint})` +
      (c.cidr.outsideClusterCIDRs ? ' [outside the cluster CIDRs: never deleted by this controller]' : ''),
  );
  const deletes = plan.deletes.map(
    (d) =>
      `- ${d.route.destinationCIDR} -> ${d.route.targetNode === '' ? '(no node)' : d.route.targetNode}` +
      `${d.route.name === '' ? '' : ` (route ${d.route.name})`}, reason: ${d.reason}`,
  );
  const patches = plannedPatches(plan).map(
    (p) => `~ node ${p.node}: NetworkUnavailable=${p.status} (${p.reason})`,
  );
  const events: string[] = [];
  for (const np of plan.nodes) {
    for (const pc of np.podCIDRs) {
      if (pc.action === 'invalid' || pc.action === 'blocked') {
        events.push(
          `! FailedToCreateRoute on node ${np.name}: pod CIDR ${pc.podCIDR} (${pc.action}: ${pc.detail ?? ''})`,
        );
      } else if (pc.outsideClusterCIDRs && (pc.action === 'add' || pc.action === 'update')) {
        events.push(`! ClusterCIDRMisconfigured on node ${np.name}: pod CIDR ${pc.podCIDR}`);
      }
    }
  }
  const ignored = plan.unparsableRoutes.map(
    (u) => `? ${u.route.name} ${u.route.destinationCIDR}: ${u.error}`,
  );
  return (
    `Plan for cluster "${flags.clusterName}" (cluster CIDRs ${flags.clusterCIDRs.join(', ')}), ` +
    `cloud provider ${flags.cloudProvider}, ${nodeCount} node(s) in the cache:\n\n` +
    section('Routes to create', creates) +
    section('Routes to delete', deletes) +
    section('Node conditions to patch', patches) +
    section('Warning events', events) +
    (ignored.length > 0 ? section('Routes ignored (unparsable destination)', ignored) : '') +
    (rollbackHazards.length > 0
      ? section(
          'Rollback hazards',
          rollbackHazards.map((h) => `! ${h}`),
        )
      : '') +
    `\n${formatRoom(room, plan)}` +
    `\nNothing was changed. Run \`cloud-route-controller run\` with the same flags to apply.\n`
  );
}

export async function runPlan(argv: readonly string[], io: CliIO): Promise<number> {
  const setup = await prepare('plan', argv, io);
  if (typeof setup === 'number') return setup;
  const { flags, logger, kube, routes, lister } = setup;
  if (!flags.routesEnabled || !routes || !kube) {
    io.stdout(`${idleReason(flags) ?? 'Routes are not configured'}: nothing to plan.\n`);
    return 0;
  }
  const informer = new NodeInformer({
    client: kube,
    listContentType: flags.kubeApiContentType,
    logger: logger.named('reflector'),
  });
  lister.bind(informer);
  const abort = new AbortController();
  const unsubscribe = io.onSignal(() => abort.abort(new Error('interrupted')));
  const timeout = AbortSignal.timeout(SYNC_TIMEOUT_MS);
  try {
    informer.start();
    if (!(await informer.waitForSync(AbortSignal.any([abort.signal, timeout])))) {
      printErrors(io, [
        abort.signal.aborted
          ? 'interrupted before the node cache synced'
          : `node cache not synced after ${SYNC_TIMEOUT_MS / 1000}s (check --kubeconfig and RBAC: nodes list, watch)`,
      ]);
      return 1;
    }
    const controller = new RouteController({
      routes,
      nodes: informer,
      statusWriter: refuseWrites,
      logger: logger.named('route_controller'),
      clusterCIDRs: flags.clusterCIDRs,
      clusterName: flags.clusterName,
      dryRun: true,
    });
    const report = await controller.reconcileOnce('node_change', abort.signal);
    if (report.outcome === 'error') {
      printErrors(io, [report.error ?? 'reconcile failed']);
      return 1;
    }
    const hazards = setup.provider?.rollbackHazards?.(flags.clusterCIDRs) ?? [];
    io.stdout(formatPlan(flags, informer.list().length, report, controller.routeTableRoom(), hazards));
    return 0;
  } catch (err) {
    printErrors(io, [errorMessage(err)]);
    return 1;
  } finally {
    unsubscribe();
    await informer.stop();
    kube.close();
  }
}
