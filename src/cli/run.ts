// `cloud-route-controller run`: the daemon (SPEC §7). Every replica runs the
// node cache and the HTTP endpoints; only the Lease holder reconciles (R61).
import { collectDefaultMetrics, Registry } from 'prom-client';
import { RouteControllerMetrics } from '../controller/metrics.ts';
import { DEFAULTS } from '../controller/options.ts';
import { RouteController } from '../controller/route-controller.ts';
import { RealClock } from '../core/clock.ts';
import { errorMessage } from '../core/errors.ts';
import { KubeEventRecorder, KubeNodeStatusWriter, NodeInformer, type KubeClient } from '../kube/index.ts';
import { defaultIdentity, LeaderElector } from '../leader/leader-elector.ts';
import { KubeLeaseLock } from '../leader/lease-lock.ts';
import type { DaemonLogger } from '../log/logger.ts';
import { Health } from '../server/health.ts';
import { healthHandler, HttpEndpoint, metricsHandler } from '../server/http-server.ts';
import { idleReason, type DaemonFlags } from './flags.ts';
import { printErrors, type CliIO } from './io.ts';
import { prepare, refuseWrites } from './setup.ts';
import { settleHeapAfterFirstList } from './settle-heap.ts';
import { secureServing, type SecureServing } from './serving.ts';
import { Shutdown } from './shutdown.ts';
import { VERSION } from './version.ts';

function untilAborted(signal: AbortSignal): Promise<void> {
  return new Promise((resolve) => {
    if (signal.aborted) resolve();
    else signal.addEventListener('abort', () => resolve(), { once: true });
  });
}

interface Running {
  readonly flags: DaemonFlags;
  readonly logger: DaemonLogger;
  readonly io: CliIO;
  readonly kube: KubeClient;
  readonly controller: RouteController;
  readonly metrics: RouteControllerMetrics;
  readonly shutdown: Shutdown;
  readonly recorder: KubeEventRecorder | undefined;
}

/** Runs the controller until the stop, then drains it (R63); returns the exit code. */
async function runController(r: Running): Promise<number> {
  const { controller, shutdown, logger } = r;
  const running = controller.run(shutdown.stop.signal, shutdown.hardStop.signal);
  const first = await Promise.race([
    running.then(
      () => 'ended' as const,
      (err: unknown) => err,
    ),
    untilAborted(shutdown.stop.signal).then(() => 'stop' as const),
  ]);
  if (first !== 'stop') {
    logger.error(
      `Route controller stopped unexpectedly: ${first === 'ended' ? 'run returned' : errorMessage(first)}`,
    );
    shutdown.hardStop.abort();
    return 1;
  }
  const drained = await shutdown.drain(running);
  logger.info('Route controller stopped', { drained });
  return 0;
}

async function runElected(r: Running): Promise<number> {
  const { flags, logger, kube, shutdown, metrics, io } = r;
  const gauge = { name: flags.resourceName };
  metrics.leaderStatus.set(gauge, 0);
  const lock = new KubeLeaseLock({
    namespace: flags.resourceNamespace,
    name: flags.resourceName,
    identity: defaultIdentity(),
    // Lease calls skip the client-side limiter: a renewal queued behind node
    // patches could miss the renew deadline.
    transport: (path, o) =>
      kube.requestJson(path, { method: o.method, body: o.body, signal: o.signal, rateLimited: false }),
  });
  const elector = new LeaderElector({
    lock,
    leaseDurationMs: flags.leaseDurationMs,
    renewDeadlineMs: flags.renewDeadlineMs,
    retryPeriodMs: flags.retryPeriodMs,
    clock: new RealClock(),
    logger: logger.named('leaderelection'),
    onLeaderStatus: (leading) => metrics.leaderStatus.set(gauge, leading ? 1 : 0),
  });
  logger.info('Leader election identity', { identity: lock.identity, lease: lock.describe() });
  if (!(await elector.acquire(shutdown.stop.signal))) return 0;

  let lost = false;
  const renewStop = new AbortController();
  const renewing = elector.renew(renewStop.signal).then((result) => {
    if (result !== 'lost') return;
    // R62: abort everything in flight, write nothing more, exit 1.
    lost = true;
    shutdown.hardStop.abort(new Error('leaderelection lost'));
    shutdown.stop.abort(new Error('leaderelection lost'));
    r.recorder?.close().catch(() => {});
    logger.error('leaderelection lost');
    io.exit(1);
  });
  const code = await runController(r);
  renewStop.abort();
  await renewing;
  if (lost) return 1;
  // Released only after the controller stopped, so the next leader never overlaps us.
  await elector.release(AbortSignal.timeout(5_000));
  return code;
}

/** Sampling period (ms) of the nodejs_eventloop_lag_* histogram (prom-client default: 10). */
export const EVENT_LOOP_MONITORING_PRECISION_MS = 100;

