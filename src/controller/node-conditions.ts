// A reconcile's NetworkUnavailable writes (R28–R33, R106–R107): a node whose
// routes all exist gets RouteCreated as soon as that is known, while the rest of
// the plan is still being written; every other node after all route operations
// settled, as upstream writes them all.
import type { Clock } from '../core/clock.ts';
import {
  conditionSatisfied,
  networkCondition,
  NO_ROUTE_CREATED,
  routesCreated,
  ROUTE_CREATED,
  type ConditionTarget,
} from '../core/condition.ts';
import type { ConditionExpectations } from '../core/expectations.ts';
import type { NodePlan, ReconcilePlan } from '../core/plan.ts';
import type { Logger, NodeStatusWriter } from '../core/ports.ts';
import { Semaphore } from '../core/semaphore.ts';
import { writeCondition } from './condition-writer.ts';
import type { CreationLatencyTracker } from './creation-latency.ts';
import type { RouteControllerMetrics } from './metrics.ts';

/** R32: writes in flight at once; the kube client's QPS limit paces them further. */
const CONDITION_WRITERS = 16;

export interface NodeConditionDeps {
  readonly statusWriter: NodeStatusWriter;
  readonly logger: Logger;
  readonly clock: Clock;
  readonly random: () => number;
  readonly expectations: ConditionExpectations;
  readonly latency: CreationLatencyTracker;
  readonly metrics: RouteControllerMetrics | undefined;
}

export interface ConditionResult {
  readonly written: number;
  readonly failed: number;
  /** Nodes whose write failed (R105 plans them again). */
  readonly failedNodes: readonly string[];
}

export class NodeConditions {
  private readonly plan: ReconcilePlan;
  private readonly deps: NodeConditionDeps;
  private readonly signal: AbortSignal;
  private readonly pool = new Semaphore(CONDITION_WRITERS);
  private readonly writes: Promise<void>[] = [];
  private written = 0;
  private readonly failedNodes: string[] = [];

  constructor(plan: ReconcilePlan, deps: NodeConditionDeps, signal: AbortSignal) {
    this.plan = plan;
    this.deps = deps;
    this.signal = signal;
  }

  /** R106: nodes whose routes all exist already need no write to wait for. */
  start(): void {
    for (const np of this.plan.nodes) this.routed(np);
  }

  /**
   * R106: call after one of the node's creates succeeded (its pod CIDR now `keep`).
   * A node becomes routesCreated once, with its last create (or is so at start()),
   * so each routed node is written here exactly once, and finish() skips it.
   */
  routed(np: NodePlan): void {
    if (routesCreated(np)) this.writes.push(this.write(np, ROUTE_CREATED));
  }

  /** R28: every other node, once all route operations settled; waits for the early writes too. */
  async finish(): Promise<ConditionResult> {
    for (const np of this.plan.nodes) {
      if (routesCreated(np)) continue; // written by routed()
      if (np.podCIDRs.length === 0) {
        this.deps.logger.info(
          `node ${np.name} has no routes assigned to it. NodeNetworkUnavailable will be set to true`,
        );
      }
      this.writes.push(this.write(np, NO_ROUTE_CREATED));
    }
    await Promise.all(this.writes);
    return { written: this.written, failed: this.failedNodes.length, failedNodes: this.failedNodes };
  }

  private async write(np: NodePlan, target: ConditionTarget): Promise<void> {
    // R33: the expectation is recorded before the write, so its echo is recognised.
    this.deps.expectations.set(np.uid, target);
    if (conditionSatisfied(np.node, target)) return;
    await this.pool.with(async () => {
      if (this.signal.aborted) return; // R63: no condition writes after the abort
      const { deps } = this;
      const r = await writeCondition(
        np,
        networkCondition(target, new Date(deps.clock.now())),
        deps,
        this.signal,
      );
      if (r === 'written') {
        this.written++;
        if (target.status !== 'False') return;
        const now = deps.clock.now();
        const secs = deps.latency.schedulable(np.uid, np.node.metadata?.creationTimestamp, now);
        if (secs !== undefined) deps.metrics?.schedulableLatency.observe(secs);
      } else if (r === 'failed') this.failedNodes.push(np.name);
    });
  }
}
