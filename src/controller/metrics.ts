// Prometheus metrics of SPEC §6(d) (R51). The library user passes a registry;
// names follow upstream and client-go's workqueue metrics.
import { createRequire } from 'node:module';
import type * as PromClientModule from 'prom-client';
import type { Counter, Gauge, Histogram, Registry } from 'prom-client';
import type { CallOutcome } from '../core/errors.ts';

type PromClient = typeof PromClientModule;

// prom-client (about 20 MB resident) is required on first use, not on import:
// a library user without a registry never loads it. It is CommonJS, so an ESM
// import elsewhere shares this instance (and its Registry class).
let promClient: PromClient | undefined;
function loadPromClient(): PromClient {
  promClient ??= createRequire(import.meta.url)('prom-client') as PromClient;
  return promClient;
}

export type Trigger = 'periodic' | 'node_change' | 'condition_drift' | 'retry';
export type Outcome = 'changed' | 'noop' | 'error' | 'dry_run';
export type CloudOperation = 'list' | 'create' | 'delete' | 'apply';

const QUEUE = 'Routes';

function exp(start: number, factor: number, count: number): number[] {
  return Array.from({ length: count }, (_, i) => start * factor ** i);
}

export interface QueueProbe {
  /** Seconds the current reconcile has been running, 0 if none. */
  runningSeconds(): number;
}

export class RouteControllerMetrics {
  readonly routeSync: Counter<'trigger' | 'outcome'>;
  readonly corrections: Counter<'operation'>;
  readonly creationLatency: Histogram<'ip_family'>;
  readonly schedulableLatency: Histogram;
  readonly cloudCalls: Counter<'operation' | 'outcome'>;
  readonly cloudCallDuration: Histogram<'operation'>;
  readonly cloudWriteWait: Counter;
  readonly cloudWriteBudget: Gauge;
  readonly cacheInvalidations: Counter<'reason'>;
  readonly cachedReconciles: Counter;
  readonly routeTableRoutes: Gauge<'owner'>;
  readonly routeTableLimit: Gauge;
  /** R123: route changes in the cluster CIDRs that were not this controller's. */
  readonly foreignRouteChanges: Counter<'change'>;
  /** R123: 1 while another writer is suspected. */
  readonly secondWriterSuspected: Gauge;
  readonly reconcileDuration: Histogram<'trigger'>;
  readonly lastSuccess: Gauge;
  readonly queueDepth: Gauge<'name'>;
  readonly queueAdds: Counter<'name'>;
  readonly queueDuration: Histogram<'name'>;
  readonly workDuration: Histogram<'name'>;
  readonly queueRetries: Counter<'name'>;
  readonly unfinishedWork: Gauge<'name'>;
  readonly longestRunning: Gauge<'name'>;
  readonly informerRestarts: Counter<'reason'>;
  readonly informerLastEvent: Gauge;
  readonly runningControllers: Gauge<'name'>;
  readonly leaderStatus: Gauge<'name'>;
  private probe: QueueProbe | undefined;

