// The RouteController on the src/kube adapters, wired as test/integration's
// startController does, plus the two knobs fault tests need and it lacks: the
// apiserver client's request timeout (a request on a silently dropped
// connection would otherwise hang 60 s) and a bounded logger (a 30-minute soak
// must not measure its own log buffer as memory growth).
import { Registry } from 'prom-client';
import type { LogFields, Logger, LogRecord } from '../../src/core/ports.ts';
import { RouteControllerMetrics } from '../../src/controller/metrics.ts';
import type { RouteControllerOptions } from '../../src/controller/options.ts';
import type { ReconcileReport } from '../../src/controller/reconcile.ts';
import { RouteController } from '../../src/controller/route-controller.ts';
import {
  createKubeClient,
  KubeEventRecorder,
  KubeNodeStatusWriter,
  kubeNodeListWatch,
  NodeInformer,
  type KubeClient,
  type NodeInformerOptions,
} from '../../src/kube/index.ts';
import type { NodeListWatch } from '../../src/kube/node-transport.ts';
import { CLUSTER_CIDRS } from '../integration/kube-helpers.ts';
import type { AuditedMemoryRoutes } from './support.ts';
import { testRandom } from '../support/seed.ts';

/** Keeps the last `limit` lines and counts every level; `v(n)` up to `verbosity`. */
export class RingLogger implements Logger {
  readonly records: LogRecord[] = [];
  readonly counts = { info: 0, warn: 0, error: 0 };
  private readonly limit: number;
  private readonly verbosity: number;

  constructor(limit = 100_000, verbosity = 4) {
    this.limit = limit;
    this.verbosity = verbosity;
  }

  private push(level: LogRecord['level'], v: number, msg: string, fields?: LogFields): void {
    this.counts[level]++;
    this.records.push({ level, v, msg, fields });
    if (this.records.length > this.limit) this.records.splice(0, this.records.length - this.limit);
  }

  info(msg: string, fields?: LogFields): void {
    this.push('info', 0, msg, fields);
  }
  warn(msg: string, fields?: LogFields): void {
    this.push('warn', 0, msg, fields);
  }
  error(msg: string, fields?: LogFields): void {
    this.push('error', 0, msg, fields);
  }
  v(level: number): { enabled: boolean; info(msg: string, fields?: LogFields): void } {
    const enabled = level <= this.verbosity;
    return {
      enabled,
      info: (msg, fields) => {
        if (enabled) this.push('info', level, msg, fields);
      },
    };
  }

  messages(): string[] {
    return this.records.map((r) => r.msg);
  }

  tail(n = 40): string {
    return this.records
      .slice(-n)
      .map((r) => `${r.level} ${r.msg}${r.fields ? ` ${JSON.stringify(r.fields)}` : ''}`)
      .join('\n');
  }
}

export interface FaultControllerOptions {
  readonly kubeconfig: string;
  readonly watch: boolean;
  readonly cloud: AuditedMemoryRoutes;
  readonly clusterCIDRs?: readonly string[];
  readonly informer?: Partial<NodeInformerOptions>;
  readonly controller?: Partial<RouteControllerOptions>;
  /** Inactivity timeout of the apiserver client's non-watch requests (default 5 s). */
  readonly requestTimeoutMs?: number;
  readonly logger?: RingLogger;
}

export interface FaultController {
  readonly controller: RouteController;
  readonly informer: NodeInformer;
  /**
   * The informer's WATCH in flight: how long ago it was sent and how long until its
   * timeoutSeconds closes it; undefined between two watches. A test that breaks "the watch
   * connection" acts when one is surely open, not in the gap between two.
   */
  currentWatch(): { readonly openMs: number; readonly remainingMs: number } | undefined;
  readonly client: KubeClient;
  readonly cloud: AuditedMemoryRoutes;
  readonly logger: RingLogger;
  readonly metrics: RouteControllerMetrics;
  readonly reports: ReconcileReport[];
  /** Informer restarts by reason, from the metric. */
  restarts(reason: string): Promise<number>;
  stop(): Promise<void>;
}

export function startFaultController(o: FaultControllerOptions): FaultController {
  const client = createKubeClient({
    kubeconfig: o.kubeconfig,
    qps: 50,
    burst: 100,
    requestTimeoutMs: o.requestTimeoutMs ?? 5_000,
  });
  const logger = o.logger ?? new RingLogger();
  const metrics = new RouteControllerMetrics(new Registry());
  const inner = kubeNodeListWatch(client);
  let open: { readonly startedAt: number; readonly timeoutSeconds: number } | undefined;
  const listWatch: NodeListWatch = {
    list: (p, signal, onItem) => inner.list(p, signal, onItem),
    resetConnections: () => inner.resetConnections?.(),
    async watch(p, signal, onEvent) {
      const w = { startedAt: Date.now(), timeoutSeconds: p.timeoutSeconds };
      open = w;
      try {
        await inner.watch(p, signal, onEvent);
      } finally {
        if (open === w) open = undefined;
      }
    },
  };
  const informer = new NodeInformer({
    listWatch,
    logger,
    metrics,
    random: testRandom('informer'),
    ...o.informer,
  });
  const recorder = new KubeEventRecorder({ client, logger, retryDelayMs: 500 });
  const reports: ReconcileReport[] = [];
  const controller = new RouteController({
    routes: o.cloud,
    nodes: informer,
    statusWriter: new KubeNodeStatusWriter(client),
    recorder,
    logger,
    metrics,
    clusterName: 'faults',
    clusterCIDRs: o.clusterCIDRs ?? CLUSTER_CIDRS,
    watchBasedReconciliation: o.watch,
    minReconcileIntervalMs: 200,
    routeReconciliationPeriodMs: 500,
    routeResyncPeriodMs: 0,
    // ROUTE_CACHE=false runs the suite with the watch-mode route cache off (R65–R67).
    routeCache: process.env['ROUTE_CACHE'] !== 'false',
    random: testRandom('controller'),
    onReconcile: (r) => {
      reports.push(r);
      if (reports.length > 10_000) reports.splice(0, 5_000);
    },
    ...o.controller,
  });
  const stopper = new AbortController();
  informer.start();
  const running = controller.run(stopper.signal);
  return {
    controller,
    informer,
    currentWatch() {
      if (open === undefined) return undefined;
      const openMs = Date.now() - open.startedAt;
      return { openMs, remainingMs: open.timeoutSeconds * 1000 - openMs };
    },
    client,
    cloud: o.cloud,
    logger,
    metrics,
    reports,
    async restarts(reason) {
      const m = await metrics.informerRestarts.get();
      return m.values.find((v) => v.labels['reason'] === reason)?.value ?? 0;
    },
    async stop() {
      stopper.abort();
      await running;
      await informer.stop();
      await recorder.close();
      client.close();
    },
  };
}