export async function runDaemon(argv: readonly string[], io: CliIO): Promise<number> {
  const setup = await prepare('run', argv, io);
  if (typeof setup === 'number') return setup;
  const { flags, logger, kube, routes, lister } = setup;
  const clock = new RealClock();
  const registry = new Registry();
  // prom-client samples event-loop delay every 10 ms by default: ~200 wakeups a
  // second, the whole idle CPU of a daemon that otherwise waits on sockets
  // (measured: ~30 CPU-s/h of ~113 with 1,000 heartbeating nodes). Every
  // 100 ms still catches any stall long enough to matter to a controller.
  collectDefaultMetrics({
    register: registry,
    eventLoopMonitoringPrecision: EVENT_LOOP_MONITORING_PRECISION_MS,
  });
  const metrics = new RouteControllerMetrics(registry);
  const shutdown = new Shutdown({ clock, logger, exit: io.exit });
  const unsubscribe = io.onSignal((s) => shutdown.onSignal(s));
  logger.info(`Starting cloud-route-controller ${VERSION}`, {
    cloudProvider: flags.cloudProvider,
    clusterName: flags.clusterName,
    clusterCIDRs: flags.clusterCIDRs,
    mode: flags.watchBasedReconciliation ? 'watch' : 'periodic',
    dryRun: flags.dryRun,
  });

  let informer: NodeInformer | undefined;
  let recorder: KubeEventRecorder | undefined;
  let controller: RouteController | undefined;
  if (flags.routesEnabled && kube && routes) {
    informer = new NodeInformer({
      client: kube,
      listContentType: flags.kubeApiContentType,
      logger: logger.named('reflector'),
      metrics,
    });
    lister.bind(informer);
    recorder = flags.dryRun
      ? undefined
      : new KubeEventRecorder({ client: kube, logger: logger.named('event') });
    controller = new RouteController({
      routes,
      nodes: informer,
      statusWriter: flags.dryRun ? refuseWrites : new KubeNodeStatusWriter(kube),
      ...(recorder ? { recorder } : {}),
      logger: logger.named('route_controller'),
      clusterCIDRs: flags.clusterCIDRs,
      clusterName: flags.clusterName,
      watchBasedReconciliation: flags.watchBasedReconciliation,
      routeReconciliationPeriodMs: flags.routeReconciliationPeriodMs,
      routeResyncPeriodMs: flags.routeResyncPeriodMs,
      onReconcile: settleHeapAfterFirstList(),
      cloudWriteQPS: flags.cloudWriteQps,
      cloudWriteBurst: flags.cloudWriteBurst,
      ...(setup.provider?.writeLimit ? { cloudWriteLimit: setup.provider.writeLimit } : {}),
      ...(setup.provider?.routeTargetKeys ? { routeTargetKeys: setup.provider.routeTargetKeys } : {}),
      routeCache: flags.routeCache,
      minResyncPeriodMs: flags.minResyncPeriodMs,
      dryRun: flags.dryRun,
      metrics,
    });
  }
  const health = new Health({
    now: () => clock.now(),
    shuttingDown: () => shutdown.requested,
    controller: () => controller?.status(),
    stallAfterMs: DEFAULTS.cloudCallTimeoutMs + 60_000,
  });
  const serverLog = logger.named('server');
  const endpoints = [
    new HttpEndpoint('metrics', flags.metricsBindAddress, metricsHandler(registry), serverLog),
    new HttpEndpoint('health probes', flags.healthProbeBindAddress, healthHandler(health), serverLog),
  ];
  let secure: SecureServing | undefined;

  let code = 0;
  try {
    // The node list (seconds at 15,000 nodes) streams in while the endpoints come up.
    informer?.start();
    try {
      secure = await secureServing({
        flags,
        io,
        kube,
        clock,
        logger: serverLog,
        health: healthHandler(health),
        metrics: metricsHandler(registry),
      });
      if (secure) endpoints.push(secure.endpoint);
      for (const e of endpoints) await e.start();
    } catch (err) {
      printErrors(io, [errorMessage(err)]);
      return 1;
    }
    if (!controller || !informer || !kube) {
      logger.info(idleReason(flags) ?? 'Will not configure cloud provider routes');
      await untilAborted(shutdown.stop.signal);
      return 0;
    }
    if (flags.watchBasedReconciliation && flags.explicit.has('route-reconciliation-period')) {
      logger.info('--route-reconciliation-period is ignored in watch mode');
    }
    const r: Running = { flags, logger, io, kube, controller, metrics, shutdown, recorder };
    if (flags.leaderElect && !flags.dryRun) {
      code = await runElected(r);
    } else {
      if (flags.dryRun) logger.info('Leader election is off in dry-run mode');
      code = await runController(r);
    }
    return code;
  } finally {
    shutdown.stop.abort();
    await informer?.stop();
    await recorder?.close();
    for (const e of endpoints) await e.stop();
    secure?.close();
    kube?.close();
    unsubscribe();
    logger.info('Exiting');
  }
}