  constructor(registry: Registry) {
    const { Counter, Gauge, Histogram } = loadPromClient();
    const registers = [registry];
    this.routeSync = new Counter({
      name: 'route_controller_route_sync_total',
      help: 'Finished route reconciles by trigger and outcome.',
      labelNames: ['trigger', 'outcome'],
      registers,
    });
    this.corrections = new Counter({
      name: 'route_controller_route_corrections_total',
      help: 'Routes changed by watch-mode periodic reconciles (event filter misses).',
      labelNames: ['operation'],
      registers,
    });
    this.creationLatency = new Histogram({
      name: 'route_controller_route_creation_latency_seconds',
      help: 'First sight of a (node UID, pod CIDR) in the cache until its route was created.',
      labelNames: ['ip_family'],
      buckets: [0.1, 0.25, 0.5, 1, 2.5, 5, 10, 20, 30, 60, 120, 300, 600, 1200, 1800, 3600],
      registers,
    });
    this.schedulableLatency = new Histogram({
      name: 'route_controller_node_schedulable_latency_seconds',
      help: 'Node created (or its pod CIDRs first seen, when later) until its NetworkUnavailable=False was written (R107).',
      buckets: [0.1, 0.25, 0.5, 1, 2.5, 5, 10, 20, 30, 60, 120, 300, 600, 1200, 1800, 3600],
      registers,
    });
    this.cloudCalls = new Counter({
      name: 'route_controller_cloud_api_calls_total',
      help: 'Cloud provider calls by operation and outcome.',
      labelNames: ['operation', 'outcome'],
      registers,
    });
    this.cloudCallDuration = new Histogram({
      name: 'route_controller_cloud_api_call_duration_seconds',
      help: 'Latency of cloud provider calls.',
      labelNames: ['operation'],
      buckets: exp(0.005, 2, 16),
      registers,
    });
    this.cloudWriteWait = new Counter({
      name: 'route_controller_cloud_write_wait_seconds_total',
      help: 'Time route writes waited for the client-side cloud write budget (--cloud-write-qps).',
      registers,
    });
    this.cloudWriteBudget = new Gauge({
      name: 'route_controller_cloud_write_budget_qps',
      help: 'Current cloud write budget in writes per second (R68–R70); absent when unpaced.',
      registers,
    });
    this.cacheInvalidations = new Counter({
      name: 'route_controller_route_cache_invalidations_total',
      help: 'Route cache drops that force the next reconcile to list (R65).',
      labelNames: ['reason'],
      registers,
    });
    this.cachedReconciles = new Counter({
      name: 'route_controller_cached_reconciles_total',
      help: 'Watch-mode reconciles that planned against the route cache instead of listing (R66).',
      registers,
    });
    this.routeTableRoutes = new Gauge({
      name: 'route_controller_route_table_routes',
      help: "Routes in the cloud's route table (or quota) that count against its limit, by owner: this cluster's managed routes or others (R116).",
      labelNames: ['owner'],
      registers,
    });
    this.routeTableLimit = new Gauge({
      name: 'route_controller_route_table_route_limit',
      help: "Routes the cloud's route table (or quota) allows (R116); 0 when the provider cannot tell.",
      registers,
    });
    this.foreignRouteChanges = new Counter({
      name: 'route_controller_foreign_route_changes_total',
      help: 'Routes in the cluster CIDRs that someone else created, deleted (of a live node) or repointed, seen by a list (R123).',
      labelNames: ['change'],
      registers,
    });
    this.secondWriterSuspected = new Gauge({
      name: 'route_controller_second_writer_suspected',
      help: 'Whether another writer changes the cluster routes: 1 after two listings with foreign changes within an hour (R123).',
      registers,
    });
    this.reconcileDuration = new Histogram({
      name: 'route_controller_reconcile_duration_seconds',
      help: 'Duration of route reconciles.',
      labelNames: ['trigger'],
      buckets: exp(0.01, 2, 16),
      registers,
    });
    this.lastSuccess = new Gauge({
      name: 'route_controller_last_successful_reconcile_timestamp_seconds',
      help: 'Unix time of the last reconcile with outcome changed or noop.',
      registers,
    });
    this.queueDepth = new Gauge({
      name: 'workqueue_depth',
      help: 'Current depth of workqueue',
      labelNames: ['name'],
      registers,
    });
    this.queueAdds = new Counter({
      name: 'workqueue_adds_total',
      help: 'Total number of adds handled by workqueue',
      labelNames: ['name'],
      registers,
    });
    this.queueDuration = new Histogram({
      name: 'workqueue_queue_duration_seconds',
      help: 'How long in seconds an item stays in workqueue before being requested.',
      labelNames: ['name'],
      buckets: exp(1e-8, 10, 11),
      registers,
    });
    this.workDuration = new Histogram({
      name: 'workqueue_work_duration_seconds',
      help: 'How long in seconds processing an item from workqueue takes.',
      labelNames: ['name'],
      buckets: exp(1e-8, 10, 11),
      registers,
    });
    this.queueRetries = new Counter({
      name: 'workqueue_retries_total',
      help: 'Total number of retries handled by workqueue',
      labelNames: ['name'],
      registers,
    });
    // prom-client calls collect() with the gauge as `this`; the probe lives on this object.
    const probe = (): number => this.probe?.runningSeconds() ?? 0;
    this.unfinishedWork = new Gauge({
      name: 'workqueue_unfinished_work_seconds',
      help: 'How many seconds of work has been done that is in progress.',
      labelNames: ['name'],
      registers,
      collect() {
        this.set({ name: QUEUE }, probe());
      },
    });
    this.longestRunning = new Gauge({
      name: 'workqueue_longest_running_processor_seconds',
      help: 'How many seconds has the longest running processor for workqueue been running.',
      labelNames: ['name'],
      registers,
      collect() {
        this.set({ name: QUEUE }, probe());
      },
    });
    this.informerRestarts = new Counter({
      name: 'route_controller_node_informer_restarts_total',
      help: 'Node informer list/watch restarts by reason.',
      labelNames: ['reason'],
      registers,
    });
    this.informerLastEvent = new Gauge({
      name: 'route_controller_node_informer_last_event_timestamp_seconds',
      help: 'Unix time of the last event or bookmark received by the node informer.',
      registers,
    });
    this.runningControllers = new Gauge({
      name: 'running_managed_controllers',
      help: 'Indicates where instances of a controller are currently running',
      labelNames: ['name'],
      registers,
    });
    this.leaderStatus = new Gauge({
      name: 'leader_election_master_status',
      help: 'Gauge of if the reporting system is master of the relevant lease, 0 indicates backup, 1 indicates master.',
      labelNames: ['name'],
      registers,
    });
  }

  setQueueProbe(probe: QueueProbe | undefined): void {
    this.probe = probe;
  }

  cloudCall(operation: CloudOperation, outcome: CallOutcome, seconds: number): void {
    this.cloudCalls.inc({ operation, outcome });
    this.cloudCallDuration.observe({ operation }, seconds);
  }

  static readonly queueName = QUEUE;
}
